import Foundation
import PriceCrypto
import PriceDB

/// What `MigrationRunner.run()` did.
public struct MigrationReport: Sendable, Equatable {
    /// Files applied by this run, in order.
    public var applied: [String]
    /// Recorded migrations with no file any more.
    public var unknownApplied: [String]
    /// The schema version this run recorded; nil when it recorded none (already recorded, or undeclared).
    public var recordedVersion: SchemaVersion?
    public var isUpToDate: Bool { applied.isEmpty && recordedVersion == nil }

    /// One line for the CLI: `already up to date` or `applied 0001_x.sql, views.sql`.
    public var summary: String {
        var text = applied.isEmpty ? "already up to date" : "applied " + applied.joined(separator: ", ")
        if let recordedVersion {
            text += "; schema version \(recordedVersion) recorded"
        }
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
/// bookkeeping row (and, for the layout's first file, its ``MigrationLayout/firstFileFollowUp``) in one
/// transaction, each under a short `lock_timeout` and retried
/// (``LockRetryPolicy``). Before the first file it records the directory's ``SchemaVersion``. What the
/// files and the bookkeeping are called is the caller's (``MigrationLayout``).
public struct MigrationRunner: Sendable {
    public var conninfo: String
    public var directory: String
    public var layout: MigrationLayout
    public var connectTimeout: Duration
    public var lockRetry: LockRetryPolicy
    /// One line for each lock wait: which file, who blocks it (``LockBlocker``), the pause before the
    /// next attempt.
    public var log: @Sendable (String) -> Void

    public init(conninfo: String, directory: String, layout: MigrationLayout, connectTimeout: Duration = .seconds(10),
                lockRetry: LockRetryPolicy = LockRetryPolicy(), log: @escaping @Sendable (String) -> Void = { _ in }) {
        self.conninfo = conninfo
        self.directory = directory
        self.layout = layout
        self.connectTimeout = connectTimeout
        self.lockRetry = lockRetry
        self.log = log
    }

    /// Brings the database up to date with the directory.
    ///
    /// - Important: A file that fails rolls back on its own; files before it stay applied. A versioned file
    ///   changed after it was applied stops the run before anything is applied (`migrationChecksumMismatch`).
    ///
    /// - Important: A database whose recorded schema version is above the directory's is refused before
    ///   anything runs (`schemaNewerThanMigrations`): an older release would put its older files back.
    ///   Waiting for locks longer than the policy's limit ends the run with `lockWaitExceeded`; files
    ///   applied before stay applied, and the next run goes on from there.
    public func run() throws(DatabaseError) -> MigrationReport {
        let (sources, version, superseded) = try Self.load(directory: directory)
        let session = try MigrationSession(conninfo: conninfo, connectTimeout: connectTimeout)
        try session.execute("select pg_advisory_lock(\(layout.advisoryLockKey))")
        try session.execute(bookkeepingSQL)
        let plan = try MigrationPlanner(files: sources.map(\.file), applied: applied(session), layout: layout,
                                        version: version, superseded: superseded).plan()
        var waits = LockWaits(policy: lockRetry, log: log, conninfo: conninfo, connectTimeout: connectTimeout,
                              backendPID: session.backendPID)
        // First, so instances of the release before stay ready while the files change under them, and a
        // run that stops half-way still tells every binary which release the schema is becoming.
        if plan.recordsVersion {
            try waits.retrying("the schema version") { probe throws(DatabaseError) in
                try record(version, replacing: plan.databaseVersion, on: session, probe: probe)
            }
        }
        for step in plan.steps {
            let sql = sources.first { $0.file == step.file }!.sql
            try waits.retrying(step.file.name) { probe throws(DatabaseError) in
                try apply(step, sql: sql, version: version, on: session, probe: probe)
            }
        }
        try session.execute("select pg_advisory_unlock(\(layout.advisoryLockKey))")
        return MigrationReport(applied: plan.steps.map(\.file.name), unknownApplied: plan.unknownApplied,
                               recordedVersion: plan.recordsVersion ? version : nil)
    }

    /// Compares the directory with what the database recorded, without changing anything.
    public func status() throws(DatabaseError) -> MigrationStatus {
        try planner().status()
    }

    /// What `run()` would do now, without doing it (and without the advisory lock: a migrator running
    /// at the same time may change the answer).
    public func dryRun() throws(DatabaseError) -> (status: MigrationStatus, plan: Result<MigrationPlan, DatabaseError>) {
        let planner = try planner()
        do throws(DatabaseError) {
            return (planner.status(), .success(try planner.plan()))
        } catch {
            return (planner.status(), .failure(error))
        }
    }

    private func planner() throws(DatabaseError) -> MigrationPlanner {
        let (sources, version, superseded) = try Self.load(directory: directory)
        let session = try MigrationSession(conninfo: conninfo, connectTimeout: connectTimeout)
        let exists = try session.execute("select to_regclass('\(layout.bookkeepingTable)') is not null").singleValue
        let recorded = exists == "t" ? try applied(session) : []
        return MigrationPlanner(files: sources.map(\.file), applied: recorded, layout: layout, version: version,
                                superseded: superseded)
    }

    /// What `/readyz` compares a database with, read from `directory` in one pass: the files' names and
    /// checksums, the declared schema version (`.undeclared` without `VERSION`) and the superseded checksums
    /// (none without `superseded.txt`).
    public static func shipped(in directory: String) throws(DatabaseError)
        -> (files: [MigrationFile], version: SchemaVersion, superseded: [SupersededChecksum]) {
        let loaded = try load(directory: directory)
        return (loaded.sources.map(\.file), loaded.version, loaded.superseded)
    }

    /// Names and checksums of the `.sql` files in `directory`: what `/readyz` compares against
    /// `applied_migrations()` through `MigrationPlanner.status()`.
    public static func files(in directory: String) throws(DatabaseError) -> [MigrationFile] {
        try load(directory: directory).sources.map(\.file)
    }

    /// SHA-256 hex of a file's bytes (PriceCrypto's), as recorded in `schema_migrations.checksum`: the
    /// same text as PostgreSQL's `encode(sha256(...), 'hex')`.
    public static func checksum(of bytes: some Collection<UInt8>) -> String {
        hex(sha256(Array(bytes)))
    }

    // MARK: Steps

    /// The name of the check constraint that keeps older migrators out of a schema at `version`: what a
    /// release from before schema versions reads in its error when its `migrate` is refused.
    static func migratorConstraintName(_ version: Int) -> String {
        "schema_version_\(version)_needs_a_migrator_of_version_\(version)_or_later"
    }

    /// Records `version` (one transaction): its row, and when the number changed, the check constraint
    /// that refuses any bookkeeping row a migrator of a lower declared version writes. A release from
    /// before schema versions declares none, so its `migrate` fails at its first file and rolls it back.
    private func record(_ version: SchemaVersion, replacing previous: SchemaVersion?, on session: MigrationSession,
                        probe: () -> Void) throws(DatabaseError) {
        var sql = ""
        if previous?.version != version.version {
            sql = """
                do $$
                declare
                    c pg_catalog.text;
                begin
                    for c in select conname from pg_catalog.pg_constraint
                             where conrelid = '\(layout.bookkeepingTable)'::pg_catalog.regclass
                               and conname ~ '^schema_version_[0-9]+_needs_a_migrator' loop
                        execute pg_catalog.format('alter table \(layout.bookkeepingTable) drop constraint %I', c);
                    end loop;
                end
                $$;
                alter table \(layout.bookkeepingTable) add constraint \(Self.migratorConstraintName(version.version))
                    check (coalesce(nullif(pg_catalog.current_setting('\(layout.migratorSetting)', true), ''), '0')::integer
                           >= \(version.version)) not valid;

                """
        }
        try transaction(as: version, on: session, failing: "recording schema version \(version.version)") {
            () throws(DatabaseError) in
            if !sql.isEmpty { try session.execute(sql, probeEvery: probeInterval, probe: probe) }
            try recordApplied(SchemaVersion.recordName, checksum: version.recordText, on: session)
        }
    }

    /// How often a waiting file asks who blocks it: twice per lock timeout, so every wait is seen.
    private var probeInterval: Duration { max(.milliseconds(200), lockRetry.lockTimeout / 2) }

    /// The step's file, its follow-up (``MigrationStep/followUp``) and its bookkeeping row, in one transaction.
    private func apply(_ step: MigrationStep, sql: String, version: SchemaVersion, on session: MigrationSession,
                       probe: () -> Void) throws(DatabaseError) {
        let file = step.file
        try transaction(as: version, on: session, failing: "migration \(file.name)") { () throws(DatabaseError) in
            try session.execute(sql, probeEvery: probeInterval, probe: probe)
            if let followUp = step.followUp {
                try session.execute(followUp, probeEvery: probeInterval, probe: probe)
            }
            try recordApplied(file.name, checksum: file.checksum, on: session)
        }
        // Session settings a file changed with plain SET must not leak into the next file.
        do throws(DatabaseError) {
            try session.execute("reset all")
        } catch {
            throw DatabaseError(code: .migrationFailed, sqlState: error.sqlState,
                                message: "migration \(file.name) failed: \(error.message)",
                                detail: error.detail, hint: error.hint, severity: error.severity)
        }
    }

    /// One transaction of the run: begun under the lock timeout and declaring this migrator's schema
    /// version (local to it: a file may still say otherwise for itself), `body`, then COMMIT. Any error
    /// rolls it back and ends the run with `migrationFailed`, "`what` failed: …".
    private func transaction(as version: SchemaVersion, on session: MigrationSession, failing what: String,
                             _ body: () throws(DatabaseError) -> Void) throws(DatabaseError) {
        do throws(DatabaseError) {
            try session.execute("begin")
            try session.execute("set local lock_timeout = '\(lockRetry.lockTimeoutSetting)'")
            try session.execute("select pg_catalog.set_config($1, $2, true)",
                                [layout.migratorSetting, String(version.version)])
            try body()
            // A file that issues its own COMMIT/ROLLBACK would make this COMMIT a no-op or a warning.
            let tag = try session.execute("commit").commandTag
            guard tag == "COMMIT" else {
                throw DatabaseError(code: .migrationFailed, message: "transaction ended with \(tag), not COMMIT; migration files must not end transactions")
            }
        } catch {
            _ = try? session.execute("rollback")
            throw DatabaseError(code: .migrationFailed, sqlState: error.sqlState,
                                message: "\(what) failed: \(error.message)",
                                detail: error.detail, hint: error.hint, severity: error.severity)
        }
    }

    /// The bookkeeping row of a file (or of the schema version).
    private func recordApplied(_ name: String, checksum: String, on session: MigrationSession) throws(DatabaseError) {
        try session.execute("""
            insert into \(layout.bookkeepingTable) (name, checksum) values ($1, $2)
            on conflict (name) do update set checksum = excluded.checksum, applied_at = now()
            """, [name, checksum])
    }

    private func applied(_ session: MigrationSession) throws(DatabaseError) -> [AppliedMigration] {
        try session.execute("select name, checksum from \(layout.bookkeepingTable) order by applied_at, name")
            .rows.compactMap { row in
                guard let name = row[0], let checksum = row[1] else { return nil }
                return AppliedMigration(name: name, checksum: checksum)
            }
    }

    /// The one definition of the migration bookkeeping: the runner needs it before it can read what was
    /// applied, so it lives here and not in a migration file (pricesvc's `0001_roles.sql` carried a copy
    /// until its superseded text dropped it). Created on first use, under the advisory lock (concurrent
    /// `create ... if not exists` can collide).
    ///
    /// `applied_migrations()` is the only door for the service: the layout's final file grants it to the
    /// service's role and hands both objects to the owner role.
    var bookkeepingSQL: String {
        let schema = layout.bookkeepingSchema
        return """
            create schema if not exists \(schema);
            create table if not exists \(schema).schema_migrations (
                name text primary key,
                checksum text not null,
                applied_at timestamptz not null default now()
            );
            do $$
            begin
                if to_regprocedure('\(schema).applied_migrations()') is null then
                    create function \(schema).applied_migrations() returns table(name text, checksum text)
                        language sql stable security definer set search_path = ''
                        as 'select m.name, m.checksum from \(schema).schema_migrations m order by m.applied_at, m.name';
                    revoke all on function \(schema).applied_migrations() from public;
                end if;
            end
            $$;
            """
    }

    // MARK: Files

    private struct Source {
        var file: MigrationFile
        var sql: String
    }

    private static func load(directory: String) throws(DatabaseError)
        -> (sources: [Source], version: SchemaVersion, superseded: [SupersededChecksum]) {
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
        var version = SchemaVersion.undeclared
        if let text = try text(of: SchemaVersion.fileName, in: directory) {
            version = try SchemaVersion.parse(declaration: text)
        }
        var superseded: [SupersededChecksum] = []
        if let text = try text(of: SupersededChecksum.fileName, in: directory) {
            superseded = try SupersededChecksum.parse(text)
        }
        return (sources, version, superseded)
    }

    /// The text of `directory/name`; nil when there is no such file.
    private static func text(of name: String, in directory: String) throws(DatabaseError) -> String? {
        let path = (directory as NSString).appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw DatabaseError(code: .migrationFailed, message: "cannot read \(path)")
        }
        return text
    }
}

/// The run's lock waits: retries a step whose lock wait ended (``LockRetryPolicy``), logs who blocked
/// it, and gives up once the run has waited the policy's limit in all.
struct LockWaits {
    let policy: LockRetryPolicy
    let log: @Sendable (String) -> Void
    let conninfo: String
    let connectTimeout: Duration
    let backendPID: Int32
    private(set) var waited: Duration = .zero
    private var monitor: MigrationSession?

