import AnonAuth
import Foundation
import PriceDB
import PriceJSON
import PriceSQL

/// `pricesvc keys`: the legacy anon key, the three steps of a signing-key rotation, and publishable
/// API keys. Everything but printing the anon key runs as the owning role (a member of pricesvc_owner;
/// no superuser).
extension Commands {
    static func keys(_ configuration: Configuration) throws -> Int32 {
        let words = configuration.positional
        guard let step = words.first else {
            let secrets = try loadSecrets(configuration)
            print(TokenIssuer(secret: secrets.current).anonKey())
            return 0
        }
        let owner = OwnerTasks(conninfo: ownerConninfo(configuration))
        do {
            switch (step, words.count) {
            case ("add", 1):
                let file = configuration.string("next-secret-file")
                guard !file.isEmpty else {
                    throw ConfigurationError(description: "keys add needs --next-secret-file FILE (the next JWT secret, at least 32 bytes)")
                }
                guard let next = try configuration.secret("next-secret") else {
                    throw ConfigurationError(description: "--next-secret-file '\(file)' is empty")
                }
                do { try JWTSecret.validate(next) } catch {
                    throw ConfigurationError(description: "next JWT secret (--next-secret-file): \(error.message)")
                }
                let shared = configuration.string("shared").isEmpty ? true : try configuration.bool("shared")
                let id = try owner.keyTask(OwnerStatements.addSigningKey, (Bytea(next), shared ? "true" : "false"), sendsKey: true).first ?? ""
                print("signing keys: added key \(id) as the next key; PostgreSQL accepts tokens signed with it now, "
                      + "every instance within PRICESVC_KEY_REFRESH_SECONDS (pricesvc_signing_keys on /metrics)"
                      + (shared ? "" : "; not shared: only instances started with this secret verify it"))
            case ("promote", 1):
                let id = try owner.keyTask(OwnerStatements.promoteSigningKey, ()).first ?? ""
                print("signing keys: key \(id) is the current key; every instance signs with it within PRICESVC_KEY_REFRESH_SECONDS. "
                      + "Retire the previous key once tokens signed with it have expired (PRICESVC_ACCESS_TOKEN_TTL) "
                      + "and every instance runs with a secret still in the set")
            case ("retire", 1):
                let slot = configuration.string("slot").isEmpty ? "previous" : configuration.string("slot")
                let id = try owner.keyTask(OwnerStatements.retireSigningKey, slot).first ?? ""
                print("signing keys: retired the \(slot) key \(id); tokens signed with it are refused")
            case ("list", 1):
                for row in try owner.keyTask(OwnerStatements.signingKeyList, ()) {
                    print("\(row.1)\t\(row.0)\t\(row.2 ? "shared" : "not shared")\t\(row.3)")
                }
            case ("publishable", 2) where words[1] == "create":
                let name = configuration.string("name").isEmpty ? "app" : configuration.string("name")
                let made = PublishableKey.generate()
                guard let row = try owner.keyTask(OwnerStatements.createPublishableKey, (name, Bytea(made.hash), made.display)).first else {
                    throw DatabaseError(code: .protocolViolation, message: "auth.create_publishable_key returned no row")
                }
                // The key itself on stdout (shown once, never stored); what it is on stderr.
                note("publishable key \(row.0) '\(name)' created; only its hash is stored, so keep this copy")
                print(made.key)
            case ("publishable", 2) where words[1] == "list":
                for row in try owner.keyTask(OwnerStatements.publishableKeyList, ()) {
                    print("\(row.0)\t\(row.1)\t\(row.2)\tcreated \(row.3)\t\(row.4.map { "revoked \($0)" } ?? "live")")
                }
            case ("publishable", 3) where words[1] == "revoke":
                guard UUIDText.isValid(words[2]) else {
                    throw ConfigurationError(description: "keys publishable revoke needs a key's id (pricesvc keys publishable list), got '\(words[2])'")
                }
                guard try owner.keyTask(OwnerStatements.revokePublishableKey, words[2]).first == true else {
                    fail("no live publishable key \(words[2])")
                    return 1
                }
                print("publishable key \(words[2]) revoked; every instance refuses it within PRICESVC_KEY_REFRESH_SECONDS")
            default:
                throw ConfigurationError(description: "unknown keys subcommand '\(words.joined(separator: " "))' (see pricesvc keys --help)")
            }
        } catch let error as DatabaseError {
            // A refused step (55000: out of order; 22023: a bad argument) is the operator's to fix: say why.
            guard error.sqlState == "55000" || error.sqlState == "22023" else { throw error }
            fail("keys \(step): \(error.message)\(error.hint.map { " (\($0))" } ?? "")")
            return 1
        }
        return 0
    }
}
