// Fixed-key ECDSA P-256 verification with OpenSSL's public BN/EC API.
//
// OpenSSL 3.0 marks part of that API deprecated (EC_GROUP_precompute_mult,
// EC_POINT_get_Jprojective_coordinates_GFp) but ships it; silence the warnings here, and
// verify through EVP when a build of OpenSSL leaves the deprecated API out.
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include "CVouchECDSA.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <openssl/opensslconf.h>
#include <openssl/params.h>

#ifndef OPENSSL_NO_DEPRECATED_3_0

struct vouch_p256_key {
    vouch_p256_mode mode;
    /// P-256 as OpenSSL makes it: u1·G with its built-in table.
    EC_GROUP *standard;
    /// P-256 with the key's point Q as generator and a table precomputed for it: u2·Q.
    EC_GROUP *fixed;
    BIGNUM *order;      // n
    BIGNUM *order_minus_2; // n − 2: s⁻¹ = s^(n−2) mod n, n prime
    BIGNUM *prime;      // p
    BN_MONT_CTX *montgomery; // modulo n
    BN_MONT_CTX *field;      // modulo p: r·Z² without a division
};

/// Signatures per pass: bounds the scratch space; one inversion modulo n per pass.
enum { pass_limit = 128 };

void vouch_p256_key_free(vouch_p256_key *key) {
    if (key == NULL) return;
    EC_GROUP_free(key->standard);
    EC_GROUP_free(key->fixed);
    BN_free(key->order);
    BN_free(key->order_minus_2);
    BN_free(key->prime);
    BN_MONT_CTX_free(key->montgomery);
    BN_MONT_CTX_free(key->field);
    free(key);
}

vouch_p256_mode vouch_p256_key_mode(const vouch_p256_key *key) { return key->mode; }

/// R = u1·G + u2·Q, each term from its own fixed-base table.
static int multiply(const vouch_p256_key *key, EC_POINT *result, EC_POINT *term, const BIGNUM *u1, const BIGNUM *u2,
                    BN_CTX *ctx) {
    return EC_POINT_mul(key->standard, result, u1, NULL, NULL, ctx) == 1
        && EC_POINT_mul(key->fixed, term, u2, NULL, NULL, ctx) == 1
        && EC_POINT_add(key->standard, result, result, term, ctx) == 1;
}

/// Whether the coordinates OpenSSL hands out for a sum are Jacobian (x = X/Z²): checked on
/// two sums against the affine x, as the group's method decides how points are stored.
static int jacobian_coordinates_hold(const vouch_p256_key *key, BN_CTX *ctx) {
    int holds = 0;
    BN_CTX_start(ctx);
    BIGNUM *a = BN_CTX_get(ctx), *b = BN_CTX_get(ctx), *x = BN_CTX_get(ctx);
    BIGNUM *jx = BN_CTX_get(ctx), *jy = BN_CTX_get(ctx), *jz = BN_CTX_get(ctx), *t = BN_CTX_get(ctx);
    EC_POINT *sum = EC_POINT_new(key->standard), *term = EC_POINT_new(key->standard);
    if (t == NULL || sum == NULL || term == NULL) goto done;
    for (unsigned long i = 1; i <= 2; i++) {
        if (!BN_set_word(a, i) || !BN_set_word(b, i + 2)) goto done;
        if (!multiply(key, sum, term, a, b, ctx)) goto done;
        if (!EC_POINT_get_affine_coordinates(key->standard, sum, x, NULL, ctx)) goto done;
        if (!EC_POINT_get_Jprojective_coordinates_GFp(key->standard, sum, jx, jy, jz, ctx)) goto done;
        if (BN_is_one(jz)) goto done; // nothing learnt: treat as not Jacobian
        if (!BN_mod_sqr(t, jz, key->prime, ctx) || !BN_mod_mul(t, t, x, key->prime, ctx)) goto done;
        if (BN_cmp(t, jx) != 0) goto done;
    }
    holds = 1;
done:
    EC_POINT_free(sum);
    EC_POINT_free(term);
    BN_CTX_end(ctx);
    return holds;
}

