import PriceHTTPMessage

/// What a client asks of a function's result besides calling it, with PostgREST's syntax and
/// status codes: horizontal filters, `select`, `order`, `limit`/`offset` and `Range`, the media
/// type (`Accept`) and `Prefer: count=exact`. Parsed and checked against the result's columns
/// where the request arrives, so a mistake is a 4xx that never takes a database worker; applied
/// to the typed rows on the worker (`ReadOptions.render`).
///
/// Anything else an SDK can send (other operators, embedding, logic trees, casts, other
/// preferences) is refused with a 4xx that names it: nothing is ever silently ignored.
package struct ReadOptions: Sendable {
    /// `nil` is `select=*`: every column, in the function's order.
    package var select: [(name: String, column: Int)]?
    package var filters: [RowFilter] = []
    package var order: [OrderTerm] = []
    package var range = RowRange()
    package var format = ResultFormat.json(stripNulls: false)
    package var countExact = false

    /// What one request may ask, so that reading and applying the options costs a bounded amount
    /// whatever a client sends, and no number it sends reaches arithmetic that could trap. Each is far
    /// above what a legitimate read needs (the results have at most 10 columns and 200 rows); going
    /// past one is a 400 that names it (docs/api.md).
    package enum Limits {
        /// `limit`, `offset` and the `Range` bounds: integers up to 2^31-1, so page arithmetic stays
        /// far from `Int`'s range. A `Range` bound beyond it reads as this (no result has that many rows).
        package static let maxIndex = Int(Int32.max)
        package static let maxSelectBytes = 1024
        /// Items of `select` (each `*` counts once). Every output name may appear only once.
        package static let maxSelectItems = 32
        package static let maxOrderBytes = 1024
        package static let maxOrderTerms = 16
        /// Horizontal filters (`column=op.value`) per request.
        package static let maxFilters = 32
        /// One filter's value, e.g. a long `in.(…)` list.
        package static let maxFilterBytes = 8192
        package static let maxListItems = 256
    }

    /// The operators pricesvc implements; PostgREST's others are refused with PGRST127.
    package static let operators = "eq, neq, gt, gte, lt, lte, in, is (and not.<operator>)"

    /// The largest response body a result may make unless the service says otherwise (its
    /// `maxResponseBytes` setting reads this default): larger is 400 PGRST190.
    package static let defaultMaxResponseBytes = 1 << 20

    /// Splits the query string into read options and, for the GET form of a call (`isRead`), the
    /// function's arguments: as in PostgREST, a parameter whose value is an operator expression
    /// (`eq.EUR`) is a filter and any other is an argument. In the POST form every parameter
    /// that is not an option is a filter.
    /// - Parameter offersGeoJSON: the result has `lat` and `lng` columns, so `Accept: application/geo+json`
    ///   may ask for it as a GeoJSON FeatureCollection (`ResultFormat.geoJSON`).
    package static func parse(query: [(name: String, value: String)], headers: HTTPRequest, columns: [ResultColumn],
                      relation: String, isRead: Bool,
                      offersGeoJSON: Bool = false) -> Result<(ReadOptions, arguments: [(String, String)]), APIError> {
        var options = ReadOptions()
        var arguments: [(String, String)] = []
        var limit: Int?
        var offset: Int?
        let context = ColumnLookup(columns: columns, relation: relation)
        do throws(APIError) {
            for (key, value) in query {
                switch key {
                case "select":
                    options.select = try parseSelect(value, context)
                case "order":
                    options.order = try parseOrder(value, context)
                case "limit":
                    limit = try integer(value, name: "limit")
                case "offset":
                    offset = try integer(value, name: "offset")
                    if let offset, offset < 0 {
                        throw APIError.invalidInput("2201X", "OFFSET must not be negative")
                    }
                case "and", "or", "not.and", "not.or":
                    throw notImplemented("logical operators (\(key)=…) are not implemented; filters are combined with and")
                case "columns", "on_conflict":
                    throw notImplemented("the \(key) parameter is not implemented for functions")
                default:
                    let parsed = parseOperator(value)
                    if let dot = key.firstIndex(of: "."),
                       parsed != nil || ["order", "limit", "offset", "and", "or"].contains(String(key[key.index(after: dot)...].split(separator: ".").last ?? "")) {
                        throw APIError(.notEmbedded(String(key[..<dot]), relation: relation))
                    }
                    if let parsed {
                        guard options.filters.count < Limits.maxFilters else {
                            throw tooLong("filters", "at most \(Limits.maxFilters) filters in one request")
                        }
                        guard value.utf8.count <= Limits.maxFilterBytes else {
                            throw tooLong("filter on \(JSONBody.printable(String(key.prefix(60))))",
                                          "a filter's value is at most \(Limits.maxFilterBytes) bytes")
                        }
                        options.filters.append(try filter(key, parsed, context))
                    } else if isRead {
                        arguments.append((key, value))
                    } else {
                        throw APIError(.filterWithoutOperator(value: value, key: key, operators: operators))
                    }
                }
            }
            options.range = try RowRange(limit: limit, offset: offset,
                                         header: isRead && headers.method == "GET" ? headers.header("range") : nil)
            options.format = try ResultFormat(accept: headers.header("accept"), offersGeoJSON: offersGeoJSON)
            options.countExact = try preferCount(headers.header("prefer"))
        } catch {
            return .failure(error)
        }
        return .success((options, arguments))
    }

    package static func notImplemented(_ details: String) -> APIError {
        APIError(.notImplemented(details))
    }

    /// A read option that is over one of `Limits`: 400 PGRST100 naming the option and the limit.
    package static func tooLong(_ option: String, _ limit: String) -> APIError {
        APIError(.overLimit(option: option, limit: limit))
    }

    /// An integer up to 2^31-1, so no page arithmetic can overflow; a negative limit is PostgREST's 416.
    private static func integer(_ text: String, name: String) throws(APIError) -> Int {
        guard let number = Int(text.trimmingSpaces), number <= Limits.maxIndex, number >= -Limits.maxIndex else {
            throw APIError(.notAnInteger(name: name, text: text))
        }
        return number
    }

    // MARK: select

    /// Each output name at most once: `select=*,*,…` would otherwise repeat every column per star and
    /// turn a 15 KB request into a 55 MB answer, and a JSON object with a key twice is
    /// read differently by different clients.
    private static func parseSelect(_ text: String, _ context: ColumnLookup) throws(APIError) -> [(name: String, column: Int)] {
        var selected: [(name: String, column: Int)] = []
        guard !text.isEmpty else { return selected }
        guard text.utf8.count <= Limits.maxSelectBytes else {
            throw tooLong("select", "select is at most \(Limits.maxSelectBytes) bytes (got \(text.utf8.count))")
        }
        let items = topLevelItems(text)
        guard items.count <= Limits.maxSelectItems else {
            throw tooLong("select", "select has at most \(Limits.maxSelectItems) items (got \(items.count))")
        }
        var names: Set<String> = []
        func add(_ name: String, _ column: Int, item: String) throws(APIError) {
            guard names.insert(name).inserted else {
                throw APIError(.selectRepeats(item: item, name: name))
            }
            selected.append((name, column))
        }
        for rawItem in items {
            let item = rawItem.trimmingSpaces
            let parseError = APIError(.malformedSelect(text))
            guard !item.isEmpty else { throw parseError }
            if item.hasSuffix(")") || item.contains("(") {
                if item.hasPrefix("count()") || item.contains(".sum()") || item.contains(".avg()") || item.contains(".count()")
                    || item.contains(".max()") || item.contains(".min()") {
                    throw APIError(.aggregatesNotAllowed)
                }
                var name = Substring(item.prefix { $0 != "(" && $0 != "!" })
                if let colon = name.firstIndex(of: ":") { name = name[name.index(after: colon)...] }
                while name.hasPrefix(".") { name = name.dropFirst() }
                throw APIError(.noRelationship(relation: context.relation, name: String(name)))
            }
            if item.contains("::") { throw notImplemented("casts in select (\(JSONBody.printable(item))) are not implemented") }
            if item.contains("->") { throw notImplemented("JSON paths in select (\(JSONBody.printable(item))) are not implemented") }
            if item == "*" {
                for (index, column) in context.columns.enumerated() { try add(column.name, index, item: item) }
                continue
            }
            var alias: String?
            var name = item
            if let colon = item.firstIndex(of: ":") {
                alias = String(item[..<colon]).trimmingSpaces
                name = String(item[item.index(after: colon)...]).trimmingSpaces
                guard let label = alias, !label.isEmpty, !name.isEmpty, name != "*" else { throw parseError }
            }
            try add(alias ?? name, try context.index(of: name), item: item)
        }
        return selected
    }

    /// Splits at commas outside parentheses and double quotes.
    private static func topLevelItems(_ text: String) -> [Substring] {
        var items: [Substring] = []
        var depth = 0
        var quoted = false
        var start = text.startIndex
        for index in text.indices {
            switch text[index] {
            case "\"": quoted.toggle()
            case "(" where !quoted: depth += 1
            case ")" where !quoted: depth -= 1
            case "," where !quoted && depth == 0:
                items.append(text[start..<index])
                start = text.index(after: index)
            default: break
            }
        }
        items.append(text[start...])
        return items
    }

    // MARK: order

    private static func parseOrder(_ text: String, _ context: ColumnLookup) throws(APIError) -> [OrderTerm] {
        var terms: [OrderTerm] = []
        guard text.utf8.count <= Limits.maxOrderBytes else {
            throw tooLong("order", "order is at most \(Limits.maxOrderBytes) bytes (got \(text.utf8.count))")
        }
        let rawTerms = text.split(separator: ",", omittingEmptySubsequences: false)
        guard rawTerms.count <= Limits.maxOrderTerms else {
            throw tooLong("order", "order has at most \(Limits.maxOrderTerms) terms (got \(rawTerms.count))")
        }
        for rawTerm in rawTerms {
            let term = rawTerm.trimmingSpaces
            let parseError = APIError(.malformedOrder(text))
            if term.contains("(") { throw notImplemented("ordering by an embedded resource (\(JSONBody.printable(term))) is not implemented") }
            if term.contains("->") { throw notImplemented("ordering by a JSON path (\(JSONBody.printable(term))) is not implemented") }
            var parts = term.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard let name = parts.first, !name.isEmpty else { throw parseError }
            parts.removeFirst()
            var descending = false
            var nullsFirst: Bool?
            if let direction = parts.first, direction == "asc" || direction == "desc" {
                descending = direction == "desc"
                parts.removeFirst()
            }
            if let nulls = parts.first, nulls == "nullsfirst" || nulls == "nullslast" {
                nullsFirst = nulls == "nullsfirst"
                parts.removeFirst()
            }
            guard parts.isEmpty else { throw parseError }
            // PostgreSQL's defaults: NULLS LAST ascending, NULLS FIRST descending.
            terms.append(OrderTerm(column: try context.index(of: name), descending: descending,
                                   nullsFirst: nullsFirst ?? descending))
        }
        return terms
    }

    // MARK: filters

    /// The comparison operators by name.
    private static let comparisons: [String: RowFilter.Comparison] = ["eq": .eq, "neq": .neq, "gt": .gt, "gte": .gte,
                                                                       "lt": .lt, "lte": .lte]

    /// An operator expression as PostgREST reads one, before its operand is typed.
    package enum ParsedOperator: Equatable {
        case compare(RowFilter.Comparison, String, negated: Bool)
        case list([String], negated: Bool)
        case isNull(Bool, negated: Bool)
        /// `is.true|false|unknown`: only for boolean columns (price_quotes' `published_allowed`).
        case isTruth(String, negated: Bool)
        /// A PostgREST operator pricesvc does not implement, by name.
        case unsupported(String)
        /// Started like an operator (`not.`, `in.`, `is.`) but is not a valid one.
        case malformed
    }

    /// Mirrors PostgREST's grammar for which values are operator expressions: `[not.]op.value`
    /// with op one of PostgREST's operators. `nil` when the value is not one (then it is a
    /// function argument in the GET form, and a parse error otherwise).
    package static func parseOperator(_ value: String) -> ParsedOperator? {
        // Unicode scalars, not Characters: a combining mark after `.` or `(` must not hide them.
        var rest = Substring(value).unicodeScalars
        let negated = rest.starts(with: "not.".unicodeScalars)
        if negated { rest = rest.dropFirst(4) }
        let tokenEnd = rest.firstIndex { $0 == "." || $0 == "(" } ?? rest.endIndex
        let token = String(String.UnicodeScalarView(rest[..<tokenEnd]))
        var afterToken = rest[tokenEnd...]
        var quantifier: String?
        if afterToken.first == "(", let close = afterToken.firstIndex(of: ")") {
            quantifier = String(String.UnicodeScalarView(afterToken[afterToken.index(after: afterToken.startIndex)..<close]))
            afterToken = afterToken[afterToken.index(after: close)...]
        }
        guard afterToken.first == "." else { return negated ? .malformed : nil }
        let operand = String(String.UnicodeScalarView(afterToken.dropFirst()))
        switch token {
        case "in" where quantifier == nil:
            guard let items = listItems(operand) else { return .malformed }
            return .list(items, negated: negated)
        case "is" where quantifier == nil:
            switch operand.lowercased() {
            case "null": return .isNull(true, negated: negated)
            case "not_null": return .isNull(false, negated: negated)
            case "true", "false", "unknown": return .isTruth(operand.lowercased(), negated: negated)
            default: return .malformed
            }
        case "eq", "gt", "gte", "lt", "lte", "like", "ilike", "match", "imatch":
            if let quantifier {
                guard quantifier == "any" || quantifier == "all" else { return negated ? .malformed : nil }
                return .unsupported("\(token)(\(quantifier))")
            }
            guard let comparison = Self.comparisons[token] else { return .unsupported(token) }
            return .compare(comparison, operand, negated: negated)
        case "neq" where quantifier == nil:
            return .compare(.neq, operand, negated: negated)
        case "cs", "cd", "ov", "sl", "sr", "nxr", "nxl", "adj", "isdistinct":
            return quantifier == nil ? .unsupported(token) : (negated ? .malformed : nil)
        case "fts", "plfts", "phfts", "wfts":
            return .unsupported(token)
        default:
            return negated ? .malformed : nil
        }
    }

    /// `(a,b,"c,d")`: PostgREST's list, quoted items with backslash escapes.
    package static func listItems(_ text: String) -> [String]? {
        var scalars = Substring(text).unicodeScalars
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        guard scalars.count >= 2, scalars.first == "(", scalars.last == ")" else { return nil }
        let inner = Array(scalars.dropFirst().dropLast())
        if inner.isEmpty { return [] }
        var items: [String] = []
        var index = 0
        while true {
            var item = String.UnicodeScalarView()
            if index < inner.count, inner[index] == "\"" {
                index += 1
                while index < inner.count, inner[index] != "\"" {
                    if inner[index] == "\\", index + 1 < inner.count { index += 1 }
                    item.append(inner[index])
                    index += 1
                }
                guard index < inner.count else { return nil }
                index += 1
                guard index == inner.count || inner[index] == "," else { return nil }
            } else {
                while index < inner.count, inner[index] != "," {
                    guard inner[index] != ")" else { return nil }
                    item.append(inner[index])
                    index += 1
                }
            }
            items.append(String(item))
            if index == inner.count { return items }
            index += 1  // the comma
        }
    }

    private static func filter(_ key: String, _ parsed: ParsedOperator, _ context: ColumnLookup) throws(APIError) -> RowFilter {
        if key.contains("->") { throw notImplemented("filters on JSON paths (\(JSONBody.printable(key))) are not implemented") }
        switch parsed {
        case .unsupported(let name):
            throw notImplemented("the '\(name)' operator is not implemented; pricesvc implements \(operators)")
        case .malformed:
            throw APIError(.malformedFilter(key: key, operators: operators))
        default: break
        }
        let column = try context.index(of: key)
        let type = context.columns[column].type
        func typed(_ text: String) throws(APIError) -> TypedValue {
            switch type.value(text) {
            case .success(let value): return value
            case .failure(let error): throw error
            }
        }
        switch parsed {
        case .compare(let comparison, let operand, let negated):
            return RowFilter(column: column, negated: negated, test: .compare(comparison, try typed(operand)))
        case .list(let items, let negated):
            guard items.count <= Limits.maxListItems else {
                throw tooLong("in list of \(JSONBody.printable(key))", "an in.(…) list has at most \(Limits.maxListItems) items (got \(items.count))")
            }
            var values: [TypedValue] = []
            for item in items { values.append(try typed(item)) }
            return RowFilter(column: column, negated: negated, test: .oneOf(values))
        case .isNull(let isNull, let negated):
            return RowFilter(column: column, negated: negated, test: .isNull(isNull))
        case .isTruth(let truth, let negated):
            guard type == .boolean else {
                throw APIError.invalidInput("42804", "argument of IS \(truth.uppercased()) must be type boolean, not type \(type.sqlName)")
            }
            return RowFilter(column: column, negated: negated,
                             test: .isTruth(truth == "unknown" ? nil : .boolean(truth == "true")))
        case .unsupported, .malformed:
            preconditionFailure("handled above")
        }
    }

    package static func preferCount(_ header: String?) throws(APIError) -> Bool {
        switch PreferHeader.parse(header, accepting: PreferHeader.forFunctions) {
        case .success(let preferences): return preferences.contains("count=exact")
        case .failure(let error): throw error
        }
    }
}

