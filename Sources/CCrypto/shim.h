// OpenSSL 3 libcrypto for AnonAuth and the attestation verifiers: HMAC-SHA256, SHA-256, CSPRNG, constant-time compare.
// Only one-shot functions and the inline helpers below are used, so no macro (OPENSSL_free & co.)
// needs a shim.
#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H
#include <string.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/objects.h>
#include <openssl/core_names.h>

// HMAC-SHA256 (RFC 2104) with the key's two padded blocks hashed once: a keyed state is the SHA-256
// state after K xor ipad and the one after K xor opad, copied for each message. Every token check
// signs with the same key, and OpenSSL's one-shot HMAC() fetches the digest by name and hashes both
// key blocks again on every call. SHA256_Init/Update/Final are deprecated in OpenSSL 3 but still part
// of its API; they are the one way to keep a hash state half-way without allocating.
typedef struct {
    SHA256_CTX inner;
    SHA256_CTX outer;
} ccrypto_hmac_sha256_key;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static inline void ccrypto_hmac_sha256_key_init(ccrypto_hmac_sha256_key *state, const unsigned char *key,
                                                size_t key_length) {
    unsigned char block[SHA256_CBLOCK];
    unsigned char pad[SHA256_CBLOCK];
    memset(block, 0, sizeof block);
    if (key_length > SHA256_CBLOCK) {
        SHA256(key, key_length, block);
    } else if (key_length > 0) {
        memcpy(block, key, key_length);
    }
    for (size_t i = 0; i < SHA256_CBLOCK; i++) pad[i] = block[i] ^ 0x36;
    SHA256_Init(&state->inner);
    SHA256_Update(&state->inner, pad, SHA256_CBLOCK);
    for (size_t i = 0; i < SHA256_CBLOCK; i++) pad[i] = block[i] ^ 0x5c;
    SHA256_Init(&state->outer);
    SHA256_Update(&state->outer, pad, SHA256_CBLOCK);
    OPENSSL_cleanse(block, sizeof block);
    OPENSSL_cleanse(pad, sizeof pad);
}

static inline void ccrypto_hmac_sha256(const ccrypto_hmac_sha256_key *state, const unsigned char *message,
                                       size_t message_length, unsigned char *digest /* 32 bytes */) {
    SHA256_CTX context = state->inner;
    unsigned char inner[SHA256_DIGEST_LENGTH];
    SHA256_Update(&context, message, message_length);
    SHA256_Final(inner, &context);
    context = state->outer;
    SHA256_Update(&context, inner, sizeof inner);
    SHA256_Final(digest, &context);
    OPENSSL_cleanse(&context, sizeof context);
    OPENSSL_cleanse(inner, sizeof inner);
}
#pragma GCC diagnostic pop

// Attestation chains (PriceCrypto's X509Certificate, for AttestationPKI). STACK_OF(X509) and its sk_X509_* functions are macros, which Swift
// does not import, so the chain check is one shim: leaf, then the untrusted intermediates, against one trust
// anchor, at a given time (never the clock). `tolerate` (CCRYPTO_TOLERATE_*) lets a verify callback accept
// what an attestation format's real chains break: Android's pinned root certificate may be expired (its key
// is what is trusted), its batch certificates may lack the CA flag, keyCertSign and a path length that
// fits, and its leaf's validity is set by the device's clock. Returns X509_V_OK (0)
// or the X509_V_ERR_* code, -1 when the context cannot be set up; `*chain_length` is the length of the chain
// OpenSSL built, anchor included, or 0 when it is not leaf, intermediates, anchor in the order given.
#define CCRYPTO_TOLERATE_ANCHOR_VALIDITY 1
#define CCRYPTO_TOLERATE_ISSUER_CA_FLAGS 2
#define CCRYPTO_TOLERATE_LEAF_VALIDITY 4

static inline int ccrypto_x509_tolerant_callback(int ok, X509_STORE_CTX *context) {
    if (ok) return ok;
    const int *tolerate = (const int *)X509_STORE_CTX_get_app_data(context);
    int flags = tolerate == NULL ? 0 : *tolerate;
    int error = X509_STORE_CTX_get_error(context);
    int depth = X509_STORE_CTX_get_error_depth(context);
    STACK_OF(X509) *chain = X509_STORE_CTX_get0_chain(context);
    int top = chain == NULL ? -1 : sk_X509_num(chain) - 1;
    if ((flags & CCRYPTO_TOLERATE_ANCHOR_VALIDITY) && depth == top && top > 0
        && (error == X509_V_ERR_CERT_HAS_EXPIRED || error == X509_V_ERR_CERT_NOT_YET_VALID)) return 1;
    if ((flags & CCRYPTO_TOLERATE_ISSUER_CA_FLAGS) && depth > 0
        && (error == X509_V_ERR_INVALID_CA || error == X509_V_ERR_KEYUSAGE_NO_CERTSIGN
            || error == X509_V_ERR_PATH_LENGTH_EXCEEDED)) return 1;
    if ((flags & CCRYPTO_TOLERATE_LEAF_VALIDITY) && depth == 0
        && (error == X509_V_ERR_CERT_HAS_EXPIRED || error == X509_V_ERR_CERT_NOT_YET_VALID)) return 1;
    return 0;
}

static inline int ccrypto_x509_verify_at(X509 *leaf, X509 *const *intermediates, int intermediate_count,
                                         X509 *root, long long at, int tolerate, int *chain_length) {
    int result = -1;
    *chain_length = 0;
    X509_STORE *store = X509_STORE_new();
    STACK_OF(X509) *untrusted = sk_X509_new_null();
    X509_STORE_CTX *context = X509_STORE_CTX_new();
    if (store == NULL || untrusted == NULL || context == NULL) goto done;
    if (X509_STORE_add_cert(store, root) != 1) goto done;
    for (int i = 0; i < intermediate_count; i++) {
        if (!sk_X509_push(untrusted, intermediates[i])) goto done;
    }
    if (X509_STORE_CTX_init(context, store, leaf, untrusted) != 1) goto done;
    X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(context), (time_t)at);
    if (tolerate != 0) {
        X509_STORE_CTX_set_app_data(context, &tolerate);
        X509_STORE_CTX_set_verify_cb(context, ccrypto_x509_tolerant_callback);
    }
    if (X509_verify_cert(context) == 1) {
        result = X509_V_OK;
        STACK_OF(X509) *chain = X509_STORE_CTX_get0_chain(context);
        *chain_length = chain == NULL ? 0 : sk_X509_num(chain);
        // The chain OpenSSL built must be the one sent, in its order: 0 when it differs.
        for (int i = 0; i < intermediate_count && *chain_length == intermediate_count + 2; i++) {
            if (X509_cmp(sk_X509_value(chain, i + 1), intermediates[i]) != 0) *chain_length = 0;
        }
    } else {
        result = X509_STORE_CTX_get_error(context);
        if (result == X509_V_OK) result = X509_V_ERR_UNSPECIFIED;
    }
done:
    X509_STORE_CTX_free(context);
    sk_X509_free(untrusted);  // the certificates stay the caller's
    X509_STORE_free(store);
    return result;
}

// The name of an EC key's group ("prime256v1" for P-256) into `name`; 0 when the key is not EC.
static inline int ccrypto_pkey_ec_group(const EVP_PKEY *key, char *name, size_t capacity) {
    size_t length = 0;
    if (EVP_PKEY_get_base_id(key) != EVP_PKEY_EC) return 0;
    return EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, name, capacity, &length);
}
#endif