vouch_p256_key *vouch_p256_key_new(const uint8_t *point, size_t length) {
    vouch_p256_key *key = calloc(1, sizeof *key);
    BN_CTX *ctx = BN_CTX_new();
    EC_POINT *q = NULL;
    if (key == NULL || ctx == NULL) goto fail;
    key->standard = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1);
    if (key->standard == NULL) goto fail;
    q = EC_POINT_new(key->standard);
    if (q == NULL || EC_POINT_oct2point(key->standard, q, point, length, ctx) != 1) goto fail;
    // oct2point checks the point is on the curve; P-256 has cofactor 1, so any point but
    // infinity has order n.
    if (EC_POINT_is_at_infinity(key->standard, q)) goto fail;
    key->order = BN_dup(EC_GROUP_get0_order(key->standard));
    key->order_minus_2 = BN_dup(key->order);
    key->prime = BN_new();
    key->montgomery = BN_MONT_CTX_new();
    key->field = BN_MONT_CTX_new();
    if (key->order == NULL || key->order_minus_2 == NULL || key->prime == NULL || key->montgomery == NULL
        || key->field == NULL)
        goto fail;
    if (!BN_sub_word(key->order_minus_2, 2)) goto fail;
    if (!EC_GROUP_get_curve(key->standard, key->prime, NULL, NULL, ctx)) goto fail;
    if (!BN_MONT_CTX_set(key->montgomery, key->order, ctx)) goto fail;
    if (!BN_MONT_CTX_set(key->field, key->prime, ctx)) goto fail;
    key->fixed = EC_GROUP_dup(key->standard);
    if (key->fixed == NULL) goto fail;
    if (!EC_GROUP_set_generator(key->fixed, q, key->order, BN_value_one())) goto fail;
    if (!EC_GROUP_precompute_mult(key->fixed, ctx) || !EC_GROUP_have_precompute_mult(key->fixed)) goto fail;
    key->mode = jacobian_coordinates_hold(key, ctx) ? VOUCH_P256_PRECOMPUTED_JACOBIAN : VOUCH_P256_PRECOMPUTED_AFFINE;
    EC_POINT_free(q);
    BN_CTX_free(ctx);
    ERR_clear_error();
    return key;
fail:
    EC_POINT_free(q);
    BN_CTX_free(ctx);
    vouch_p256_key_free(key);
    ERR_clear_error();
    return NULL;
}

/// Whether R (not infinity) has x(R) ≡ r (mod n). x < p < 2n, so x mod n = r means x = r or
/// x = r + n, the latter only when r + n < p. Jacobian: x = X/Z², so compare X with r·Z²,
/// computed modulo p in Montgomery form (every operand is below p: X and Z as read back,
/// r < n, and r + n only once it is below p).
static int x_matches(const vouch_p256_key *key, const EC_POINT *point, const BIGNUM *r, BN_CTX *ctx, int *matches) {
    int ok = 0;
    BN_CTX_start(ctx);
    BIGNUM *x = BN_CTX_get(ctx), *z = BN_CTX_get(ctx);
    BIGNUM *zz = BN_CTX_get(ctx), *t = BN_CTX_get(ctx);
    if (t == NULL) goto done;
    if (key->mode == VOUCH_P256_PRECOMPUTED_AFFINE) {
        if (!EC_POINT_get_affine_coordinates(key->standard, point, x, NULL, ctx)) goto done;
        if (!BN_nnmod(t, x, key->order, ctx)) goto done;
        *matches = BN_cmp(t, r) == 0;
        ok = 1;
        goto done;
    }
    // Y is not needed: OpenSSL decodes only the coordinates asked for.
    if (!EC_POINT_get_Jprojective_coordinates_GFp(key->standard, point, x, NULL, z, ctx)) goto done;
    // Z̃ = Z·R; Z̃·Z̃·R⁻¹ = Z²·R (the Montgomery form of Z²); then r·Z²R·R⁻¹ = r·Z², plain.
    if (!BN_to_montgomery(zz, z, key->field, ctx) || !BN_mod_mul_montgomery(zz, zz, zz, key->field, ctx)) goto done;
    if (!BN_mod_mul_montgomery(t, r, zz, key->field, ctx)) goto done;
    if (BN_cmp(t, x) == 0) {
        *matches = 1;
        ok = 1;
        goto done;
    }
    if (!BN_add(t, r, key->order)) goto done;
    if (BN_cmp(t, key->prime) >= 0) {
        *matches = 0;
        ok = 1;
        goto done;
    }
    if (!BN_mod_mul_montgomery(t, t, zz, key->field, ctx)) goto done;
    *matches = BN_cmp(t, x) == 0;
    ok = 1;
done:
    BN_CTX_end(ctx);
    return ok;
}