/// Resolves column names of one function's result.
private struct ColumnLookup {
    package let columns: [ResultColumn]
    package let relation: String

    package func index(of name: String) throws(APIError) -> Int {
        guard let index = columns.firstIndex(where: { $0.name == name }) else {
            throw APIError.invalidInput("42703", "column \(relation).\(JSONBody.printable(name)) does not exist",
                                      hint: "Columns: \(columns.map(\.name).joined(separator: ", "))")
        }
        return index
    }
}

/// One horizontal filter, evaluated with SQL's three-valued logic: a comparison with NULL is
/// unknown, `not.` of unknown stays unknown, and only rows for which every filter is true remain.
package struct RowFilter: Sendable, Equatable {
    package enum Comparison: Sendable, Equatable { case eq, neq, gt, gte, lt, lte }
    package enum Test: Sendable, Equatable {
        case compare(Comparison, TypedValue)
        case oneOf([TypedValue])
        /// true: `is.null`; false: `is.not_null`.
        case isNull(Bool)
        /// `is.true` / `is.false` (the value) or `is.unknown` (nil): never NULL itself.
        case isTruth(TypedValue?)
    }

    package var column: Int
    package var negated: Bool
    package var test: Test

    package func evaluate(_ cell: TypedValue?) -> Bool? {
        let result: Bool?
        switch test {
        case .isNull(let wantsNull):
            result = (cell == nil) == wantsNull
        case .isTruth(let truth):
            result = cell == truth
        case .compare(let comparison, let operand):
            guard let cell else { return nil }
            switch comparison {
            case .eq: result = cell == operand
            case .neq: result = cell != operand
            case .gt: result = operand < cell
            case .gte: result = !(cell < operand)
            case .lt: result = cell < operand
            case .lte: result = !(operand < cell)
            }
        case .oneOf(let values):
            guard let cell else { return nil }
            result = values.contains(cell)
        }
        return negated ? result.map { !$0 } : result
    }
}

