import Foundation
import Testing
@testable import PriceDB
import PriceDBTestKit

/// One pipelined round trip against a real server: shared transaction, typed results, error fields.
@Suite struct PipelineIntegrationTests {
    @Test func theIdentitySettingAndTheStatementShareOneTransaction() throws {
        let database = try ScratchDatabase()
        let pool = database.pool()
        let results = try pool.run([
            .sql("select set_config('role', 'pg_read_all_data', true), set_config('request.jwt', $1, true)", ["header.payload.sig"]),
            .sql("select current_setting('request.jwt', true), current_user"),
            .sql("select txid_current()"),
            .sql("select txid_current()"),
        ])
        #expect(results.count == 4)
        #expect(results[1].rows == [["header.payload.sig", "pg_read_all_data"]])
        #expect(results[2].singleValue == results[3].singleValue)

        let next = try pool.run([.sql("select coalesce(current_setting('request.jwt', true), ''), txid_current()")])
        #expect(next[0].rows[0][0] == "")
        #expect(next[0].rows[0][1] != results[2].singleValue)
    }

    @Test func aFailingQueryRollsBackTheWholeBatchAndReportsTheFirstError() throws {
        let database = try ScratchDatabase()
        let pool = database.pool()
        _ = try pool.run([.sql("create table items (id int primary key)")])
        #expect {
            try pool.run([.sql("insert into items values (1)"), .sql("insert into items values (1)"), .sql("select 1/0")])
        } throws: { error in
            guard let error = error as? DatabaseError else { return false }
            return error.code == .server && error.sqlState == "23505" && error.detail == "Key (id)=(1) already exists."
                && !error.isUnavailable
        }
        #expect(try pool.run([.sql("select count(*) from items")])[0].singleValue == "0")
        #expect(pool.stats.discardsTotal == 0)
    }

    @Test func serverErrorsCarrySQLStateMessageDetailAndHint() throws {
        let database = try ScratchDatabase()
        let pool = database.pool()
        _ = try pool.run([.sql("""
            create function over_cap() returns void language plpgsql as $$
            begin
                raise exception using errcode = 'PT429', message = 'reporter cap reached',
                    detail = '10 reports per hour', hint = 'Retry after 42 seconds';
            end $$
            """)])
        #expect(throws: DatabaseError(code: .server, sqlState: "PT429", message: "reporter cap reached",
                                      detail: "10 reports per hour", hint: "Retry after 42 seconds", severity: "ERROR",
                                      reach: .rolledBack)) {
            try pool.run([.sql("select over_cap()")])
        }
    }

    @Test func resultsCarryColumnsRowsNullsAndAffectedRows() throws {
        let database = try ScratchDatabase()
        let pool = database.pool()
        let results = try pool.run([
            .sql("create table items (id int, label text)"),
            .sql("insert into items select g, nullif('item ' || g, 'item 2') from generate_series(1, 3) g"),
            .sql("select id, label from items where id >= $1 order by id", ["2"]),
            .sql("select $1::text is null", [nil]),
        ])
        #expect(results[1].affectedRows == 3)
        #expect(results[1].commandTag == "INSERT 0 3")
        #expect(results[2].columnNames == ["id", "label"])
        #expect(results[2].rows == [["2", nil], ["3", "item 3"]])
        #expect(results[2].value("label", row: 1) == "item 3")
        #expect(results[3].singleValue == "t")
    }

    @Test func preparedStatementsWorkWhetherConfiguredOrFirstUsed() throws {
        let database = try ScratchDatabase()
        let configured = PreparedStatement(name: "double_it", sql: "select $1::int * 2")
        let adHoc = PreparedStatement(name: "triple_it", sql: "select $1::int * 3")
        let pool = database.pool(size: 1, statements: [configured])
        for _ in 0..<2 {
            let results = try pool.run([.prepared(configured, ["21"]), .prepared(adHoc, ["5"]), .prepared(adHoc, ["7"])])
            #expect(results.map(\.singleValue) == ["42", "15", "21"])
        }
        #expect(pool.stats.connectsTotal == 1)
    }

    @Test func aConfiguredStatementTheServerRefusesFailsOnlyTheRequestsThatUseIt() throws {
        let database = try ScratchDatabase()
        let notMigratedYet = PreparedStatement(name: "applied", sql: "select name from missing_schema.applied()")
        let fine = PreparedStatement(name: "fine", sql: "select 'ok'")
        let pool = database.pool(size: 1, statements: [notMigratedYet, fine])
        #expect(try pool.run([.prepared(fine)])[0].singleValue == "ok")
        #expect { try pool.run([.prepared(notMigratedYet)]) } throws: { ($0 as? DatabaseError)?.sqlState == "3F000" }
        try database.admin("create schema missing_schema; create function missing_schema.applied() returns table(name text) language sql as 'select ''0001_x.sql'''")
        #expect(try pool.run([.prepared(notMigratedYet)])[0].singleValue == "0001_x.sql")
        #expect(pool.stats.connectsTotal == 1)
    }

    @Test func anEmptyBatchIsARoundTripThatReturnsNothing() throws {
        let database = try ScratchDatabase()
        #expect(try database.pool().run([]) == [])
    }

    @Test func aStatementThatDoesNotParseFailsWithoutBreakingTheConnection() throws {
        let database = try ScratchDatabase()
        let broken = PreparedStatement(name: "broken", sql: "selec 1")
        let pool = database.pool(size: 1)
        #expect { try pool.run([.prepared(broken)]) } throws: { ($0 as? DatabaseError)?.sqlState == "42601" }
        #expect { try pool.run([.sql("select 1; select 2")]) } throws: { ($0 as? DatabaseError)?.sqlState == "42601" }
        #expect(try pool.run([.sql("select 1")])[0].singleValue == "1")
        #expect(pool.stats.discardsTotal == 0)
    }

    @Test func aParameterWithANulByteIsRefusedBeforeSending() throws {
        let database = try ScratchDatabase()
        let pool = database.pool(size: 1)
        #expect { try pool.run([.sql("select $1", ["a\u{0}b"])]) } throws: { ($0 as? DatabaseError)?.code == .invalidParameter }
        #expect(try pool.run([.sql("select 'still fine'")])[0].singleValue == "still fine")
        #expect(pool.stats.discardsTotal == 0)
    }

    @Test func aLargeBatchIsFlushedWhileResultsArrive() throws {
        let database = try ScratchDatabase()
        let pool = database.pool(size: 1)
        let padding = String(repeating: "x", count: 4000)
        let queries = (0..<500).map { Query.sql("select $1::int, length($2)", ["\($0)", padding]) }
        let results = try pool.run(queries)
        #expect(results.count == 500)
        #expect(results[499].rows == [["499", "4000"]])
    }
}