/// One pass of at most `pass_limit` signatures.
static int verify_pass(const vouch_p256_key *key, const uint8_t *digests, const uint8_t *signatures, size_t count,
                       uint8_t *results, BN_CTX *ctx, EC_POINT *sum, EC_POINT *term) {
    int ok = 0;
    BIGNUM *r[pass_limit], *s[pass_limit], *prefix[pass_limit];
    int in_range[pass_limit];
    BN_CTX_start(ctx);
    BIGNUM *accumulator = BN_CTX_get(ctx), *inverse = BN_CTX_get(ctx);
    BIGNUM *e = BN_CTX_get(ctx), *u1 = BN_CTX_get(ctx), *u2 = BN_CTX_get(ctx);
    if (u2 == NULL) goto done;
    size_t valid = 0;
    for (size_t i = 0; i < count; i++) {
        results[i] = 0;
        r[i] = BN_CTX_get(ctx);
        s[i] = BN_CTX_get(ctx);
        prefix[i] = BN_CTX_get(ctx);
        if (prefix[i] == NULL) goto done;
        if (!BN_bin2bn(signatures + 64 * i, 32, r[i]) || !BN_bin2bn(signatures + 64 * i + 32, 32, s[i])) goto done;
        // As OpenSSL's verify: 0 < r < n and 0 < s < n, else the signature is invalid. Only
        // such s, all invertible modulo the prime n, enter the shared inversion.
        in_range[i] = !BN_is_zero(r[i]) && BN_cmp(r[i], key->order) < 0
                   && !BN_is_zero(s[i]) && BN_cmp(s[i], key->order) < 0;
        if (in_range[i]) valid++;
    }
    if (valid == 0) {
        ok = 1;
        goto done;
    }
    // Montgomery's trick in the Montgomery domain (x̃ = xR mod n): prefix[i] is the product
    // of the s̃ before i; one inversion of the whole product yields every s⁻¹.
    if (!BN_to_montgomery(accumulator, BN_value_one(), key->montgomery, ctx)) goto done;
    for (size_t i = 0; i < count; i++) {
        if (!in_range[i]) continue;
        if (!BN_copy(prefix[i], accumulator)) goto done;
        if (!BN_to_montgomery(s[i], s[i], key->montgomery, ctx)) goto done;
        if (!BN_mod_mul_montgomery(accumulator, accumulator, s[i], key->montgomery, ctx)) goto done;
    }
    // (P̃)⁻¹ = P⁻¹R⁻¹; two conversions make it P⁻¹R, the Montgomery form of P⁻¹. The inverse
    // is P̃^(n−2) (Fermat: n is prime and P̃, a product of values in (0, n), is not 0 mod n),
    // an exponentiation on the key's Montgomery context: OpenSSL's BN_mod_inverse, a binary
    // extended gcd on generic big numbers, takes nearly twice as long, and a pass of one
    // signature (a request verified alone) pays it whole.
    if (!BN_mod_exp_mont(inverse, accumulator, key->order_minus_2, key->order, ctx, key->montgomery)) goto done;
    if (!BN_to_montgomery(inverse, inverse, key->montgomery, ctx)) goto done;
    if (!BN_to_montgomery(inverse, inverse, key->montgomery, ctx)) goto done;
    for (size_t i = count; i-- > 0;) {
        if (!in_range[i]) continue;
        // w̃ = s̃⁻¹ = P̃⁻¹ · (product before i); then drop s̃ from the running inverse.
        if (!BN_mod_mul_montgomery(prefix[i], inverse, prefix[i], key->montgomery, ctx)) goto done;
        if (!BN_mod_mul_montgomery(inverse, inverse, s[i], key->montgomery, ctx)) goto done;
    }
    for (size_t i = 0; i < count; i++) {
        if (!in_range[i]) continue;
        // e from the 32-byte digest (P-256: no truncation), below 2^256 < 2n.
        if (!BN_bin2bn(digests + 32 * i, 32, e)) goto done;
        if (BN_cmp(e, key->order) >= 0 && !BN_usub(e, e, key->order)) goto done;
        // A Montgomery product of a plain value with w̃ is plain: u1 = e·w, u2 = r·w mod n.
        if (!BN_mod_mul_montgomery(u1, e, prefix[i], key->montgomery, ctx)) goto done;
        if (!BN_mod_mul_montgomery(u2, r[i], prefix[i], key->montgomery, ctx)) goto done;
        if (!multiply(key, sum, term, u1, u2, ctx)) goto done;
        if (EC_POINT_is_at_infinity(key->standard, sum)) continue;
        int matches = 0;
        if (!x_matches(key, sum, r[i], ctx, &matches)) goto done;
        results[i] = (uint8_t)matches;
    }
    ok = 1;
done:
    BN_CTX_end(ctx);
    return ok;
}

