import PriceDB
import Testing
@testable import PriceSQL

@Suite("Statements carry their SQL, parameter encoding and row decoding")
struct StatementTests {
    static let example = Statement(name: "example", sql: "select $1, $2",
                                   parameters: (Param<String>("name", .text), Param<Int?>("count", .integer)),
                                   columns: (Column<String>("name", .text), Column<Int?>("count", .integer), Column<Bool>("ok", .boolean)))

    @Test func parametersAreEncodedInOrderWithNilAsNull() {
        #expect(Self.example.encoded(("a", nil)) == ["a", nil])
        #expect(Self.example.encoded(("a", 7)) == ["a", "7"])
        guard case .prepared(let prepared, let parameters) = Self.example.query(("b", 3)) else {
            Issue.record("a statement is sent prepared")
            return
        }
        #expect(prepared.name == "example" && parameters == ["b", "3"])
    }

    @Test func rowsDecodeToTheColumnsTypes() throws {
        let rows = try Self.example.rows(QueryResult(rows: [["a", "2", "t"], ["b", nil, "f"]])).get()
        #expect(rows.count == 2)
        #expect(rows[0] == ("a", 2, true))
        #expect(rows[1] == ("b", nil, false))
    }

    @Test func anotherColumnCountIsAnErrorValue() {
        let result = Self.example.rows(QueryResult(rows: [["a", "2"]]))
        #expect(throws: RowDecodingError.self) { try result.get() }
        guard case .failure(let error) = result else { return }
        #expect(error.statement == "example" && error.row == 0)
        #expect(error.message == "2 columns, expected 3")
    }

    @Test func aValueOfAnotherTypeOrAnUnexpectedNullIsAnErrorValue() {
        guard case .failure(let notInteger) = Self.example.rows(QueryResult(rows: [["a", "2", "t"], ["b", "two", "t"]])) else {
            Issue.record("'two' is not an integer")
            return
        }
        #expect(notInteger.row == 1 && notInteger.message.hasPrefix("column 2 is 'two'"))
        guard case .failure(let null) = Self.example.rows(QueryResult(rows: [[nil, "2", "t"]])) else {
            Issue.record("name is not nullable")
            return
        }
        #expect(null.message == "column 1 is NULL, not text")
        #expect(throws: RowDecodingError.self) { try Self.example.rows(QueryResult(rows: [["a", "2", "yes"]])).get() }
    }

    @Test func firstRowIsNilWithoutRows() throws {
        #expect(try Self.example.firstRow(QueryResult()).get() == nil)
        #expect(try Self.example.firstRow(nil).get() == nil)
    }

    @Test func textRowsAreCheckedAgainstTheirColumns() throws {
        let row: TextRow = ["a", "hourly", "USD", "250", "3", "4", "2026-01-01 00:00:00+00"]
        #expect(try Statements.medians.rows(QueryResult(rows: [row])).get() == [row])
        var nulls = row
        nulls[3] = nil
        #expect(try Statements.medians.rows(QueryResult(rows: [nulls])).get() == [nulls])
        var wrongType = row
        wrongType[4] = "three"
        #expect(throws: RowDecodingError.self) { try Statements.medians.rows(QueryResult(rows: [wrongType])).get() }
        #expect(throws: RowDecodingError.self) { try Statements.medians.rows(QueryResult(rows: [Array(row.dropLast())])).get() }
    }

    @Test func textCellsAreCheckedWhereTheyLie() throws {
        let row: TextRow = ["a", "hourly", "USD", "250", "3", "4", "2026-01-01 00:00:00+00"]
        var nulls = row
        nulls[3] = nil
        var wrongType = row
        wrongType[4] = "three"
        var overflow = row
        overflow[5] = "9223372036854775808"
        var notABoolean = Statements.quoteColumns.map { column -> String? in
            switch column.type {
            case .integer, .bigint: return "1"
            case .boolean: return "t"
            default: return "x"
            }
        }
        #expect(throws: Never.self) { try Statements.quotes.cells(QueryResult(rows: [notABoolean])).get() }
        notABoolean[Statements.quoteColumns.firstIndex { $0.type == .boolean }!] = "true"
        for rows in [[row], [row, nulls], []] {
            let result = QueryResult(rows: rows)
            #expect(try Statements.medians.cells(result).get() == result.cells, "\(rows)")
        }
        let refused: [([TextRow], Int, String)] = [
            ([nulls, wrongType], 1, "column reporters is 'three', not integer"),
            ([row, Array(row.dropLast())], 1, "6 columns, expected 7"),
            ([row, overflow], 1, "column reports is '9223372036854775808', not integer"),
        ]
        for (rows, index, message) in refused {
            guard case .failure(let error) = Statements.medians.cells(QueryResult(rows: rows)) else {
                Issue.record("accepted \(rows)")
                continue
            }
            #expect((error.statement, error.row, error.message) == (Statements.medians.name, index, message))
        }
        guard case .failure(let boolean) = Statements.quotes.cells(QueryResult(rows: [notABoolean])) else {
            Issue.record("a boolean column accepted 'true' (libpq sends t or f)")
            return
        }
        #expect(boolean.message.hasSuffix("'true', not boolean"))
    }

