import Foundation

/// Where `serve` and `migrate` read the SQL migrations, whatever the working directory.
///
/// In order: the setting (`--migrations-dir`, `PRICESVC_MIGRATIONS_DIR`) when given; else
/// `../share/pricesvc/migrations` beside the binary, which is `/usr/share/pricesvc/migrations` for
/// `/usr/bin/pricesvc` and follows `make install PREFIX=…` or a package unpacked anywhere; else the
/// `migrations/` of the source tree the binary was built from (a development build).
struct MigrationsLocation: Equatable {
    enum Origin: String { case setting, installed, sourceTree = "source tree" }

    var path: String
    var origin: Origin

    /// The installed directory relative to the binary's folder.
    static let installedRelativePath = "../share/pricesvc/migrations"

    /// The source tree's `migrations/`, from this file's path at build time.
    static let sourceTreePath: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }  // MigrationsLocation.swift, pricesvc, Sources
        return url.appendingPathComponent("migrations").path
    }()

    /// The candidates in order, without touching the file system (the pure part, tested alone).
    static func candidates(setting: String, executable: String?) -> [MigrationsLocation] {
        if !setting.isEmpty { return [MigrationsLocation(path: setting, origin: .setting)] }
        var found: [MigrationsLocation] = []
        if let executable {
            let folder = URL(fileURLWithPath: executable).deletingLastPathComponent()
            found.append(MigrationsLocation(path: folder.appendingPathComponent(installedRelativePath).standardized.path,
                                            origin: .installed))
        }
        found.append(MigrationsLocation(path: sourceTreePath, origin: .sourceTree))
        return found
    }

    /// The first candidate that is a readable directory.
    ///
    /// - Important: A directory the operator named that cannot be listed is a configuration error
    ///   (exit 2) naming the flag or variable, never a silent fallback to another directory.
    static func resolve(_ configuration: Configuration,
                        isListable: (String) -> Bool = listable) throws(ConfigurationError) -> MigrationsLocation {
        let setting = configuration.string("migrations-dir")
        let candidates = candidates(setting: setting, executable: executablePath())
        if let usable = candidates.first(where: { isListable($0.path) }) { return usable }
        if !setting.isEmpty {
            throw configuration.invalid("migrations-dir", "must be a readable directory of migrations")
        }
        throw ConfigurationError(description: "no migrations directory: looked in "
            + candidates.map(\.path).joined(separator: " and ") + "; set PRICESVC_MIGRATIONS_DIR or --migrations-dir")
    }

    static func listable(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
            && (try? FileManager.default.contentsOfDirectory(atPath: path)) != nil
    }

    /// This process's binary, symbolic links resolved (`/proc/self/exe`), so a link in `/usr/local/bin`
    /// to an installed binary still finds the installed migrations.
    static func executablePath() -> String? {
        try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
    }
}
