import Foundation
import PriceCrypto

/// What `MigrationRunner.run()` did.
public struct MigrationReport: Sendable, Equatable {
    /// Files applied by this run, in order.
    public var applied: [String]
    /// Recorded migrations with no file any more.
    public var unknownApplied: [String]
    public var isUpToDate: Bool { applied.isEmpty }

    /// One line for the CLI: `already up to date` or `applied 0001_x.sql, policies.sql`.
    public var summary: String {
        var text = isUpToDate ? "already up to date" : "applied " + applied.joined(separator: ", ")
        if !unknownApplied.isEmpty {
            text += "; applied migrations without a file: " + unknownApplied.joined(separator: ", ")
        }
        return text
    }
}

/// Applies the migration directory to a database as its owner.
///
/// Runs on its own non-pipelined connection, holds a session advisory lock for the whole run (so
/// concurrent migrators take turns and the second finds nothing to do), and applies each file plus its
/// bookkeeping row in one transaction.
public struct MigrationRunner: Sendable {
    /// Key of the session advisory lock: the bytes of "pricesvc" as a bigint.
    static let advisoryLockKey: Int64 = 0x7072_6963_6573_7663

    public var conninfo: String
    public var directory: String
    public var connectTimeout: Duration

    public init(conninfo: String, directory: String, connectTimeout: Duration = .seconds(10)) {
        self.conninfo = conninfo
        self.directory = directory
        self.connectTimeout = connectTimeout
    }

    /// Brings the database up to date with the directory.
    ///
    /// - Important: A file that fails rolls back on its own; files before it stay applied. A versioned file
    ///   changed after it was applied stops the run before anything is applied (`migrationChecksumMismatch`).
    public func run() throws(DatabaseError) -> MigrationReport {
        let sources = try Self.load(directory: directory)
        let session = try MigrationSession(conninfo: conninfo, connectTimeout: connectTimeout)
        try session.execute("select pg_advisory_lock(\(Self.advisoryLockKey))")
        try session.execute(Self.bookkeepingSQL)
        let plan = try MigrationPlanner(files: sources.map(\.file), applied: Self.applied(session)).plan()
        for step in plan.steps {
            try apply(step.file, sql: sources.first { $0.file == step.file }!.sql, on: session)
        }
        try session.execute("select pg_advisory_unlock(\(Self.advisoryLockKey))")
        return MigrationReport(applied: plan.steps.map(\.file.name), unknownApplied: plan.unknownApplied)
    }

    /// Compares the directory with what the database recorded, without changing anything.
    public func status() throws(DatabaseError) -> MigrationStatus {
        let files = try Self.files(in: directory)
        let session = try MigrationSession(conninfo: conninfo, connectTimeout: connectTimeout)
        let exists = try session.execute("select to_regclass('pricesvc_meta.schema_migrations') is not null").singleValue
        let applied = exists == "t" ? try Self.applied(session) : []
        return MigrationPlanner(files: files, applied: applied).status()
    }

    /// Names and checksums of the `.sql` files in `directory`: what `/readyz` compares against
    /// `pricesvc_meta.applied_migrations()` through `MigrationPlanner.status()`.
    public static func files(in directory: String) throws(DatabaseError) -> [MigrationFile] {
        try load(directory: directory).map(\.file)
    }

    /// SHA-256 hex of a file's bytes (PriceCrypto's), as recorded in `schema_migrations.checksum`: the
    /// same text as PostgreSQL's `encode(sha256(...), 'hex')`.
    public static func checksum(of bytes: some Collection<UInt8>) -> String {
        hex(sha256(Array(bytes)))
    }

    // MARK: Steps

    private func apply(_ file: MigrationFile, sql: String, on session: MigrationSession) throws(DatabaseError) {
        do throws(DatabaseError) {
            try session.execute("begin")
            try session.execute(sql)
            try session.execute("""
                insert into pricesvc_meta.schema_migrations (name, checksum) values ($1, $2)
                on conflict (name) do update set checksum = excluded.checksum, applied_at = now()
                """, [file.name, file.checksum])
            // A file that issues its own COMMIT/ROLLBACK would make this COMMIT a no-op or a warning.
            let tag = try session.execute("commit").commandTag
            guard tag == "COMMIT" else {
                throw DatabaseError(code: .migrationFailed, message: "transaction ended with \(tag), not COMMIT; migration files must not end transactions")
            }
            // Session settings a file changed with plain SET must not leak into the next file.
            try session.execute("reset all")
        } catch {
            _ = try? session.execute("rollback")
            throw DatabaseError(code: .migrationFailed, sqlState: error.sqlState,
                                message: "migration \(file.name) failed: \(error.message)",
                                detail: error.detail, hint: error.hint, severity: error.severity)
        }
    }

    private static func applied(_ session: MigrationSession) throws(DatabaseError) -> [AppliedMigration] {
        try session.execute("select name, checksum from pricesvc_meta.schema_migrations order by applied_at, name")
            .rows.compactMap { row in
                guard let name = row[0], let checksum = row[1] else { return nil }
                return AppliedMigration(name: name, checksum: checksum)
            }
    }

    /// The one definition of the migration bookkeeping: the runner needs it before it can read what was
    /// applied, so it lives here and not in a migration file. Created on first use, under the advisory
    /// lock (concurrent `create ... if not exists` can collide). `0001_roles.sql` still carries the same
    /// `create table if not exists` from before; applied files cannot change, and on every database it
    /// is a no-op because this runs first.
    ///
    /// `applied_migrations()` is the only door for the service: `policies.sql` grants it to
    /// `authenticator` and hands both objects to the owner role.
    static let bookkeepingSQL = """
        create schema if not exists pricesvc_meta;
        create table if not exists pricesvc_meta.schema_migrations (
            name text primary key,
            checksum text not null,
            applied_at timestamptz not null default now()
        );
        do $$
        begin
            if to_regprocedure('pricesvc_meta.applied_migrations()') is null then
                create function pricesvc_meta.applied_migrations() returns table(name text, checksum text)
                    language sql stable security definer set search_path = ''
                    as 'select m.name, m.checksum from pricesvc_meta.schema_migrations m order by m.applied_at, m.name';
                revoke all on function pricesvc_meta.applied_migrations() from public;
            end if;
        end
        $$;
        """

    // MARK: Files

    private struct Source {
        var file: MigrationFile
        var sql: String
    }

    private static func load(directory: String) throws(DatabaseError) -> [Source] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".sql") }.sorted()
        } catch {
            throw DatabaseError(code: .migrationFailed, message: "cannot list migration directory \(directory): \(error.localizedDescription)")
        }
        var sources: [Source] = []
        for name in names {
            let path = (directory as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: path) else {
                throw DatabaseError(code: .migrationFailed, message: "cannot read migration file \(path)")
            }
            guard let sql = String(data: data, encoding: .utf8) else {
                throw DatabaseError(code: .migrationFailed, message: "migration file \(name) is not valid UTF-8")
            }
            sources.append(Source(file: MigrationFile(name: name, checksum: checksum(of: data)), sql: sql))
        }
        return sources
    }
}
