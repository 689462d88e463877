import AndroidAttestation
import AttestationPKI
import Foundation
import PriceJSON

extension Commands {
    /// `pricesvc verify-key-attestation`: the Android verifier sign-up runs, on one chain, for operators and tests.
    static func verifyKeyAttestation(_ configuration: Configuration) throws(ConfigurationError) -> Int32 {
        guard !configuration.string("challenge").isEmpty, let challenge = decodeBase64(configuration.string("challenge")) else {
            throw ConfigurationError(description: "--challenge must be base64 (the attestation challenge), got '\(configuration.string("challenge"))'")
        }
        let (at, repeats) = (try verificationTime(configuration), try repeatCount(configuration))
        let data = try operand(configuration, command: "verify-key-attestation", what: "the chain as PEM, leaf first")
        // A file that is not PEM goes to the verifier as no certificate, to be refused as a malformed chain.
        let chain = Certificate.pem(String(decoding: data, as: UTF8.self))?.map(\.der) ?? []
        let verifier = try keyAttestationVerifier(configuration, packagesKey: "package", digestsKey: "signing-cert-digest",
                                                  statusFileKey: "status-file")

        let started = DispatchTime.now().uptimeNanoseconds
        var verdict = verifier.verify(chain: chain, challenge: challenge, at: at)
        for _ in 1..<repeats { verdict = verifier.verify(chain: chain, challenge: challenge, at: at) }
        let elapsed = DispatchTime.now().uptimeNanoseconds - started

        var writer = JSONWriter()
        writer.beginObject()
        switch verdict {
        case .success(let key):
            let description = key.keyDescription
            writer.key("ok"); writer.bool(true)
            writer.key("security_level"); writer.string(description.attestationSecurityLevel.name)
            writer.key("keymint_security_level"); writer.string(description.keyMintSecurityLevel.name)
            writer.key("attestation_version"); writer.number(Int(description.attestationVersion))
            writer.key("challenge_b64"); writer.string(encodeBase64(description.attestationChallenge))
            let rootOfTrust = description.hardwareEnforced.rootOfTrust
            writer.key("verified_boot_state")
            if let rootOfTrust { writer.string(rootOfTrust.verifiedBootState.name) } else { writer.null() }
            writer.key("device_locked")
            if let rootOfTrust { writer.bool(rootOfTrust.deviceLocked) } else { writer.null() }
            let application = description.attestationApplicationID
            writer.key("packages"); writer.beginArray()
            for package in application?.packages ?? [] {
                writer.beginObject()
                writer.key("name"); writer.string(package.name)
                writer.key("version"); writer.number(Int(package.version))
                writer.endObject()
            }
            writer.endArray()
            writer.key("signing_cert_digests_b64"); writer.beginArray()
            for digest in application?.signatureDigests ?? [] { writer.string(encodeBase64(digest)) }
            writer.endArray()
            let osVersion = description.hardwareEnforced.osVersion ?? description.softwareEnforced.osVersion
            let patchLevel = description.hardwareEnforced.osPatchLevel ?? description.softwareEnforced.osPatchLevel
            writer.key("os_version")
            if let osVersion { writer.number(Int(osVersion)) } else { writer.null() }
            writer.key("os_patch_level")
            if let patchLevel { writer.number(Int(patchLevel)) } else { writer.null() }
            writer.key("root"); writer.string(key.root)
        case .failure(let error):
            writer.key("ok"); writer.bool(false)
            writer.key("code"); writer.string(error.code.description)
            writer.key("message"); writer.string(error.message)
        }
        if repeats > 1 {
            writer.key("repeat"); writer.number(repeats)
            writer.key("mean_microseconds"); writer.number(Int(elapsed / UInt64(repeats) / 1_000))
        }
        writer.endObject()
        print(writer.text)
        if case .failure = verdict { return 1 }
        return 0
    }

    /// The Android verifier a server with these settings builds. The CLI's own flags (`packagesKey` ...),
    /// when given, win over the settings.
    static func keyAttestationVerifier(_ configuration: Configuration, packagesKey: String? = nil, digestsKey: String? = nil,
                                       statusFileKey: String? = nil) throws(ConfigurationError) -> KeyAttestationVerifier {
        func chosen(_ flag: String?, _ setting: String) -> String {
            if let flag, !configuration.string(flag).isEmpty { return flag }
            return setting
        }
        func list(_ key: String) -> [String] {
            configuration.string(key).split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        let packages = Set(list(chosen(packagesKey, "android-package-names")))
        let digestsSetting = chosen(digestsKey, "android-signing-cert-digests")
        var digests: Set<[UInt8]> = []
        for text in list(digestsSetting) {
            guard let digest = decodeBase64(text), digest.count == 32 else {
                throw configuration.invalid(digestsSetting, "must be base64 SHA-256 digests (32 bytes), comma-separated")
            }
            digests.insert(digest)
        }

        var roots = AttestationRoot.google
        let rootsFile = configuration.string("android-attestation-roots-file")
        if !rootsFile.isEmpty {
            guard let data = FileManager.default.contents(atPath: rootsFile) else {
                throw ConfigurationError(description: "cannot read \(configuration.name("android-attestation-roots-file")) '\(rootsFile)'")
            }
            guard let fileRoots = AttestationRoot.pem(String(decoding: data, as: UTF8.self)) else {
                throw configuration.invalid("android-attestation-roots-file", "must be a PEM file of certificates")
            }
            roots = fileRoots
        }

        var statusList: AttestationStatusList?
        let statusKey = chosen(statusFileKey, "android-attestation-status-file")
        let statusFile = configuration.string(statusKey)
        if !statusFile.isEmpty {
            guard let data = FileManager.default.contents(atPath: statusFile) else {
                throw ConfigurationError(description: "cannot read \(configuration.name(statusKey)) '\(statusFile)'")
            }
            switch AttestationStatusList.parse([UInt8](data)) {
            case .success(let list): statusList = list
            case .failure(let error):
                throw ConfigurationError(description: "\(configuration.name(statusKey)) '\(statusFile)' is not an attestation status list: \(error)")
            }
        }
        let policy = KeyAttestationPolicy(packageNames: packages, signingCertificateDigests: digests,
                                          allowsUnverifiedBoot: try configuration.bool("android-allow-unverified-boot"))
        return KeyAttestationVerifier(roots: roots, statusList: statusList, policy: policy)
    }

    /// At start-up, what the Android revocation check will know: the list is read once, so its age is the
    /// age of what serve refuses (docs/attestation.md, "The revocation list").
    static func noteAndroidStatusList(_ configuration: Configuration) {
        guard !configuration.string("android-package-names").isEmpty else { return }
        let file = configuration.string("android-attestation-status-file")
        guard !file.isEmpty else {
            note("Android Key Attestation without a status list: revoked attestation keys are accepted "
                 + "(set PRICESVC_ANDROID_ATTESTATION_STATUS_FILE)")
            return
        }
        let modified = (try? FileManager.default.attributesOfItem(atPath: file)[.modificationDate]) as? Date
        let days = modified.map { Int(Date().timeIntervalSince($0) / 86_400) } ?? 0
        note("Android Key Attestation status list \(file): \(days) days old" + (days > 7 ? ", refresh it (it is read at start)" : ""))
    }
}
