/// What `pricesvc --version` prints and `/metrics` exposes as `pricesvc_build_info`.
///
/// `commit` is not here: Plugins/BuildCommit writes it before every build from `git describe`
/// (`f581074d35ee`, `v0.2.0-3-g1a2b3c4d5e6f`, `…-dirty` for uncommitted changes, `unknown` outside git).
enum BuildInfo {
    /// The release, bumped by hand with each one: the newest heading of CHANGELOG.md (a test checks it)
    /// and the Debian package's version (packaging/package-deb.sh).
    static let version = "0.1.0"

    /// The compiler that built this binary, from `#if compiler`: SwiftPM offers no build-time value
    /// without a plugin, and this needs none.
    static let swiftVersion: String = {
        #if compiler(>=6.4)
        return "6.4+"
        #elseif compiler(>=6.3)
        return "6.3"
        #elseif compiler(>=6.2)
        return "6.2"
        #elseif compiler(>=6.1)
        return "6.1"
        #else
        return "6.0"
        #endif
    }()

    static var versionLine: String { "pricesvc \(version) (commit \(commit), Swift \(swiftVersion))" }

    /// Labels of `pricesvc_build_info`: fixed for the life of the process.
    static var labels: [(name: String, value: String)] {
        [("version", version), ("commit", commit), ("swift", swiftVersion)]
    }
}
