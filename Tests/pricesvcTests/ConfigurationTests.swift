import Testing
@testable import pricesvc

@Suite("Settings: where each value comes from, and errors that name it")
struct ConfigurationTests {
    @Test("a flag wins over the variable, the variable over the default")
    func precedence() throws {
        let environment = ["PRICESVC_POOL_SIZE": "4", "PRICESVC_LISTEN": ":9000"]
        let fromEnvironment = try Configuration(arguments: [], environment: environment)
        #expect(fromEnvironment.string("pool-size") == "4")
        #expect(fromEnvironment.source("pool-size") == .environment)
        #expect(fromEnvironment.source("pool-timeout-ms") == .defaultValue)
        let fromFlag = try Configuration(arguments: ["--pool-size", "6"], environment: environment)
        #expect(fromFlag.string("pool-size") == "6")
        #expect(fromFlag.source("pool-size") == .flag)
    }

    @Test("an unknown PRICESVC_ variable is an error naming the closest setting",
          arguments: [("PRICESVC_POOLSIZE", "PRICESVC_POOL_SIZE"), ("PRICESVC_DATABSE_URL", "PRICESVC_DATABASE_URL"),
                      ("PRICESVC_JWT_SECRETFILE", "PRICESVC_JWT_SECRET_FILE"), ("PRICESVC_ACESS_LOG", "PRICESVC_ACCESS_LOG")])
    func unknownVariable(name: String, closest: String) {
        #expect(message { _ = try Configuration(arguments: [], environment: [name: "1", "PRICESVC_POOL_SIZE": "4"]) }
            == "unknown variable \(name): no such setting; did you mean \(closest)? (see pricesvc --help)")
    }

    @Test("the test suites' own variables and other programs' are not settings and are left alone")
    func foreignVariables() throws {
        let configuration = try Configuration(arguments: [], environment: [
            "PRICESVC_BIN": "/x", "PRICESVC_OWNER_URL": "postgresql:///x", "PRICESVC_TEST_JWT_SECRET": "s",
            "PRICESVC_E2E_MIGRATIONS_DIR": "/m", "PRICESVC": "x", "PGHOST": "/tmp"])
        #expect(configuration.string("pool-size") == "8")
        #expect(Settings.unknownVariable(in: ["PRICESVC_POOL_SIZE": "4"]) == nil)
    }

    @Test("every setting's own variable is known: the list is the settings table")
    func everySettingIsKnown() {
        let environment = Dictionary(uniqueKeysWithValues: Settings.all.map { ($0.environmentName, $0.defaultValue) })
        #expect(Settings.unknownVariable(in: environment) == nil)
    }

    @Test("edit distance", arguments: [("", "", 0), ("a", "", 1), ("kitten", "sitting", 3), ("POOLSIZE", "POOL_SIZE", 1)])
    func editDistance(a: String, b: String, distance: Int) {
        #expect(Settings.editDistance(a, b) == distance)
        #expect(Settings.editDistance(b, a) == distance)
    }

    @Test("an invalid value from the environment is reported under the variable's name")
    func errorsNameTheVariable() {
        let configuration = try! Configuration(arguments: [], environment: [
            "PRICESVC_LISTEN": "8080", "PRICESVC_RATE_LIMIT_PER_MINUTE": "lots", "PRICESVC_ACCESS_LOG": "maybe",
            "PRICESVC_IPV6_PREFIX": "129"])
        #expect(throws: ConfigurationError.self) { _ = try configuration.listen() }
        #expect(message { _ = try configuration.listen() }.hasPrefix("PRICESVC_LISTEN must be HOST:PORT"))
        #expect(message { _ = try configuration.int("rate-limit-per-minute") }
            == "PRICESVC_RATE_LIMIT_PER_MINUTE must be an integer ≥ 0, got 'lots'")
        #expect(message { _ = try configuration.bool("access-log") } == "PRICESVC_ACCESS_LOG must be true or false, got 'maybe'")
        #expect(message { _ = try configuration.int("ipv6-prefix", min: 1, max: 128) }
            == "PRICESVC_IPV6_PREFIX must be an integer from 1 to 128, got '129'")
    }

    @Test("an invalid value from a flag is reported under the flag, even when the variable is set too")
    func errorsNameTheFlag() throws {
        let configuration = try Configuration(arguments: ["--rate-limit-per-minute=lots", "--listen", "nowhere"],
                                              environment: ["PRICESVC_RATE_LIMIT_PER_MINUTE": "10"])
        #expect(message { _ = try configuration.int("rate-limit-per-minute") }
            == "--rate-limit-per-minute must be an integer ≥ 0, got 'lots'")
        #expect(message { _ = try configuration.listen() }.hasPrefix("--listen must be HOST:PORT"))
    }

    @Test("a secret file that cannot be read is named as it was given")
    func secretFileErrors() throws {
        let configuration = try Configuration(arguments: [], environment: ["PRICESVC_JWT_SECRET_FILE": "/no/such/file"])
        #expect(message { _ = try configuration.secret("jwt-secret") }
            == "cannot read PRICESVC_JWT_SECRET_FILE '/no/such/file'")
    }

    @Test("operands only for a command that takes them (import-rates FILE...); elsewhere a stray argument is an error")
    func operands() throws {
        let importing = try Configuration(arguments: ["--source", "city", "a.json", "--pool-size=2", "b.json"],
                                          environment: [:], takesOperands: true)
        #expect(importing.positional == ["a.json", "b.json"])
        #expect(importing.string("source") == "city" && importing.string("pool-size") == "2")
        #expect(message { _ = try Configuration(arguments: ["a.json"], environment: [:]) }
            == "unexpected argument 'a.json' (see pricesvc --help)")
    }

    func message(_ body: () throws -> Void) -> String {
        do { try body() } catch { return (error as? ConfigurationError)?.description ?? "\(error)" }
        return "(no error)"
    }
}