package struct OrderTerm: Sendable, Equatable {
    package var column: Int
    package var descending: Bool
    package var nullsFirst: Bool
}

/// The page asked for with `limit`/`offset` and (GET only, as RFC 9110 and PostgREST say) the
/// `Range` header, combined as PostgREST combines them: their intersection.
///
/// Every bound is within `0 ... ReadOptions.Limits.maxIndex` (2^31-1) whatever is passed in, so the
/// page arithmetic here and in `render` cannot overflow (`Range: 0-9223372036854775807` once
/// trapped in `upper + 1` and took the process down).
package struct RowRange: Sendable, Equatable {
    package static let maxIndex = ReadOptions.Limits.maxIndex

    package var lower = 0
    /// Inclusive; nil is unbounded. At least `lower - 1` (an empty page) once checked.
    package var upper: Int?

    package init() {}

    package init(limit: Int?, offset: Int?, header: String?) throws(APIError) {
        // Clamped again here so that no caller can hand this type a number outside the domain.
        lower = Self.clamp(offset ?? 0)
        if let limit {
            let limit = min(max(limit, -Self.maxIndex), Self.maxIndex)
            if limit == 0 {
                upper = lower - 1
                return
            }
            upper = lower + limit - 1
        }
        var headerIsEmpty = false
        if let header, let bounds = Self.parseHeader(header) {
            // Decided on the exact bounds: clamping can make a backwards range look like one row.
            if bounds.backwards { headerIsEmpty = true; upper = -1 }
            lower = max(lower, bounds.from)
            if let to = bounds.to { upper = min(upper ?? to, to) }
        }
        if let upper, upper < lower {
            throw APIError(headerIsEmpty ? .backwardsRange : .negativeLimit)
        }
    }

    private static func clamp(_ value: Int) -> Int { min(max(value, 0), maxIndex) }

    /// `Range: 0-9` or `Range: 10-`; anything else is ignored, as PostgREST ignores it. Bounds of any
    /// length are read (PostgREST reads them as unbounded integers) and clamped to `maxIndex`;
    /// `backwards` compares them exactly, before clamping.
    package static func parseHeader(_ text: String) -> (from: Int, to: Int?, backwards: Bool)? {
        let parts = text.utf8.split(separator: UInt8(ascii: "-"), maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 4096, parts[1].count <= 4096,
              let from = saturatingDecimal(parts[0]) else { return nil }
        if parts[1].isEmpty { return (from, nil, false) }
        guard let to = saturatingDecimal(parts[1]) else { return nil }
        return (from, to, decimalLess(parts[1], parts[0]))
    }

    /// ASCII digits as a number, saturating at `maxIndex`; nil for anything else (signs, spaces, empty).
    package static func saturatingDecimal(_ digits: Substring.UTF8View) -> Int? {
        guard !digits.isEmpty else { return nil }
        var value = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = min(value * 10 + Int(byte - UInt8(ascii: "0")), maxIndex)
        }
        return value
    }

    /// Whether the digit string `a` is a smaller number than `b`, exactly, at any length.
    private static func decimalLess(_ a: Substring.UTF8View, _ b: Substring.UTF8View) -> Bool {
        let a = a.drop { $0 == UInt8(ascii: "0") }, b = b.drop { $0 == UInt8(ascii: "0") }
        if a.count != b.count { return a.count < b.count }
        return a.lexicographicallyPrecedes(b)
    }
}