    init(policy: LockRetryPolicy, log: @escaping @Sendable (String) -> Void, conninfo: String,
         connectTimeout: Duration, backendPID: Int32) {
        self.policy = policy
        self.log = log
        self.conninfo = conninfo
        self.connectTimeout = connectTimeout
        self.backendPID = backendPID
    }

    mutating func retrying(_ step: String, _ body: (_ probe: () -> Void) throws(DatabaseError) -> Void) throws(DatabaseError) {
        var attempt = 0
        while true {
            attempt += 1
            let started = ContinuousClock.now
            var blockers: [LockBlocker] = []
            var probeProblem: String?
            do throws(DatabaseError) {
                try body {
                    // While the statement waits: who holds what it waits for, right now.
                    switch probeBlockers() {
                    case .success(let found): if !found.isEmpty { blockers = found }
                    case .failure(let error): probeProblem = error.message
                    }
                }
                return
            } catch {
                guard LockRetryPolicy.isLockWait(error) else { throw error }
                waited += ContinuousClock.now - started
                let who = blockers.isEmpty
                    ? "blocked by a session that ended or could not be seen" + (probeProblem.map { " (\($0))" } ?? "")
                    : "blocked by " + blockers.map(\.description).joined(separator: ", ")
                guard let pause = policy.pause(afterAttempt: attempt, waited: waited) else {
                    throw DatabaseError(code: .lockWaitExceeded, sqlState: error.sqlState, message:
                        "migrate gave up on \(step) after waiting \(waited.secondsText) for locks in all "
                        + "(limit \(policy.waitLimit.secondsText)); last \(who)",
                        hint: "end those sessions or wait for them, then run migrate again: files applied before "
                            + "\(step) stay applied")
                }
                log("\(step) waited \(policy.lockTimeout.secondsText) for a lock (attempt \(attempt)), \(who); "
                    + "retrying in \(pause.secondsText) (waited \(waited.secondsText) of at most \(policy.waitLimit.secondsText))")
                waited += pause
                Self.sleep(for: pause)
            }
        }
    }

    private mutating func probeBlockers() -> Result<[LockBlocker], DatabaseError> {
        do throws(DatabaseError) {
            if monitor == nil {
                monitor = try MigrationSession(conninfo: conninfo, connectTimeout: connectTimeout)
            }
            return .success(LockBlocker.rows(try monitor!.execute(LockBlocker.probeSQL, [String(backendPID)])))
        } catch {
            monitor = nil
            return .failure(error)
        }
    }

    private static func sleep(for pause: Duration) {
        let nanoseconds = Int(pause / .nanoseconds(1))
        var request = timespec(tv_sec: nanoseconds / 1_000_000_000, tv_nsec: nanoseconds % 1_000_000_000)
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
    }
}
