import Foundation
import Testing
import PriceDB
import PriceDBTestKit
@testable import PriceMigrations

/// The migration runner against a real server, with small SQL files written by each test.
@Suite struct MigrationIntegrationTests {
    /// A temporary migrations directory, removed when the test ends.
    final class MigrationDirectory {
        let path = NSTemporaryDirectory() + "pricedb-migrations-" + UUID().uuidString

        init(_ files: [String: String]) throws {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            for (name, sql) in files { try write(name, sql) }
        }

        deinit { try? FileManager.default.removeItem(atPath: path) }

        func write(_ name: String, _ sql: String) throws {
            try sql.write(toFile: path + "/" + name, atomically: true, encoding: .utf8)
        }
    }

    let layout = MigrationLayout.likePricesvc

    let baseFiles = [
        "0001_items.sql": "create table items (id int primary key);\ninsert into items values (1), (2);\n",
        "0002_labels.sql": "alter table items add column label text;\ncomment on table items is 'test';\n",
        "policies.sql": "create or replace view item_count as select count(*) as n from items;\n",
        "README.md": "not a migration",
    ]

    @Test func migratingTwiceAppliesEachFileOnceThenSaysUpToDate() throws {
        let database = try ScratchDatabase()
        let directory = try MigrationDirectory(baseFiles)
        let runner = MigrationRunner(conninfo: database.conninfo, directory: directory.path, layout: layout)

        let first = try runner.run()
        #expect(first.applied == ["0001_items.sql", "0002_labels.sql", "policies.sql"])
        let second = try runner.run()
        #expect(second.isUpToDate)
        #expect(second.summary == "already up to date")
        #expect(try database.admin("select n from item_count").singleValue == "2")
        #expect(try runner.status().isCurrent)
    }

    @Test func recordedChecksumsAreTheSHA256OfTheFileAsPostgreSQLComputesIt() throws {
        let database = try ScratchDatabase()
        let directory = try MigrationDirectory(baseFiles)
        _ = try MigrationRunner(conninfo: database.conninfo, directory: directory.path, layout: layout).run()
        for (name, sql) in baseFiles where name.hasSuffix(".sql") {
            let recorded = try database.admin("select checksum from pricesvc_meta.applied_migrations() where name = $1", [name]).singleValue
            let computed = try database.admin("select encode(sha256(convert_to($1, 'UTF8')), 'hex')", [sql]).singleValue
            #expect(recorded != nil && recorded == computed)
        }
        #expect(try MigrationRunner.files(in: directory.path).map(\.name).sorted() == ["0001_items.sql", "0002_labels.sql", "policies.sql"])
    }

