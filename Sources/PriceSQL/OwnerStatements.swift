import Foundation
import PriceDB

/// Every statement `pricesvc migrate`, `prune` and `import-rates` send as the owning role (on a
/// `MigrationSession`, unprepared), beside the service's `Statements`.
public enum OwnerStatements {
    /// The role's defaults, in every database (`''` for the role-wide ones).
    public static let roleSettings = Statement(name: "owner_role_settings", sql: """
        select coalesce(d.datname, ''), c.setting
        from pg_catalog.pg_db_role_setting s
        left join pg_catalog.pg_database d on d.oid = s.setdatabase
        cross join lateral pg_catalog.unnest(s.setconfig) c(setting)
        where s.setrole = (select r.oid from pg_catalog.pg_roles r where r.rolname = $1)
        order by 1, 2
        """,
        parameters: Param<String>("role", .text),
        columns: (Column<String>("database", .name), Column<String>("setting", .text)))

    /// Run first in every transaction that sends a signing key, so the secrets never reach the
    /// server log even under `log_statement = all` or `log_min_duration_statement = 0` (all
    /// superuser-only settings, which migrate may set). Several statements: simple protocol only.
    public static let quietTransaction = """
        set local log_statement = 'none';
        set local log_min_duration_statement = -1;
        set local log_min_duration_sample = -1;
        set local log_parameter_max_length = 0;
        set local log_parameter_max_length_on_error = 0;
        set local log_min_error_statement = 'panic'
        """

    /// `migrate`: the first key of an empty set; otherwise where the key is, or "unknown".
    public static let installFirstSigningKey = Statement(name: "owner_install_first_signing_key", sql: """
        select auth.install_first_signing_key($1::bytea)
        """,
        parameters: Param<Bytea>("secret", .bytea),
        columns: Column<String>("install_first_signing_key", .text))

    /// `keys add`: the next key; returns its id.
    public static let addSigningKey = Statement(name: "owner_add_signing_key", sql: """
        select auth.add_signing_key($1::bytea, $2::boolean)
        """,
        parameters: (Param<Bytea>("secret", .bytea), Param<String>("shared", .boolean)),
        columns: Column<String>("add_signing_key", .text))

    public static let promoteSigningKey = Statement(name: "owner_promote_signing_key", sql: """
        select auth.promote_signing_key()
        """,
        parameters: (), columns: Column<String>("promote_signing_key", .text))

    public static let retireSigningKey = Statement(name: "owner_retire_signing_key", sql: """
        select auth.retire_signing_key($1)
        """,
        parameters: Param<String>("slot", .text), columns: Column<String>("retire_signing_key", .text))

    public static let signingKeyList = Statement(name: "owner_signing_key_list", sql: """
        select key_id, slot, shared, installed_at from auth.signing_key_list()
        """,
        parameters: (),
        columns: (Column<String>("key_id", .text), Column<String>("slot", .text), Column<Bool>("shared", .boolean),
                  Column<String>("installed_at", .timestamptz)))

    public static let createPublishableKey = Statement(name: "owner_create_publishable_key", sql: """
        select id, created_at from auth.create_publishable_key($1, $2::bytea, $3)
        """,
        parameters: (Param<String>("name", .text), Param<Bytea>("key_hash", .bytea), Param<String>("display", .text)),
        columns: (Column<String>("id", .uuid), Column<String>("created_at", .timestamptz)))

    public static let publishableKeyList = Statement(name: "owner_publishable_key_list", sql: """
        select id, name, display, created_at, revoked_at from auth.publishable_key_list()
        """,
        parameters: (),
        columns: (Column<String>("id", .uuid), Column<String>("name", .text), Column<String>("display", .text),
                  Column<String>("created_at", .timestamptz), Column<String?>("revoked_at", .timestamptz)))

    public static let revokePublishableKey = Statement(name: "owner_revoke_publishable_key", sql: """
        select auth.revoke_publishable_key($1::uuid)
        """,
        parameters: Param<String>("id", .uuid), columns: Column<Bool>("revoke_publishable_key", .boolean))

    public static let prune = Statement(name: "owner_prune", sql: """
        select sessions, refresh_tokens, users from auth.prune(make_interval(secs => $1::double precision))
        """,
        parameters: Param<Int>("older_than_seconds", .doublePrecision),
        columns: (Column<Int>("sessions", .bigint), Column<Int>("refresh_tokens", .bigint), Column<Int>("users", .bigint)))

    /// One statement outside a transaction block: it commits, releasing its locks, before the next.
    public static let foldStaleMedianGroups = Statement(name: "owner_median_fold_stale", sql: """
        select private.median_fold_stale(make_interval(secs => $1::double precision), $2::integer)
        """,
        parameters: (Param<Int>("older_than_seconds", .doublePrecision), Param<Int>("groups", .integer)),
        columns: Column<Int>("folded", .integer))

    /// One batch of reports past retention: one statement outside a transaction block, so it commits
    /// (releasing its groups' fold locks) before the next.
    public static let pruneReports = Statement(name: "owner_prune_reports", sql: """
        select reports, groups from private.prune_reports($1::integer)
        """,
        parameters: Param<Int>("max_groups", .integer),
        columns: (Column<Int>("reports", .bigint), Column<Int>("groups", .integer)))

