#ifndef VOUCH_BENCH_OPENSSL_SHIM_H
#define VOUCH_BENCH_OPENSSL_SHIM_H

// OpenSSL for the benchmark's reference rates (SHA-256 and `EVP_PKEY_verify` on a prepared
// key and context), which every figure is divided by. The libraries are measured only through
// their public API.

#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

// glibc's mallinfo2, for the bytes a ledger holds on the heap (freed memory an allocator keeps
// for reuse does not count, as it would in the resident set).
#include <malloc.h>

#endif
