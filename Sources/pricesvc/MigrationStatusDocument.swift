import PriceDB
import PriceJSON
import PriceMigrations

/// What `pricesvc migrate` does: apply, or only report (`--status`, `--dry-run`).
enum MigrateMode {
    case apply, status, dryRun
}

/// The JSON `pricesvc migrate --status` and `--dry-run` print (docs/upgrading.md): the two schema
/// versions, what differs, whether this build may serve the database, and for `--dry-run` the plan.
struct MigrationStatusDocument {
    let status: MigrationStatus
    /// nil for `--status`; the plan or the refusal for `--dry-run`.
    let plan: Result<MigrationPlan, DatabaseError>?

    var json: String {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("database_schema_version"); Self.version(status.databaseVersion, &writer)
        writer.key("migrations_schema_version"); Self.version(status.version, &writer)
        writer.key("database_is_newer"); writer.bool(status.databaseIsNewer)
        let problem = status.problem
        writer.key("compatible"); writer.bool(problem == nil)
        writer.key("problem"); writer.string(problem)
        let isVersioned = { (name: String) in name.first?.isNumber == true }
        Self.list("pending_versioned", status.pending.filter(isVersioned), &writer)
        Self.list("changed_repeatable", status.pending.filter { !isVersioned($0) }, &writer)
        Self.list("changed_versioned", status.changed, &writer)
        Self.list("unknown_applied", status.unknownApplied, &writer)
        Self.list("superseded_versioned", status.superseded, &writer)
        if let plan {
            switch plan {
            case .success(let plan):
                writer.key("would_migrate"); writer.bool(true)
                writer.key("records_version"); writer.bool(plan.recordsVersion)
                writer.key("steps")
                writer.beginArray()
                for step in plan.steps {
                    writer.beginObject()
                    writer.key("file"); writer.string(step.file.name)
                    writer.key("reapplication"); writer.bool(step.isReapplication)
                    writer.endObject()
                }
                writer.endArray()
                writer.key("refusal"); writer.null()
            case .failure(let error):
                writer.key("would_migrate"); writer.bool(false)
                writer.key("records_version"); writer.bool(false)
                writer.key("steps"); writer.beginArray(); writer.endArray()
                writer.key("refusal"); writer.string(error.explanation)
            }
        }
        writer.endObject()
        return writer.text
    }

    private static func version(_ version: SchemaVersion?, _ writer: inout JSONWriter) {
        guard let version else { return writer.null() }
        writer.beginObject()
        writer.key("version"); writer.number(version.version)
        writer.key("compatible_from"); writer.number(version.compatibleFrom)
        writer.endObject()
    }

    private static func list(_ key: String, _ names: [String], _ writer: inout JSONWriter) {
        writer.key(key)
        writer.beginArray()
        for name in names { writer.string(name) }
        writer.endArray()
    }
}
