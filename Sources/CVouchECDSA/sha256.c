// SHA-256 midstates with OpenSSL's low-level SHA-256 API: a copied SHA256_CTX is a plain
// struct on the stack, where EVP_MD_CTX_copy_ex allocates a context and the provider's state
// for every message. Deprecated in OpenSSL 3.0 but shipped; without it, no midstate is made.
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include "CVouchECDSA.h"

#include <stdlib.h>

#include <openssl/opensslconf.h>
#include <openssl/sha.h>

#ifndef OPENSSL_NO_DEPRECATED_3_0

struct vouch_sha256_midstate {
    SHA256_CTX context;
};

vouch_sha256_midstate *vouch_sha256_midstate_new(const uint8_t *prefix, size_t length) {
    vouch_sha256_midstate *midstate = malloc(sizeof *midstate);
    if (midstate == NULL) return NULL;
    if (SHA256_Init(&midstate->context) != 1 || SHA256_Update(&midstate->context, prefix, length) != 1) {
        free(midstate);
        return NULL;
    }
    return midstate;
}

void vouch_sha256_midstate_free(vouch_sha256_midstate *midstate) { free(midstate); }

int vouch_sha256_midstate_finish(const vouch_sha256_midstate *midstate, const uint8_t *rest, size_t length,
                                 uint8_t *digest) {
    SHA256_CTX context = midstate->context;
    return SHA256_Update(&context, rest, length) == 1 && SHA256_Final(digest, &context) == 1;
}

int vouch_sha256(const uint8_t *message, size_t length, uint8_t *digest) {
    SHA256_CTX context;
    return SHA256_Init(&context) == 1 && SHA256_Update(&context, message, length) == 1 &&
           SHA256_Final(digest, &context) == 1;
}

#else // no low-level SHA-256: no midstate, and the caller hashes each message whole.

vouch_sha256_midstate *vouch_sha256_midstate_new(const uint8_t *prefix, size_t length) {
    (void)prefix;
    (void)length;
    return NULL;
}

void vouch_sha256_midstate_free(vouch_sha256_midstate *midstate) { (void)midstate; }

int vouch_sha256_midstate_finish(const vouch_sha256_midstate *midstate, const uint8_t *rest, size_t length,
                                 uint8_t *digest) {
    (void)midstate;
    (void)rest;
    (void)length;
    (void)digest;
    return 0;
}

int vouch_sha256(const uint8_t *message, size_t length, uint8_t *digest) {
    return SHA256(message, length, digest) != NULL;
}

#endif