    public static let forgetUser = Statement(name: "owner_forget_user", sql: """
        select users, sessions, refresh_tokens, reports, locations from auth.forget_user($1::uuid)
        """,
        parameters: Param<String>("user_id", .uuid),
        columns: (Column<Int>("users", .bigint), Column<Int>("sessions", .bigint), Column<Int>("refresh_tokens", .bigint),
                  Column<Int>("reports", .bigint), Column<Int>("locations", .bigint)))

    /// A maintenance command succeeded: what /metrics reports as its last run.
    public static let recordMaintenanceRun = Statement(name: "owner_record_maintenance_run", sql: """
        select private.record_maintenance_run($1)
        """,
        parameters: Param<String>("task", .text),
        columns: Column<String?>("record_maintenance_run", .void))

    /// When `pricesvc prune` and `import-rates` last succeeded (Unix seconds). Sent by `serve` with its
    /// own login on a connection of its own (never a pool connection: a scrape must not wait behind
    /// requests), every half minute, for /metrics.
    public static let maintenanceRuns = Statement(name: "service_maintenance_runs", sql: """
        select task, pg_catalog.date_part('epoch', succeeded_at)::bigint as succeeded_at
        from pricesvc_meta.maintenance_runs()
        """,
        parameters: (), columns: (Column<String>("task", .text), Column<Int>("succeeded_at", .bigint)))

    /// Whether a role bypasses row security (a superuser, or BYPASSRLS): `serve` refuses such a login.
    public static let roleBypassesRowSecurity = Statement(name: "owner_role_bypasses_rls", sql: """
        select current_user::text as role, rolsuper or rolbypassrls as bypasses from pg_catalog.pg_roles where rolname = current_user
        """,
        parameters: (), columns: (Column<String>("role", .text), Column<Bool>("bypasses", .boolean)))

    public static let timeZoneNames = Statement(name: "owner_time_zone_names", sql: """
        select name from pg_catalog.pg_timezone_names
        """,
        parameters: (), columns: Column<String>("name", .text))

    public static let replacePublishedRates = Statement(name: "owner_cds_replace_source", sql: """
        select status, checksum, zones, policies, rules, time_spans, rates
        from private.cds_replace_source($1, $2::jsonb)
        """,
        parameters: (Param<String>("source", .text), Param<String>("document", .jsonb)),
        columns: (Column<String>("status", .text), Column<String>("checksum", .text), Column<Int>("zones", .integer),
                  Column<Int>("policies", .integer), Column<Int>("rules", .integer), Column<Int>("time_spans", .integer),
                  Column<Int>("rates", .integer)))

    /// `pricesvc import-places`: one source's places replaced by a checked GeoJSON file's (PublishedRates.PlacesFile).
    public static let replacePlaces = Statement(name: "owner_places_replace_source", sql: """
        select previous, stored from private.places_replace_source($1, $2::jsonb)
        """,
        parameters: (Param<String>("source", .text), Param<String>("document", .jsonb)),
        columns: (Column<Int>("previous", .integer), Column<Int>("stored", .integer)))

    /// After an import that wrote places: fresh statistics, for the searches' plans.
    public static let analyzePlaces = "analyze private.places"

    /// After an import that wrote: every table of schema `cds` the quote functions read.
    public static let analyzePublishedRates = """
        analyze cds.sources, cds.zones, cds.policies, cds.zone_policies, cds.rules, cds.time_spans, cds.rates,
                cds.schedules, cds.schedule_intervals, cds.time_zone_offsets, private.places
        """

    /// The role-default statements are DDL built from a quoted identifier (no parameters in DDL).
    public static func resetRoleDefaults(_ role: String, inDatabase database: String?) -> String {
        if let database {
            return "alter role \(quoteIdentifier(role)) in database \(quoteIdentifier(database)) reset all"
        }
        return "alter role \(quoteIdentifier(role)) reset all"
    }

    public static func setRoleDefault(_ role: String, name: String, value: String) -> String {
        "alter role \(quoteIdentifier(role)) set \(name) = \(value)"
    }

    static func quoteIdentifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Every fixed statement the owner tasks send (the role-default DDL is built per role).
    public static let catalog: [StatementDescription] = [
        roleSettings.description, installFirstSigningKey.description, addSigningKey.description,
        promoteSigningKey.description, retireSigningKey.description, signingKeyList.description,
        createPublishableKey.description, publishableKeyList.description, revokePublishableKey.description,
        prune.description,
        foldStaleMedianGroups.description, timeZoneNames.description, replacePublishedRates.description,
        replacePlaces.description,
        pruneReports.description, forgetUser.description, recordMaintenanceRun.description,
        roleBypassesRowSecurity.description, maintenanceRuns.description,
    ]
}

extension MigrationSession {
    /// Runs `statement` unprepared and decodes its rows; a row that does not decode is a protocol
    /// violation (the schema is not what this build expects).
    public func rows<Parameters, Row>(_ statement: Statement<Parameters, Row>, _ parameters: Parameters) throws(DatabaseError) -> [Row] {
        let result = try execute(statement.sql, statement.encoded(parameters))
        switch statement.rows(result) {
        case .success(let rows): return rows
        case .failure(let error): throw DatabaseError(code: .protocolViolation, message: error.description)
        }
    }
}
