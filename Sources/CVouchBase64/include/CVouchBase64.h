#ifndef VOUCH_CVOUCHBASE64_H
#define VOUCH_CVOUCHBASE64_H

#include <stddef.h>
#include <stdint.h>

/// Base64 decoding of whole 16-symbol blocks with SSSE3, for the long runs of receipts
/// (kilobytes of `receipt-data`) and token payloads; the caller decodes what is left, the
/// padding and the last partial group, and falls back to its own loop where this decodes
/// nothing.

/// The alphabet: RFC 4648 standard (`+` `/`) or URL-safe (`-` `_`).
typedef enum {
    VOUCH_BASE64_STANDARD = 0,
    VOUCH_BASE64_URL = 1,
} vouch_base64_alphabet;

/// Decodes the longest prefix of `input` made of whole 16-symbol blocks (`length` rounded down
/// to a multiple of 16; 0 when this CPU has no SSSE3 or this is not x86-64), 12 bytes per block
/// to `output`, and returns how many symbols it decoded. Each block is stored as 16 bytes, so
/// `output` must have room for 4 bytes past the decoded bytes. Sets `*invalid` to nonzero when
/// a decoded symbol is outside the alphabet (`=` included); then the output is meaningless.
size_t vouch_base64_decode_blocks(const uint8_t *input, size_t length, uint8_t *output,
                                  vouch_base64_alphabet alphabet, int *invalid);

#endif
