internal import CCrypto

/// One X.509 certificate parsed by OpenSSL from DER, freed with the value.
final class Certificate: @unchecked Sendable {
    // An X509 *; never mutated after init, and OpenSSL's read functions are safe to call concurrently.
    let pointer: OpaquePointer

    /// nil unless `der` is exactly one DER certificate.
    init?(der: [UInt8]) {
        guard !der.isEmpty, der.count <= 16_384 else { return nil }
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

    /// The certificates of a PEM text (`-----BEGIN CERTIFICATE-----` blocks), in order; nil when a block
    /// does not decode or there is none.
    static func pem(_ text: String) -> [Certificate]? {
        var certificates: [Certificate] = []
        var body: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingSpaces
            if line == "-----BEGIN CERTIFICATE-----" {
                body = ""
            } else if line == "-----END CERTIFICATE-----" {
                guard let text = body, let der = decodeBase64(text), let certificate = Certificate(der: der) else { return nil }
                certificates.append(certificate)
                body = nil
            } else if body != nil {
                body! += line
            }
        }
        return certificates.isEmpty || body != nil ? nil : certificates
    }

    /// OpenSSL's verdict on leaf ← intermediates ← root at `at` (unix seconds): nil when it holds, else
    /// OpenSSL's reason.
    static func verifyChain(leaf: Certificate, intermediates: [Certificate], root: Certificate, at: Int) -> String? {
        let pointers: [OpaquePointer?] = intermediates.map { $0.pointer }
        let status = withExtendedLifetime(intermediates) {
            pointers.withUnsafeBufferPointer { buffer in
                ccrypto_x509_verify_at(leaf.pointer, buffer.baseAddress, Int32(buffer.count), root.pointer, Int64(at))
            }
        }
        if status == X509_V_OK { return nil }
        if status < 0 { return "verification could not be set up" }
        return String(cString: X509_verify_cert_error_string(Int(status)))
    }

    /// The DER contents of the extension `oid` (dotted text), or nil when absent.
    func extensionValue(oid: String) -> [UInt8]? {
        guard let object = OBJ_txt2obj(oid, 1) else { return nil }
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(pointer, object, -1)
        guard index >= 0, X509_get_ext_by_OBJ(pointer, object, index) < 0, // exactly one
              let extensionPointer = X509_get_ext(pointer, index),
              let data = X509_EXTENSION_get_data(extensionPointer),
              let bytes = ASN1_STRING_get0_data(data) else { return nil }
        return Array(UnsafeBufferPointer(start: bytes, count: Int(ASN1_STRING_length(data))))
    }

    /// The subject public key as an uncompressed P-256 point (65 bytes), or nil for any other key.
    var p256PublicKey: [UInt8]? {
        guard let key = X509_get0_pubkey(pointer) else { return nil }
        var group = [CChar](repeating: 0, count: 64)
        guard ccrypto_pkey_ec_group(key, &group, group.count) == 1,
              String(cString: group) == "prime256v1",
              let bits = X509_get0_pubkey_bitstr(pointer),
              let data = ASN1_STRING_get0_data(bits) else { return nil }
        let point = Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(bits))))
        return point.count == 65 && point[0] == 0x04 ? point : nil
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" || first == "\r" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" || last == "\r" { text.removeLast() }
        return text
    }
}

/// Standard base64 (RFC 4648 §4), padding optional, whitespace refused; nil for anything else.
public func decodeBase64(_ text: some StringProtocol) -> [UInt8]? {
    var values: [UInt8] = []
    values.reserveCapacity(text.utf8.count)
    var padding = 0
    for byte in text.utf8 {
        let value: UInt8
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): value = 62
        case UInt8(ascii: "/"): value = 63
        case UInt8(ascii: "="): padding += 1; continue
        default: return nil
        }
        guard padding == 0 else { return nil }
        values.append(value)
    }
    guard padding <= 2, values.count % 4 != 1, padding == 0 || (values.count + padding) % 4 == 0 else { return nil }
    var output: [UInt8] = []
    output.reserveCapacity(values.count * 3 / 4)
    var index = 0
    while index + 4 <= values.count {
        let v = values[index..<index + 4].reduce(UInt32(0)) { $0 << 6 | UInt32($1) }
        output += [UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)]
        index += 4
    }
    let rest = values.count - index
    if rest == 2 {
        let v = UInt32(values[index]) << 6 | UInt32(values[index + 1])
        guard v & 0xf == 0 else { return nil }
        output.append(UInt8(v >> 4))
    } else if rest == 3 {
        let v = UInt32(values[index]) << 12 | UInt32(values[index + 1]) << 6 | UInt32(values[index + 2])
        guard v & 0x3 == 0 else { return nil }
        output += [UInt8(v >> 10), UInt8(v >> 2 & 0xff)]
    }
    return output
}

/// Standard base64 with padding.
public func encodeBase64(_ bytes: [UInt8]) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    var output: [UInt8] = []
    output.reserveCapacity((bytes.count + 2) / 3 * 4)
    var index = 0
    while index < bytes.count {
        let chunk = bytes[index..<min(index + 3, bytes.count)]
        let v = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * $1.offset) }
        for position in 0..<4 {
            output.append(position <= chunk.count ? alphabet[Int(v >> (18 - 6 * position) & 0x3f)] : UInt8(ascii: "="))
        }
        index += 3
    }
    return String(decoding: output, as: UTF8.self)
}