@Suite("The listen address")
struct ListenAddressTests {
    @Test(arguments: [
        ("127.0.0.1:8080", "127.0.0.1", 8080),
        ("0.0.0.0:80", "0.0.0.0", 80),
        (":8080", "127.0.0.1", 8080),
        ("localhost:9000", "127.0.0.1", 9000),
        ("LOCALHOST:9000", "127.0.0.1", 9000),
        ("[::1]:8080", "::1", 8080),
        ("[::]:8080", "::", 8080),
        ("127.0.0.1:0", "127.0.0.1", 0),
    ])
    func acceptedForms(text: String, host: String, port: Int) throws {
        let address = try #require(ListenAddress.parse(text))
        #expect(address == ListenAddress(host: host, port: UInt16(port)))
    }

    @Test(arguments: ["8080", "", ":", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:+80",
                      "::1:8080", "[::1]", "[127.0.0.1]:80", "example.com:80", "256.0.0.1:80", "[nonsense]:80"])
    func refusedForms(text: String) {
        #expect(ListenAddress.parse(text) == nil)
    }

    @Test func printedAsAURLAuthority() {
        #expect("\(ListenAddress(host: "::1", port: 8080))" == "[::1]:8080")
        #expect("\(ListenAddress(host: "127.0.0.1", port: 80))" == "127.0.0.1:80")
    }
}

@Suite("Durations (prune --older-than): parsed into seconds, never a trap")
struct DurationTests {
    @Test func unitsGiveSeconds() {
        #expect(Configuration.duration("30d") == 2_592_000)
        #expect(Configuration.duration("36h") == 129_600)
        #expect(Configuration.duration("1445m") == 86_700)
        #expect(Configuration.duration("0s") == 0)
    }

    @Test("a count whose seconds do not fit an Int is refused, as is anything else")
    func overflowAndNonsenseAreRefused() {
        #expect(Configuration.duration("9223372036854775807d") == nil)
        #expect(Configuration.duration("106751991167301d") == nil)
        #expect(Configuration.duration("99999999999999999999s") == nil)
        #expect(Configuration.duration("9223372036854775807s") == Int.max)
        for text in ["", "d", "-1d", "1w", "1.5h", "thirty"] {
            #expect(Configuration.duration(text) == nil, "\(text)")
        }
    }
}

@Suite("The command line's help and version")
struct CommandHelpTests {
    @Test func everyCommandHasHelpAndNamesOnlyKnownSettings() {
        let known = Set(Settings.all.map(\.key))
        for description in Commands.descriptions {
            #expect(Set(description.settings ?? []).isSubset(of: known), "\(description.name)")
            #expect(Commands.helpText.contains(description.usage))
        }
    }

    @Test func theVersionLineNamesTheVersionCommitAndCompiler() {
        #expect(BuildInfo.versionLine == "pricesvc \(BuildInfo.version) (commit \(BuildInfo.commit), Swift \(BuildInfo.swiftVersion))")
        #expect(BuildInfo.labels.map(\.name) == ["version", "commit", "swift"])
        // A label value: the plugin keeps only characters that need no escaping in Prometheus text.
        #expect(!BuildInfo.commit.isEmpty && BuildInfo.commit.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._+-".contains($0)) })
    }
}
