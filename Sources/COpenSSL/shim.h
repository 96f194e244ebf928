#ifndef VOUCH_COPENSSL_SHIM_H
#define VOUCH_COPENSSL_SHIM_H

#include <openssl/asn1.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

// Function-like macros are invisible to Swift: each is wrapped here, and nothing else.

static inline STACK_OF(X509) *vouch_sk_X509_new_null(void) { return sk_X509_new_null(); }
static inline int vouch_sk_X509_push(STACK_OF(X509) *stack, X509 *cert) { return sk_X509_push(stack, cert); }
static inline int vouch_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
static inline X509 *vouch_sk_X509_value(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
/// Frees the stack only; the certificates stay owned by their Swift holders.
static inline void vouch_sk_X509_free(STACK_OF(X509) *stack) { sk_X509_free(stack); }
static inline void vouch_sk_X509_pop_free(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }
static inline void vouch_OPENSSL_free(void *pointer) { OPENSSL_free(pointer); }

// Minting

/// Borrows the memory BIO's buffer: `*data` stays owned by the BIO and is valid until it changes.
static inline long vouch_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }

#endif
