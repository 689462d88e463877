// OpenSSL 3 libcrypto for AnonAuth: HMAC-SHA256, SHA-256, CSPRNG, constant-time compare.
// Only one-shot functions are used, so no macro (OPENSSL_free & co.) needs a shim.
#ifndef CCRYPTO_SHIM_H
#define CCRYPTO_SHIM_H
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <openssl/rand.h>
#endif
