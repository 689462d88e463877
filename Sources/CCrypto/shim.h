// OpenSSL 3 libcrypto for AnonAuth: HMAC-SHA256, SHA-256, CSPRNG, constant-time compare.
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
#endif