/// The media type negotiated from `Accept`.
package enum ResultFormat: Sendable, Equatable {
    case json(stripNulls: Bool)
    /// `application/vnd.pgrst.object+json`: exactly one row, as an object.
    case object(stripNulls: Bool)
    case csv
    /// `application/geo+json`: a FeatureCollection, one Point feature per row at its `lat` and `lng`, the
    /// other columns its properties (what PostgREST answers for rows with a PostGIS column).
    case geoJSON

    /// The first acceptable media range by quality (then order), as PostgREST picks; 406 PGRST107
    /// when none is one pricesvc produces (`application/geo+json` only where `offersGeoJSON`).
    package init(accept: String?, offersGeoJSON: Bool = false) throws(APIError) {
        guard let accept, !accept.trimmingSpaces.isEmpty else {
            self = .json(stripNulls: false)
            return
        }
        var ranges: [(media: String, stripNulls: Bool, quality: Double, position: Int)] = []
        for (position, item) in accept.split(separator: ",").enumerated() {
            let fields = item.split(separator: ";").map { $0.trimmingSpaces }
            guard let media = fields.first?.lowercased(), !media.isEmpty else { continue }
            var quality = 1.0
            var stripNulls = false
            for parameter in fields.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces.lowercased() }
                if pair.first == "q", pair.count == 2 { quality = Double(pair[1]) ?? 1 }
                if pair == ["nulls", "stripped"] { stripNulls = true }
            }
            if quality > 0 { ranges.append((media, stripNulls, quality, position)) }
        }
        ranges.sort { $0.quality != $1.quality ? $0.quality > $1.quality : $0.position < $1.position }
        for range in ranges {
            switch range.media {
            case "application/json", "*/*":
                self = .json(stripNulls: false); return
            case "application/vnd.pgrst.array+json", "application/vnd.pgrst.array":
                self = .json(stripNulls: range.stripNulls); return
            case "application/vnd.pgrst.object+json", "application/vnd.pgrst.object":
                self = .object(stripNulls: range.stripNulls); return
            case "text/csv":
                self = .csv; return
            case "application/geo+json" where offersGeoJSON:
                self = .geoJSON; return
            default: continue
            }
        }
        let listed = accept.split(separator: ",").map { JSONBody.printable($0.trimmingSpaces) }.joined(separator: ", ")
        throw APIError(.noAcceptableMediaType(listed: listed, available: "application/json, application/vnd.pgrst.object+json, text/csv"
                                                                     + (offersGeoJSON ? ", application/geo+json" : "")))
    }
}

