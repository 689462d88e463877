internal import CCrypto

/// One X.509 certificate as libcrypto parsed it from DER, freed with the value: what needs OpenSSL of a
/// certificate (its extensions by OID, its public key, whether OpenSSL knows its algorithms, and the path
/// check). AttestationPKI's `Certificate` reads the fields it must read strictly from the DER itself.
public final class X509Certificate: @unchecked Sendable {
    // An X509 *; never mutated after init, and OpenSSL's read functions are safe to call concurrently.
    let pointer: OpaquePointer

    /// nil unless `der` is exactly one certificate (OpenSSL reads no byte past it).
    public init?(der: [UInt8]) {
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let certificate = d2i_X509(nil, &cursor, buffer.count)
            guard let certificate, cursor == buffer.baseAddress.map({ $0 + buffer.count }) else {
                X509_free(certificate)
                return nil
            }
            return certificate
        }
        guard let parsed else { return nil }
        self.pointer = parsed
    }

    deinit { X509_free(pointer) }

    /// Whether OpenSSL here can use this certificate's public key and verify its signature: false for an
    /// algorithm it does not know (ML-DSA on OpenSSL 3.0), which would otherwise surface as a bad signature.
    public var algorithmsAreSupported: Bool {
        guard X509_get0_pubkey(pointer) != nil else { return false }
        var digest: Int32 = 0
        var key: Int32 = 0
        return OBJ_find_sigid_algs(X509_get_signature_nid(pointer), &digest, &key) == 1 && key != NID_undef
    }

    /// The DER contents of every extension `oid` (dotted text) the certificate carries, in order.
    public func extensionValues(oid: String) -> [[UInt8]] {
        guard let object = OBJ_txt2obj(oid, 1) else { return [] }
        defer { ASN1_OBJECT_free(object) }
        var values: [[UInt8]] = []
        var index = X509_get_ext_by_OBJ(pointer, object, -1)
        while index >= 0 {
            guard let extensionPointer = X509_get_ext(pointer, index),
                  let data = X509_EXTENSION_get_data(extensionPointer),
                  let bytes = ASN1_STRING_get0_data(data) else { return values + [[]] }
            values.append(Array(UnsafeBufferPointer(start: bytes, count: Int(ASN1_STRING_length(data)))))
            index = X509_get_ext_by_OBJ(pointer, object, index)
        }
        return values
    }

    /// The subject public key as an uncompressed P-256 point (65 bytes), or nil for any other key.
    public var p256PublicKey: [UInt8]? {
        guard let key = X509_get0_pubkey(pointer) else { return nil }
        var group = [CChar](repeating: 0, count: 64)
        guard ccrypto_pkey_ec_group(key, &group, group.count) == 1,
              String(cString: group) == "prime256v1",
              let bits = X509_get0_pubkey_bitstr(pointer),
              let data = ASN1_STRING_get0_data(bits) else { return nil }
        let point = Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(bits))))
        return point.count == 65 && point[0] == 0x04 ? point : nil
    }

    /// OpenSSL's verdict on `path` (leaf first, each signed by the next) ending at `anchor`, at `at` (unix
    /// seconds, never the clock): nil when every signature and validity period holds and the chain OpenSSL
    /// builds is exactly `path` + anchor, else the reason.
    /// - Parameter tolerating: the shim's `CCRYPTO_TOLERATE_*` flags (AttestationPKI's `PathTolerances`).
    public static func verifyPath(_ path: [X509Certificate], anchor: X509Certificate, at: Int, tolerating: Int32) -> String? {
        guard let leaf = path.first else { return "empty chain" }
        let intermediates = Array(path.dropFirst())
        let pointers: [OpaquePointer?] = intermediates.map { $0.pointer }
        var length: Int32 = 0
        let status = withExtendedLifetime(intermediates) {
            pointers.withUnsafeBufferPointer { buffer in
                ccrypto_x509_verify_at(leaf.pointer, buffer.baseAddress, Int32(buffer.count), anchor.pointer, Int64(at),
                                       tolerating, &length)
            }
        }
        if status < 0 { return "verification could not be set up" }
        if status != X509_V_OK { return String(cString: X509_verify_cert_error_string(Int(status))) }
        guard Int(length) == path.count + 1 else { return "the chain does not use every certificate sent, in order" }
        return nil
    }
}