    /// The byte-wise integer check says what `Int64(_:)` says, on the edges and on random digit strings.
    @Test func integerCellsReadAsInt64Does() {
        var samples = ["0", "-0", "+0", "-", "+", "", "12a", " 1", "1 ", "+-1", "--1", "007",
                       "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
                       "+9223372036854775807", "99999999999999999999", String(repeating: "0", count: 40) + "1", "١"]
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789-+ x")
        for _ in 0..<2_000 {
            let length = Int.random(in: 0...21, using: &generator)
            samples.append(String((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
        }
        for sample in samples {
            for type in [SQLType.integer, .bigint] {
                var text = sample
                #expect(text.withUTF8(type.accepts(utf8:)) == (Int64(sample) != nil), "\(sample)")
            }
        }
    }

    @Test func theMedianStatementsSelectTheirDeclaredColumnsInOrder() {
        let select = "select m.location_id, m.rate_kind, m.currency, m.median_cents, m.reporters, m.reports, m.last_reported_at"
        for statement in [Statements.median.sql, Statements.medians.sql, Statements.medianOfKind.sql,
                          Statements.mediansOfKind.sql, Statements.medianOfAllKinds.sql, Statements.mediansOfAllKinds.sql] {
            #expect(statement.hasPrefix(select))
        }
        for statement in Statements.allQuotes {
            #expect(statement.sql.hasPrefix("select " + Statements.quoteColumns.map { "q." + $0.name }.joined(separator: ", ")))
            #expect(statement.columns == Statements.quoteColumns)
        }
    }

    @Test func everyStatementDeclaresOneParameterPerPlaceholder() {
        for statement in Statements.catalog + OwnerStatements.catalog {
            let highest = (1...12).last { statement.sql.contains("$\($0)") } ?? 0
            #expect(statement.parameters.count == highest, "\(statement.name)")
        }
    }

    @Test func namesAreUniqueAndThePoolPreparesEveryServiceStatement() {
        let names = (Statements.catalog + OwnerStatements.catalog).map(\.name)
        #expect(Set(names).count == names.count)
        #expect(Statements.all.map(\.name) == Statements.catalog.map(\.name))
        #expect(Statements.all.last?.name == Statements.placeMatches.last?.name)
    }

    @Test func aQuoteCallPassesExactlyTheArgumentsGiven() {
        let all = Statements.QuoteArguments(locationIDs: #"["a"]"#, rateKind: "daily", startsAt: "2026-03-02", duration: "PT2H")
        #expect(Statements.quotes(for: all).name == Statements.quotes.name)
        #expect(Statements.quotes.encoded(all) == [#"["a"]"#, "daily", "2026-03-02", "PT2H"])
        let some = Statements.QuoteArguments(locationIDs: "[]", duration: "PT1H")
        let statement = Statements.quotes(for: some)
        #expect(statement.encoded(some) == ["[]", "PT1H"])
        #expect(statement.parameters.map(\.name) == ["location_ids", "duration"])
        #expect(statement.sql.contains("duration => $2::interval") && !statement.sql.contains("rate_kind =>"))
    }

    @Test func roleDefaultStatementsQuoteTheRoleName() {
        #expect(OwnerStatements.resetRoleDefaults("a\"b", inDatabase: nil) == #"alter role "a""b" reset all"#)
        #expect(OwnerStatements.resetRoleDefaults("r", inDatabase: "d b") == #"alter role "r" in database "d b" reset all"#)
        #expect(OwnerStatements.setRoleDefault("r", name: "jit", value: "off") == #"alter role "r" set jit = off"#)
    }
}
