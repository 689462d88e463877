import PriceJSON

/// A call of a function under `/rest/v1/rpc/<name>`, its named arguments read the way PostgREST reads
/// them: the query parameters of a GET or HEAD that are not read options (`ReadOptions.parse` splits
/// them off), else the members of a JSON object body (none for an empty body). Unknown, missing or
/// repeated names mean "no such function" (`checkNames`). What each argument means is the caller's.
package struct RPCCall: Sendable {
    package var function: String
    package var arguments: [(name: String, value: Argument)]

    /// - Parameter queryArguments: in the GET form, the query parameters that are not read options.
    package static func read(_ function: String, isRead: Bool, queryArguments: [(String, String)], body: [UInt8],
                             contentType: String?) -> Result<RPCCall, APIError> {
        var call = RPCCall(function: function, arguments: [])
        if isRead {
            for (key, value) in queryArguments { call.arguments.append((key, .text(value))) }
        } else if !body.isEmpty {
            guard JSONBody.isJSONContentType(contentType) else {
                return .failure(APIError(.notJSONContentType(received: nil)))
            }
            let document: JSONValue
            switch JSONBody.parse(body) {
            case .success(let value): document = value
            case .failure(let error): return .failure(error)
            }
            guard let members = document.objectValue else {
                return .failure(APIError(.argumentsNotObject))
            }
            for member in members { call.arguments.append((member.key, .json(member.value))) }
        }
        return .success(call)
    }

    /// Nil when every name is `allowed`, none repeats and `required` is among them; else PGRST202,
    /// with `available` (the functions' signatures) as the hint.
    package func checkNames(allowed: Set<String>, required: String, available: String) -> APIError? {
        let names = arguments.map(\.name)
        guard names.allSatisfy(allowed.contains), names.contains(required), Set(names).count == names.count else {
            return Self.noSuchFunction(function, arguments: names, available: available)
        }
        return nil
    }

    package static func noSuchFunction(_ name: String, arguments: [String], available: String) -> APIError {
        APIError(.noSuchFunction(name, arguments: arguments, available: available))
    }

    /// One argument as sent: query-string text, or a JSON value from the body.
    package enum Argument: Sendable {
        case text(String)
        case json(JSONValue)

        package func string(named name: String) -> Result<String, APIError> {
            switch self {
            case .text(let text):
                return checked(text, name)
            case .json(let value):
                guard let text = value.stringValue else {
                    return .failure(.invalidInput("22P02", "\(name) must be a string"))
                }
                return checked(text, name)
            }
        }

        package func stringArray(named name: String) -> Result<[String], APIError> {
            switch self {
            case .text(let literal):
                guard let list = PostgresArrayLiteral.parse(literal) else {
                    return .failure(.invalidInput("22P02", "\(name) must be an array literal such as {a,b}",
                                                details: "Got '\(JSONBody.printable(String(literal.prefix(60))))'"))
                }
                for item in list { if case .failure(let error) = checked(item, name) { return .failure(error) } }
                return .success(list)
            case .json(let value):
                guard let elements = value.arrayValue else {
                    return .failure(.invalidInput("22P02", "\(name) must be an array of strings"))
                }
                var list: [String] = []
                list.reserveCapacity(elements.count)
                for element in elements {
                    guard let text = element.stringValue else {
                        return .failure(.invalidInput("22P02", "\(name) must be an array of strings"))
                    }
                    if case .failure(let error) = checked(text, name) { return .failure(error) }
                    list.append(text)
                }
                return .success(list)
            }
        }

        private func checked(_ text: String, _ name: String) -> Result<String, APIError> {
            text.utf8.contains(0)
                ? .failure(.invalidInput("22P05", "\(name) must not contain NUL characters"))
                : .success(text)
        }
    }

    /// A list of ids as one JSON array parameter, which the SQL unpacks with jsonb_array_elements_text
    /// (no array-literal quoting to get wrong).
    package static func jsonArray(_ ids: [String]) -> String {
        var writer = JSONWriter(capacity: 32 * ids.count)
        writer.beginArray()
        for id in ids { writer.string(id) }
        writer.endArray()
        return writer.text
    }
}
/// PostgREST's GET form for array arguments: `{a,b,"c,d"}`.
package enum PostgresArrayLiteral {
    package static func parse(_ literal: String) -> [String]? {
        let scalars = Array(literal.unicodeScalars)
        guard scalars.first == "{", scalars.last == "}" else { return nil }
        var items: [String] = []
        var index = 1
        let end = scalars.count - 1
        if index == end { return [] }
        while index < end {
            var item = String.UnicodeScalarView()
            if scalars[index] == "\"" {
                index += 1
                while index < end, scalars[index] != "\"" {
                    if scalars[index] == "\\", index + 1 < end { index += 1 }
                    item.append(scalars[index])
                    index += 1
                }
                guard index < end else { return nil }
                index += 1
            } else {
                while index < end, scalars[index] != "," {
                    guard scalars[index] != "\"", scalars[index] != "{" else { return nil }
                    item.append(scalars[index])
                    index += 1
                }
            }
            items.append(String(item))
            if index < end {
                guard scalars[index] == "," else { return nil }
                index += 1
                if index == end { return nil }
            }
        }
        return items
    }
}
