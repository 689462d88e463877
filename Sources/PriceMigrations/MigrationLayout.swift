/// What one application calls its migrations and their bookkeeping. The migration system knows none of
/// these names: its caller passes them in (pricesvc's is `MigrationLayout.pricesvc`, in the executable).
///
/// The rest is the same for every application: versioned `NNNN_name.sql` and repeatable `name.sql` files
/// (``MigrationPlanner``), `VERSION` (``SchemaVersion``), `superseded.txt` (``SupersededChecksum``).
///
/// - Important: Deployed databases hold these names: the bookkeeping schema, the check constraint that
///   reads ``migratorSetting``, and concurrent migrators meet on ``advisoryLockKey``. Changing one for a
///   running application makes `migrate` start a second bookkeeping and run every file again, or lets
///   an older and a newer migrator run at once.
public struct MigrationLayout: Sendable, Hashable {
    /// The repeatable file that runs first among the repeatable files, since every other file may read
    /// what it defines.
    public var firstFileName: String
    /// The repeatable file that runs last, and whenever any other file ran: roles, grants, row-level
    /// security and the ownership hand-off, so nothing another file created is left reachable or owned by
    /// the migrating superuser.
    public var finalFileName: String
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

    public init(firstFileName: String, finalFileName: String, bookkeepingSchema: String, migratorSetting: String,
                advisoryLockKey: Int64) {
        self.firstFileName = firstFileName
        self.finalFileName = finalFileName
        self.bookkeepingSchema = bookkeepingSchema
        self.migratorSetting = migratorSetting
        self.advisoryLockKey = advisoryLockKey
    }

    /// The table of applied files (and of the schema version's row), schema-qualified.
    var bookkeepingTable: String { "\(bookkeepingSchema).schema_migrations" }
}