    @Test func aChangedAppliedFileIsRefusedAndNothingElseRuns() throws {
        let database = try ScratchDatabase()
        let directory = try MigrationDirectory(baseFiles)
        let runner = MigrationRunner(conninfo: database.conninfo, directory: directory.path, layout: layout)
        _ = try runner.run()
        try directory.write("0001_items.sql", "create table items (id bigint primary key);\n")
        try directory.write("0003_more.sql", "create table more (id int);\n")

        #expect { try runner.run() } throws: { error in
            guard let error = error as? DatabaseError else { return false }
            return error.code == .migrationChecksumMismatch && error.message.contains("0001_items.sql")
        }
        #expect(try database.admin("select to_regclass('more') is null").singleValue == "t")
        let status = try runner.status()
        #expect(status.changed == ["0001_items.sql"] && status.pending == ["0003_more.sql"])
    }

    @Test func aChangedPolicyFileIsAppliedAgain() throws {
        let database = try ScratchDatabase()
        let directory = try MigrationDirectory(baseFiles)
        let runner = MigrationRunner(conninfo: database.conninfo, directory: directory.path, layout: layout)
        _ = try runner.run()
        try directory.write("policies.sql", "create or replace view item_count as select count(*) * 10 as n from items;\n")
        #expect(try runner.run().applied == ["policies.sql"])
        #expect(try database.admin("select n from item_count").singleValue == "20")
    }

    @Test func repeatableFilesRunInNameOrderWithPoliciesLastAndPoliciesFollowsAnyChange() throws {
        let database = try ScratchDatabase()
        var files = baseFiles
        // policies.sql reads what the other repeatable files made: it must run after them.
        files["views.sql"] = "create or replace view item_ids as select id from items;\n"
        files["policies.sql"] = "create or replace view item_count as select count(*) as n from item_ids;\n"
        let directory = try MigrationDirectory(files)
        let runner = MigrationRunner(conninfo: database.conninfo, directory: directory.path, layout: layout)

        #expect(try runner.run().applied == ["0001_items.sql", "0002_labels.sql", "views.sql", "policies.sql"])
        try directory.write("views.sql", "create or replace view item_ids as select id from items where id > 1;\n")
        #expect(try runner.status().pending == ["views.sql"])
        #expect(try runner.run().applied == ["views.sql", "policies.sql"])
        #expect(try database.admin("select n from item_count").singleValue == "1")
        try directory.write("0003_more.sql", "insert into items values (3);\n")
        #expect(try runner.run().applied == ["0003_more.sql", "views.sql", "policies.sql"])
        #expect(try runner.status().isCurrent)
    }

    @Test func anotherLayoutRunsItsFirstAndFinalFilesAroundTheOthersAndKeepsItsOwnBookkeeping() throws {
        let database = try ScratchDatabase()
        // By name the order would be access, labels, tunables: each file reads what the one before made.
        let directory = try MigrationDirectory([
            "0001_items.sql": baseFiles["0001_items.sql"]!,
            "tunables.sql": "create or replace function item_floor() returns int language sql immutable as 'select 1';\n",
            "labels.sql": "create or replace view item_ids as select id from items where id > item_floor();\n",
            "access.sql": "create or replace view item_count as select count(*) as n from item_ids;\n",
            "VERSION": "version = 1\ncompatible_from = 1\n",
        ])
        let runner = MigrationRunner(conninfo: database.conninfo, directory: directory.path, layout: .other)

        #expect(try runner.run().applied == ["0001_items.sql", "tunables.sql", "labels.sql", "access.sql"])
        #expect(try database.admin("select n from item_count").singleValue == "1")
        #expect(try database.admin("select name from app_meta.applied_migrations() order by name").rows
                == [["0001_items.sql"], ["access.sql"], ["labels.sql"], ["schema-version"], ["tunables.sql"]])
        #expect(try database.admin("""
            select count(*) from pg_catalog.pg_constraint
            where conrelid = 'app_meta.schema_migrations'::regclass
              and pg_catalog.pg_get_constraintdef(oid) like '%app.migrator_schema_version%'
            """).singleValue == "1")
        #expect(try database.admin("select to_regnamespace('pricesvc_meta') is null").singleValue == "t")
        #expect(try runner.status().isCurrent)
        #expect(try runner.run().isUpToDate)
    }

    @Test func anAfterStepRunsOnceAfterTheRepeatableFilesAndReadsWhatTheyDefine() throws {
        let database = try ScratchDatabase()
        var files = baseFiles
        // A trigger on a function a repeatable file defines: no versioned file could create it.
        files["stamps.sql"] = """
            create or replace function stamp() returns trigger language plpgsql as $$
            begin new.label := coalesce(new.label, 'stamped'); return new; end $$;
            """
        files["0003_stamp_trigger.after.sql"] = """
            create or replace trigger items_stamp before insert on items for each row execute function stamp();
            update items set label = 'backfilled' where label is null;
            """
        let directory = try MigrationDirectory(files)
        let runner = MigrationRunner(conninfo: database.conninfo, directory: directory.path, layout: layout)

        #expect(try runner.run().applied == ["0001_items.sql", "0002_labels.sql", "stamps.sql",
                                            "0003_stamp_trigger.after.sql", "policies.sql"])
        try database.admin("insert into items (id) values (3)")
        #expect(try database.admin("select label from items order by id").rows == [["backfilled"], ["backfilled"], ["stamped"]])

        // The repeatable file changes: it runs again, the after-step does not (the backfill is not repeated).
        try directory.write("stamps.sql", """
            create or replace function stamp() returns trigger language plpgsql as $$
            begin new.label := coalesce(new.label, 'restamped'); return new; end $$;
            """)
        #expect(try runner.run().applied == ["stamps.sql", "policies.sql"])
        try database.admin("insert into items (id) values (4)")
        #expect(try database.admin("select label from items where id = 4").singleValue == "restamped")
        #expect(try database.admin("select count(*) from items where label = 'backfilled'").singleValue == "2")
        #expect(try runner.status().isCurrent)

        // Its text is as fixed as a versioned file's.
        try directory.write("0003_stamp_trigger.after.sql", "select 1;\n")
        #expect { try runner.run() } throws: { error in
            (error as? DatabaseError)?.code == .migrationChecksumMismatch
        }
    }

    @Test func theFirstFilesFollowUpRunsInItsTransactionAndOnlyWhenItRuns() throws {
        let database = try ScratchDatabase()
        var withFollowUp = layout
        // Which transaction ran it, beside the one that ran settings.sql.
        withFollowUp.firstFileFollowUp = "insert into runs values ('follow-up', txid_current());"
        var files = baseFiles
        files["0003_runs.sql"] = "create table runs (what text, xid bigint);\n"
        files["settings.sql"] = "insert into runs values ('settings', txid_current());\n"
        files["views.sql"] = "create or replace view item_ids as select id from items;\n"
        let directory = try MigrationDirectory(files)
        let runner = MigrationRunner(conninfo: database.conninfo, directory: directory.path, layout: withFollowUp)

        #expect(try runner.run().applied == ["0001_items.sql", "0002_labels.sql", "0003_runs.sql", "settings.sql",
                                            "views.sql", "policies.sql"])
        #expect(try database.admin("select count(distinct xid), count(*) from runs").rows == [["1", "2"]])
        // Another file's change: no follow-up.
        try directory.write("views.sql", "create or replace view item_ids as select id from items where id > 0;\n")
        #expect(try runner.run().applied == ["views.sql", "policies.sql"])
        #expect(try database.admin("select count(*) from runs where what = 'follow-up'").singleValue == "1")
        // The first file's change: the follow-up again, in its transaction.
        try directory.write("settings.sql", "insert into runs values ('settings again', txid_current());\n")
        #expect(try runner.run().applied == ["settings.sql", "policies.sql"])
        #expect(try database.admin("""
            select count(*) from runs f join runs s on s.xid = f.xid
            where f.what = 'follow-up' and s.what like 'settings%'
            """).singleValue == "2")

        // A failing follow-up rolls the first file back with it: neither is applied nor recorded.
        withFollowUp.firstFileFollowUp = "select 1 / 0;"
        try directory.write("settings.sql", "insert into runs values ('rolled back', txid_current());\n")
        let failing = MigrationRunner(conninfo: database.conninfo, directory: directory.path, layout: withFollowUp)
        #expect(throws: DatabaseError.self) { try failing.run() }
        #expect(try database.admin("select count(*) from runs where what = 'rolled back'").singleValue == "0")
        #expect(try failing.status().pending == ["settings.sql"])
    }

    @Test func aFailingFileRollsBackAloneAndIsNotRecorded() throws {
        let database = try ScratchDatabase()
        var files = baseFiles
        files["0002_labels.sql"] = "create table partial (x int);\nselect 1 / 0;\n"
        let directory = try MigrationDirectory(files)
        let runner = MigrationRunner(conninfo: database.conninfo, directory: directory.path, layout: layout)

        #expect { try runner.run() } throws: { error in
            guard let error = error as? DatabaseError else { return false }
            return error.code == .migrationFailed && error.sqlState == "22012" && error.message.contains("0002_labels.sql")
        }
        #expect(try database.admin("select to_regclass('partial') is null, to_regclass('items') is not null").rows == [["t", "t"]])
        #expect(try database.admin("select name from pricesvc_meta.schema_migrations").rows == [["0001_items.sql"]])

        try directory.write("0002_labels.sql", baseFiles["0002_labels.sql"]!)
        #expect(try runner.run().applied == ["0002_labels.sql", "policies.sql"])
    }

    @Test func twoMigratorsStartedAtOnceTakeTurns() throws {
        let database = try ScratchDatabase()
        var files = baseFiles
        files["0001_items.sql"] = "select pg_sleep(0.5);\n" + baseFiles["0001_items.sql"]!
        let directory = try MigrationDirectory(files)
        let runner = MigrationRunner(conninfo: database.conninfo, directory: directory.path, layout: layout)

        let reports = [onThread { try runner.run() }, onThread { try runner.run() }].map { try? $0.value() }
        #expect(reports.allSatisfy { $0 != nil })
        #expect(reports.compactMap { $0 }.map(\.applied.count).sorted() == [0, 3])
        #expect(try database.admin("select count(*) from pricesvc_meta.schema_migrations").singleValue == "3")
    }

    @Test func statusWorksOnADatabaseNeverMigrated() throws {
        let database = try ScratchDatabase()
        let directory = try MigrationDirectory(baseFiles)
        let status = try MigrationRunner(conninfo: database.conninfo, directory: directory.path, layout: layout).status()
        #expect(status.pending == ["0001_items.sql", "0002_labels.sql", "policies.sql"])
        #expect(!status.isCurrent)
    }

    @Test func aMissingDirectoryIsAClearError() throws {
        let database = try ScratchDatabase()
        #expect { try MigrationRunner(conninfo: database.conninfo, directory: "/nonexistent/migrations", layout: layout).run() } throws: { error in
            (error as? DatabaseError)?.code == .migrationFailed && "\(error)".contains("/nonexistent/migrations")
        }
    }
}