int vouch_p256_verify(const vouch_p256_key *key, const uint8_t *digests, const uint8_t *signatures, size_t count,
                      uint8_t *results) {
    BN_CTX *ctx = BN_CTX_new();
    EC_POINT *sum = EC_POINT_new(key->standard), *term = EC_POINT_new(key->fixed);
    int ok = ctx != NULL && sum != NULL && term != NULL;
    for (size_t done = 0; ok && done < count;) {
        size_t pass = count - done < pass_limit ? count - done : pass_limit;
        ok = verify_pass(key, digests + 32 * done, signatures + 64 * done, pass, results + done, ctx, sum, term);
        done += pass;
    }
    EC_POINT_free(sum);
    EC_POINT_free(term);
    BN_CTX_free(ctx);
    if (!ok) ERR_clear_error();
    return ok;
}

#else // OPENSSL_NO_DEPRECATED_3_0: the generic path through EVP, one signature at a time.

struct vouch_p256_key {
    EVP_PKEY *pkey;
};

void vouch_p256_key_free(vouch_p256_key *key) {
    if (key == NULL) return;
    EVP_PKEY_free(key->pkey);
    free(key);
}

vouch_p256_mode vouch_p256_key_mode(const vouch_p256_key *key) {
    (void)key;
    return VOUCH_P256_GENERIC;
}

vouch_p256_key *vouch_p256_key_new(const uint8_t *point, size_t length) {
    vouch_p256_key *key = calloc(1, sizeof *key);
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_PKEY_PARAM_GROUP_NAME, (char *)"prime256v1", 0),
        OSSL_PARAM_construct_octet_string(OSSL_PKEY_PARAM_PUB_KEY, (void *)point, length),
        OSSL_PARAM_construct_end(),
    };
    int ok = key != NULL && ctx != NULL && EVP_PKEY_fromdata_init(ctx) == 1
          && EVP_PKEY_fromdata(ctx, &key->pkey, EVP_PKEY_PUBLIC_KEY, params) == 1;
    EVP_PKEY_CTX_free(ctx);
    ERR_clear_error();
    if (!ok) {
        vouch_p256_key_free(key);
        return NULL;
    }
    return key;
}

int vouch_p256_verify(const vouch_p256_key *key, const uint8_t *digests, const uint8_t *signatures, size_t count,
                      uint8_t *results) {
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new(key->pkey, NULL);
    int ok = ctx != NULL && EVP_PKEY_verify_init(ctx) == 1;
    for (size_t i = 0; ok && i < count; i++) {
        results[i] = 0;
        ECDSA_SIG *signature = ECDSA_SIG_new();
        BIGNUM *r = BN_bin2bn(signatures + 64 * i, 32, NULL), *s = BN_bin2bn(signatures + 64 * i + 32, 32, NULL);
        // set0 takes r and s only when it succeeds.
        if (signature == NULL || r == NULL || s == NULL || ECDSA_SIG_set0(signature, r, s) != 1) {
            BN_free(r);
            BN_free(s);
            ECDSA_SIG_free(signature);
            ok = 0;
            break;
        }
        unsigned char *der = NULL;
        int der_length = i2d_ECDSA_SIG(signature, &der);
        ECDSA_SIG_free(signature);
        if (der_length <= 0) {
            ok = 0;
            break;
        }
        results[i] = EVP_PKEY_verify(ctx, der, (size_t)der_length, digests + 32 * i, 32) == 1;
        OPENSSL_free(der);
    }
    EVP_PKEY_CTX_free(ctx);
    ERR_clear_error();
    return ok;
}

#endif
