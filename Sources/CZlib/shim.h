#ifndef VOUCH_CZLIB_SHIM_H
#define VOUCH_CZLIB_SHIM_H

#include <zlib.h>

// inflateInit2 is a function-like macro, invisible to Swift.
static inline int vouch_inflateInit2(z_stream *stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

#endif
