import AppAttest

private let verifier = AttestationVerifier(appIDs: ["1234567890.com.example.myapp", "V8H6LQ9448.io.uebelacker.AppAttestExample"],
                                           rootPEM: appleAppAttestationRootCA, acceptsDevelopment: true)!
private let keyId = [UInt8](repeating: 0, count: 32)
private let clientDataHash = [UInt8](repeating: 1, count: 32)
/// 2026-04-21T18:13:12Z: inside the validity of the Apple documentation vector's leaf (a seed).
private let at = 1_776_795_192

/// The App Attest parsers (`AppAttest`): the strict CBOR decoder, authData, the leaf's nonce extension,
/// and the whole verifier on an attestation object as an app would send it. Beyond not crashing: a whole
/// decode succeeds exactly when a prefix decode consumes every byte; a prefix never ends past the input;
/// the nonce is read only from a DER value that holds it and its three headers exactly; and no input is
/// ever accepted for the all-zero key id (that would need a SHA-256 preimage), even the real objects of
/// the seed corpus at a time their certificates are valid.
func fuzzAttestation(_ input: UnsafeRawBufferPointer) {
    let bytes = [UInt8](input)

    let decoder = CBORDecoder()
    let whole = decoder.decode(bytes)
    switch decoder.decodePrefix(bytes, from: 0) {
    case .success(let (value, end)):
        fuzzRequire(end <= bytes.count, "a prefix ends past the input")
        if case .success(let decoded) = whole {
            fuzzRequire(end == bytes.count && decoded == value, "whole and prefix decodes disagree")
        } else {
            fuzzRequire(end < bytes.count, "a prefix spans the input but the whole decode failed")
        }
    case .failure:
        if case .success = whole { fuzzRequire(false, "a whole decode succeeded where the prefix failed") }
    }

    _ = AuthenticatorData.parse(bytes)

    if let nonce = appAttestNonce(extensionValue: bytes) {
        fuzzRequire(nonce.count + 6 <= bytes.count, "a nonce longer than its DER value allows")
    }

    if case .success = verifier.verify(attestation: bytes, keyId: keyId, clientDataHash: clientDataHash, at: at) {
        fuzzRequire(false, "an attestation accepted for the all-zero key id")
    }
    return
}
