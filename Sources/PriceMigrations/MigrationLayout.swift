/// What one application calls its migrations and their bookkeeping. The migration system knows none of
/// these names: its caller passes them in (pricesvc's is `MigrationLayout.pricesvc`, in the executable).
///
/// The rest is the same for every application: versioned `NNNN_name.sql`, repeatable `name.sql` and
/// after-step `NNNN_name.after.sql` files (``MigrationPlanner``), `VERSION` (``SchemaVersion``), `superseded.txt` (``SupersededChecksum``).
///
/// - Important: Deployed databases hold these names: the bookkeeping schema, the check constraint that
///   reads ``migratorSetting``, and concurrent migrators meet on ``advisoryLockKey``. Changing one for a
///   running application makes `migrate` start a second bookkeeping and run every file again, or lets
///   an older and a newer migrator run at once.
public struct MigrationLayout: Sendable, Hashable {
    /// The repeatable file that runs first among the repeatable files, since every other file may read
    /// what it defines.
    public var firstFileName: String
    /// The repeatable file that runs last (after the after-steps too), and whenever any other file ran:
    /// roles, grants, row-level security and the ownership hand-off, so nothing another file created is
    /// left reachable or owned by the migrating superuser.
    public var finalFileName: String
    /// SQL run in the first file's transaction right after it, and only when the first file runs: what a
    /// change of the first file's definitions invalidates, made to follow them before anyone sees them
    /// (pricesvc: the median rule's reconcile). It is not part of the file, which stays definitions only;
    /// it must be idempotent and cheap when nothing changed, and must tolerate a database where what it
    /// calls does not exist yet (a fresh one: the first file runs before every other repeatable file).
    public var firstFileFollowUp: String?
    /// The schema of the bookkeeping: the table `schema_migrations` and the function `applied_migrations()`
    /// (``MigrationRunner/bookkeepingSQL``). Written into SQL as it is: a plain lowercase identifier.
    public var bookkeepingSchema: String
    /// The custom setting (`prefix.name`) in which `migrate` declares its own schema version on every
    /// transaction that writes the bookkeeping. The table's check constraint refuses a row written by a
    /// migrator whose declared version is below the recorded one, which is what stops a release from
    /// before schema versions (it declares nothing) from putting its older files back.
    public var migratorSetting: String
    /// The key of the session advisory lock a run holds, so concurrent migrators take turns.
    public var advisoryLockKey: Int64

    public init(firstFileName: String, finalFileName: String, firstFileFollowUp: String? = nil,
                bookkeepingSchema: String, migratorSetting: String, advisoryLockKey: Int64) {
        self.firstFileName = firstFileName
        self.finalFileName = finalFileName
        self.firstFileFollowUp = firstFileFollowUp
        self.bookkeepingSchema = bookkeepingSchema
        self.migratorSetting = migratorSetting
        self.advisoryLockKey = advisoryLockKey
    }

    /// The table of applied files (and of the schema version's row), schema-qualified.
    var bookkeepingTable: String { "\(bookkeepingSchema).schema_migrations" }
}
