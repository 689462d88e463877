import AnonAuth
import AppAttest
import AttestationPKI
import Foundation
import PriceAPI
import PriceJSON

extension Commands {
    /// `pricesvc verify-attestation`: the verifier sign-up runs, on one object, for operators and tests.
    static func verifyAttestation(_ configuration: Configuration) throws(ConfigurationError) -> Int32 {
        let appIDs = configuration.string("app-id").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !appIDs.isEmpty else { throw ConfigurationError(description: "--app-id is required (TEAMID.bundle.id)") }
        guard let keyId = decodeBase64(configuration.string("key-id")), !keyId.isEmpty else {
            throw ConfigurationError(description: "--key-id must be base64, got '\(configuration.string("key-id"))'")
        }
        guard let clientDataHash = decodeBase64(configuration.string("client-data-hash")) else {
            throw ConfigurationError(description: "--client-data-hash must be base64")
        }
        let (at, repeats) = (try verificationTime(configuration), try repeatCount(configuration))
        let data = try operand(configuration, command: "verify-attestation", what: "the attestation object")
        let attestation = attestationBytes([UInt8](data))
        let verifier = try attestationVerifier(configuration, appIDs: appIDs)

        let started = DispatchTime.now().uptimeNanoseconds
        var verdict = verifier.verify(attestation: attestation, keyId: keyId, clientDataHash: clientDataHash, at: at)
        for _ in 1..<repeats {
            verdict = verifier.verify(attestation: attestation, keyId: keyId, clientDataHash: clientDataHash, at: at)
        }
        let elapsed = DispatchTime.now().uptimeNanoseconds - started

        var writer = JSONWriter()
        writer.beginObject()
        switch verdict {
        case .success(let key):
            writer.key("ok"); writer.bool(true)
            writer.key("app_id"); writer.string(key.appID)
            writer.key("environment"); writer.string(key.environment.rawValue)
            writer.key("key_id"); writer.string(encodeBase64(key.keyId))
            writer.key("public_key"); writer.string(encodeBase64(key.publicKey))
            writer.key("counter"); writer.number(Int(key.counter))
            writer.key("receipt_bytes"); writer.number(key.receipt.count)
        case .failure(let error):
            writer.key("ok"); writer.bool(false)
            writer.key("code"); writer.string(error.code.description)
            writer.key("message"); writer.string(error.message)
        }
        writer.key("verified_at"); writer.number(at)
        if repeats > 1 {
            writer.key("repeat"); writer.number(repeats)
            writer.key("mean_microseconds"); writer.number(Int(elapsed / UInt64(repeats) / 1_000))
        }
        writer.endObject()
        print(writer.text)
        if case .failure = verdict { return 1 }
        return 0
    }

    /// Attested sign-up as configured: nil when `signup-attestation` is off. Either platform, or both:
    /// App Attest when app ids are set, Android Key Attestation when package names are.
    static func signUpAttestation(_ configuration: Configuration, secret: [UInt8]) throws(ConfigurationError) -> SignUpAttestation? {
        guard let mode = SignUpAttestationMode(rawValue: configuration.string("signup-attestation")) else {
            throw configuration.invalid("signup-attestation", "must be off, optional or required")
        }
        if mode == .off { return nil }
        let appIDs = configuration.string("app-attest-app-ids").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let packages = configuration.string("android-package-names").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !appIDs.isEmpty || !packages.isEmpty else {
            throw configuration.invalid("app-attest-app-ids", "or \(configuration.name("android-package-names")) must name at least one app "
                                        + "(TEAMID.bundle.id, or an Android package) when signup-attestation is \(mode.rawValue)")
        }
        return SignUpAttestation(mode: mode, verifier: appIDs.isEmpty ? nil : try attestationVerifier(configuration, appIDs: appIDs),
                                 android: packages.isEmpty ? nil : try keyAttestationVerifier(configuration),
                                 challenges: AttestationChallenges(secret: secret,
                                                                   lifetimeSeconds: try configuration.int("signup-challenge-ttl", min: 1)))
    }

    /// The verifier a server with these settings builds: the configured root (or Apple's, built in).
    static func attestationVerifier(_ configuration: Configuration, appIDs: [String]) throws(ConfigurationError) -> AttestationVerifier {
        var rootPEM = appleAppAttestationRootCA
        let rootFile = configuration.string("app-attest-root-ca-file")
        if !rootFile.isEmpty {
            guard let data = FileManager.default.contents(atPath: rootFile) else {
                throw ConfigurationError(description: "cannot read \(configuration.name("app-attest-root-ca-file")) '\(rootFile)'")
            }
            rootPEM = String(decoding: data, as: UTF8.self)
        }
        guard let verifier = AttestationVerifier(appIDs: appIDs, rootPEM: rootPEM,
                                                 acceptsDevelopment: try configuration.bool("app-attest-development")) else {
            throw configuration.invalid("app-attest-root-ca-file", "must be a PEM certificate")
        }
        return verifier
    }

    /// `--at`: RFC 3339 or unix seconds; now when absent.
    static func verificationTime(_ configuration: Configuration) throws(ConfigurationError) -> Int {
        let text = configuration.string("at")
        if text.isEmpty { return Int(Date().timeIntervalSince1970) }
        guard let seconds = parseTime(text) else {
            throw ConfigurationError(description: "--at must be RFC 3339 (2024-02-04T00:00:00Z) or unix seconds, got '\(text)'")
        }
        return seconds
    }

    /// `--repeat`: how many times to verify (to measure); 1 when absent.
    static func repeatCount(_ configuration: Configuration) throws(ConfigurationError) -> Int {
        let repeats = configuration.string("repeat").isEmpty ? 1 : (Int(configuration.string("repeat")) ?? 0)
        guard repeats >= 1, repeats <= 1_000_000 else { throw ConfigurationError(description: "--repeat must be from 1 to 1000000") }
        return repeats
    }

    /// The one FILE operand's bytes (`-`: stdin).
    static func operand(_ configuration: Configuration, command: String, what: String) throws(ConfigurationError) -> Data {
        guard configuration.positional.count == 1, let path = configuration.positional.first else {
            throw ConfigurationError(description: "\(command) takes one FILE (\(what); - for stdin)")
        }
        let data = path == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: path)
        guard let data else { throw ConfigurationError(description: "cannot read '\(path)'") }
        return data
    }

    /// A file holds the object as raw CBOR or as base64 text (what apps and vectors.json carry).
    static func attestationBytes(_ bytes: [UInt8]) -> [UInt8] {
        var text = String(decoding: bytes, as: UTF8.self)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return decodeBase64(text) ?? bytes
    }

    /// RFC 3339 with an optional fraction, or unix seconds.
    static func parseTime(_ text: String) -> Int? {
        if let seconds = Int(text) { return seconds }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return Int(date.timeIntervalSince1970) }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text).map { Int($0.timeIntervalSince1970) }
    }
}
