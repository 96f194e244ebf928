#ifndef VOUCH_CZLIB_SHIM_H
#define VOUCH_CZLIB_SHIM_H

#include <zlib.h>

// inflateInit2 and deflateInit2 are function-like macros, invisible to Swift.
static inline int vouch_inflateInit2(z_stream *stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

static inline int vouch_deflateInit2(z_stream *stream, int level, int windowBits, int memLevel, int strategy) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, memLevel, strategy);
}

#endif
