import PriceCrypto

/// One X.509 certificate, parsed by OpenSSL (PriceCrypto's `X509Certificate`) and by the strict DER reader.
/// What App Attest and Android Key Attestation read from their chains: extensions by OID, the public key,
/// the serial, and the path check.
public final class Certificate: Sendable {
    /// A certificate larger than this is refused unread (attestation certificates are 0.5 to 2 KiB).
    public static let maxBytes = 16_384

    let x509: X509Certificate
    /// The DER the certificate was parsed from.
    public let der: [UInt8]
    /// tbsCertificate's serialNumber (unsigned, no leading zeros; a negative one's two's complement) and
    /// subjectPublicKeyInfo (its whole DER),
    /// read by the strict DER reader: OpenSSL accepts some BER, these fields are read from DER only.
    public let serialNumber: [UInt8]
    public let subjectPublicKeyInfo: [UInt8]

    /// nil unless `der` is exactly one DER certificate.
    public init?(der: [UInt8]) {
        guard !der.isEmpty, der.count <= Self.maxBytes, let fields = try? Self.tbsFields(der),
              let x509 = X509Certificate(der: der) else { return nil }
        self.x509 = x509
        self.der = der
        self.serialNumber = fields.serial
        self.subjectPublicKeyInfo = fields.publicKeyInfo
    }

    /// Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version, serialNumber, signature, issuer,
    /// validity, subject, subjectPublicKeyInfo, ... }, signatureAlgorithm, signature }.
    static func tbsFields(_ der: [UInt8]) throws(DERError) -> (serial: [UInt8], publicKeyInfo: [UInt8]) {
        var certificate = try DERReader.single(der).reader()
        var tbs = try certificate.read(.sequence).reader()
        _ = try tbs.readIfPresent(.explicit(0))
        // RFC 5280 wants a positive serial, but an app chooses its Keystore leaf's (setCertificateSerialNumber):
        // a negative one is kept as its two's-complement bytes, which no status-list entry names.
        let serialElement = try tbs.read(.integer)
        let serial = try serialElement.unsignedMagnitude() ?? Array(serialElement.contents)
        _ = try tbs.read(.sequence) // signature
        _ = try tbs.read(.sequence) // issuer
        _ = try tbs.read(.sequence) // validity
        _ = try tbs.read(.sequence) // subject
        let publicKeyInfo = try tbs.read(.sequence)
        return (serial, Array(publicKeyInfo.encoded))
    }

    /// The certificates of a PEM text (`-----BEGIN CERTIFICATE-----` blocks), in order; nil when a block
    /// does not decode or there is none.
    public static func pem(_ text: String) -> [Certificate]? {
        var certificates: [Certificate] = []
        var body: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingSpaces
            if line == "-----BEGIN CERTIFICATE-----" {
                guard body == nil else { return nil }
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

    /// Lower-case hex of the serial number without leading zeros, as Google's status list spells it.
    public var serialHex: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in serialNumber { text += [digits[Int(byte >> 4)], digits[Int(byte & 0xf)]] }
        while text.count > 1, text.first == UInt8(ascii: "0") { text.removeFirst() }
        return text.isEmpty ? "0" : String(decoding: text, as: UTF8.self)
    }

    /// Whether OpenSSL here can use this certificate's public key and verify its signature: false for an
    /// algorithm it does not know (ML-DSA on OpenSSL 3.0), which would otherwise surface as a bad signature.
    public var algorithmsAreSupported: Bool { x509.algorithmsAreSupported }

    /// The DER contents of every extension `oid` (dotted text) the certificate carries, in order.
    public func extensionValues(oid: String) -> [[UInt8]] { x509.extensionValues(oid: oid) }

    /// The DER contents of the extension `oid`, or nil when absent or present more than once.
    public func extensionValue(oid: String) -> [UInt8]? {
        let values = extensionValues(oid: oid)
        return values.count == 1 ? values[0] : nil
    }

    /// The subject public key as an uncompressed P-256 point (65 bytes), or nil for any other key.
    public var p256PublicKey: [UInt8]? { x509.p256PublicKey }
}

/// What may differ from RFC 5280 path validation, per attestation format.
public struct PathTolerances: OptionSet, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The anchor's own validity period is not checked: its key is what is trusted (Google's 2016 RSA root
    /// certificate expired on 2026-05-24; devices still send it, and its key is pinned).
    public static let anchorValidity = PathTolerances(rawValue: 1)
    /// An issuer need not be marked a CA, carry keyCertSign or allow the path's length: Android batch
    /// certificates in the field (the Sony reference chain) lack the first two. Only the signature and the
    /// names make a link (as in Google's own verifier).
    public static let issuerCAFlags = PathTolerances(rawValue: 2)
    /// The leaf's validity period is not checked: an Android device writes it from its own clock (a clock
    /// ahead of the server's would make a fresh key "not yet valid"), so it proves nothing about time.
    public static let leafValidity = PathTolerances(rawValue: 4)
}

extension Certificate {
    /// OpenSSL's verdict on `path` (leaf first, each signed by the next) ending at `anchor`, at `at` (unix
    /// seconds, never the clock): nil when every signature and validity period holds and the chain OpenSSL
    /// builds is exactly `path` + anchor, else the reason.
    public static func verifyPath(_ path: [Certificate], anchor: Certificate, at: Int,
                                  tolerating tolerances: PathTolerances = []) -> String? {
        X509Certificate.verifyPath(path.map(\.x509), anchor: anchor.x509, at: at, tolerating: tolerances.rawValue)
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

