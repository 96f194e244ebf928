#ifndef VOUCH_CVOUCHECDSA_H
#define VOUCH_CVOUCHECDSA_H

#include <stddef.h>
#include <stdint.h>

/// ECDSA P-256 verification for one fixed public key, many signatures.
///
/// A key gets its own copy of the P-256 group whose generator is the key's point, with
/// OpenSSL's fixed-base table precomputed for it, so u2·Q costs what u1·G costs. A chunk of
/// signatures shares one inversion modulo n (Montgomery's trick), and x(R) is compared with r
/// in Jacobian coordinates. Only OpenSSL's public BN/EC API does the arithmetic.
typedef struct vouch_p256_key vouch_p256_key;

/// How `vouch_p256_key_new` computes.
typedef enum {
    /// Fixed-base tables for G and Q, batched inversion, Jacobian comparison.
    VOUCH_P256_PRECOMPUTED_JACOBIAN = 1,
    /// The same, comparing affine x (the Jacobian coordinates read back did not check out).
    VOUCH_P256_PRECOMPUTED_AFFINE = 2,
    /// OpenSSL built without the deprecated EC API: one `EVP_PKEY_verify` per signature.
    VOUCH_P256_GENERIC = 3,
} vouch_p256_mode;

/// Builds the key from its encoded point (X9.62: 0x04‖X‖Y, or compressed); NULL when the
/// bytes are not a point on P-256 other than infinity, or OpenSSL fails. Costs a table build (tens of milliseconds).
vouch_p256_key *vouch_p256_key_new(const uint8_t *point, size_t length);

void vouch_p256_key_free(vouch_p256_key *key);

vouch_p256_mode vouch_p256_key_mode(const vouch_p256_key *key);

/// Verifies `count` ES256 signatures made with `key`: `digests` holds `count` SHA-256
/// digests (32 bytes each), `signatures` `count` raw `r‖s` (64 bytes each, big-endian).
/// Writes 1 (valid) or 0 (invalid) to each of `results`, with the verdict OpenSSL's
/// ECDSA verification gives. Returns 1, or 0 when OpenSSL failed (memory): then no
/// verdict may be used. Safe to call from many threads at once with one key.
int vouch_p256_verify(const vouch_p256_key *key, const uint8_t *digests, const uint8_t *signatures,
                      size_t count, uint8_t *results);

/// SHA-256 stopped after a prefix, to hash many messages that start with it: a token's
/// signing input starts with its header segment, the same for every token of a signer.
typedef struct vouch_sha256_midstate vouch_sha256_midstate;

/// The state after hashing `prefix`; NULL when OpenSSL is built without its low-level SHA-256
/// API (deprecated in 3.0) or memory runs out.
vouch_sha256_midstate *vouch_sha256_midstate_new(const uint8_t *prefix, size_t length);

void vouch_sha256_midstate_free(vouch_sha256_midstate *midstate);

/// Writes SHA-256(prefix ‖ `rest`) to `digest` (32 bytes) and returns 1, or 0 when OpenSSL
/// fails. Works on a copy of the state on the stack: no allocation, and safe from many threads
/// at once with one midstate.
int vouch_sha256_midstate_finish(const vouch_sha256_midstate *midstate, const uint8_t *rest, size_t length,
                                 uint8_t *digest);

/// Writes SHA-256(`message`) to `digest` (32 bytes) and returns 1, or 0 when OpenSSL fails. The
/// low-level API on the stack where OpenSSL has it: its one-shot `SHA256()` fetches the digest
/// from the provider anew on every call, several times the cost of hashing a short message.
int vouch_sha256(const uint8_t *message, size_t length, uint8_t *digest);

#endif
