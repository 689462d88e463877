import Foundation
import Testing
@testable import pricesvc

@Suite("Where the migrations are found, whatever the working directory")
struct MigrationsLocationTests {
    @Test("an installed binary looks in ../share/pricesvc/migrations beside it, then the source tree")
    func installedThenSourceTree() {
        let candidates = MigrationsLocation.candidates(setting: "", executable: "/usr/bin/pricesvc")
        #expect(candidates == [MigrationsLocation(path: "/usr/share/pricesvc/migrations", origin: .installed),
                               MigrationsLocation(path: MigrationsLocation.sourceTreePath, origin: .sourceTree)])
        let unpacked = MigrationsLocation.candidates(setting: "", executable: "/tmp/root/usr/local/bin/pricesvc")
        #expect(unpacked.first?.path == "/tmp/root/usr/local/share/pricesvc/migrations")
    }

    @Test("the source tree is the one this binary was built from, holding this package's migrations")
    func sourceTreeIsThisPackage() {
        #expect(MigrationsLocation.sourceTreePath.hasSuffix("/migrations"))
        #expect(FileManager.default.fileExists(atPath: MigrationsLocation.sourceTreePath + "/policies.sql"))
    }

    @Test("a directory the operator names is the only candidate: never a silent fallback")
    func settingIsTheOnlyCandidate() throws {
        #expect(MigrationsLocation.candidates(setting: "/srv/m", executable: "/usr/bin/pricesvc")
            == [MigrationsLocation(path: "/srv/m", origin: .setting)])
        let configuration = try Configuration(arguments: ["--migrations-dir", "/no/such/dir"], environment: [:])
        #expect(throws: ConfigurationError.self) { try MigrationsLocation.resolve(configuration) { _ in false } }
        do {
            _ = try MigrationsLocation.resolve(configuration) { _ in false }
        } catch {
            #expect(error.description == "--migrations-dir must be a readable directory of migrations, got '/no/such/dir'")
        }
    }

    @Test("nothing found names every place looked in")
    func nothingFound() throws {
        let configuration = try Configuration(arguments: [], environment: [:])
        do {
            _ = try MigrationsLocation.resolve(configuration) { _ in false }
            Issue.record("resolved without a directory")
        } catch {
            #expect(error.description.contains(MigrationsLocation.sourceTreePath))
            #expect(error.description.contains("PRICESVC_MIGRATIONS_DIR"))
        }
    }
}

@Suite("A secret file must be the owner's alone")
struct SecretFileModeTests {
    @Test("0600 and 0400 (systemd credentials) are accepted", arguments: [0o600, 0o400, 0o700, 0o100600])
    func ownerOnly(mode: Int) {
        #expect(Configuration.secretFileProblem(permissions: mode) == nil)
    }

    @Test("group or others with any access are refused, saying who and how to fix it",
          arguments: [(0o640, "its group"), (0o604, "others"), (0o644, "group and others"), (0o660, "its group"),
                      (0o602, "others")])
    func groupOrOthers(mode: Int, who: String) throws {
        let problem = try #require(Configuration.secretFileProblem(permissions: mode))
        #expect(problem.contains(who) && problem.contains(String(mode, radix: 8)) && problem.contains("chmod 600"))
    }
}
