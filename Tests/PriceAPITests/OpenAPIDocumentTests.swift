import PriceJSON
import Testing
@testable import PriceAPI

/// The document is generated from the route table; these hold the served text to that table and to itself.
@Suite("OpenAPI document")
struct OpenAPIDocumentTests {
    private static func served(signUpChallenge: Bool) throws -> JSONValue {
        try JSONValue.parse(Array(OpenAPIDocument.json(signUpChallenge: signUpChallenge).utf8), maxBytes: 1 << 20)
    }

    @Test("every operation answers exactly the statuses its route table row lists, each once", arguments: [false, true])
    func statusesFollowTheTable(signUpChallenge: Bool) throws {
        let document = try Self.served(signUpChallenge: signUpChallenge)
        let operations = OpenAPIDocument.operations(signUpChallenge: signUpChallenge)
        #expect(operations.count == (signUpChallenge ? 23 : 22))  // /metrics is on the admin listener, not in this document
        for operation in operations {
            let responses = try #require(document["paths"]?[operation.path]?[operation.method]?["responses"]?.objectValue,
                                         "\(operation.method) \(operation.path)")
            #expect(Set(operation.statuses).count == operation.statuses.count, "\(operation.operationId) lists a status twice")
            #expect(Set(responses.keys) == Set(operation.statuses.map(String.init)), "\(operation.operationId)")
            // The gate answers every keyed request, so every keyed operation documents its refusals.
            if operation.security != .none {
                #expect(Set(["401", "413", "429"]).isSubset(of: Set(responses.keys)), "\(operation.operationId)")
            }
        }
    }

    @Test("every $ref resolves, and every shared response and parameter is used", arguments: [false, true])
    func referencesResolve(signUpChallenge: Bool) throws {
        let document = try Self.served(signUpChallenge: signUpChallenge)
        var references: [String] = []
        func collect(_ value: JSONValue) {
            switch value {
            case .array(let elements): elements.forEach(collect)
            case .object(let object):
                for member in object {
                    if member.key == "$ref", let target = member.value.stringValue { references.append(target) }
                    collect(member.value)
                }
            default: break
            }
        }
        collect(document)
        #expect(references.count > 250, "the walk found too few references to mean anything")

        var used: Set<String> = []
        for reference in references {
            let parts = reference.split(separator: "/").map(String.init)
            #expect(parts.count == 4 && parts[0] == "#" && parts[1] == "components", "\(reference)")
            guard parts.count == 4 else { continue }
            #expect(document["components"]?[parts[2]]?[parts[3]] != nil, "\(reference) is not defined")
            used.insert(parts[2] + "/" + parts[3])
        }
        // An unused error response or option would describe something no operation does.
        for section in ["responses", "parameters", "headers"] {
            for name in try #require(document["components"]?[section]?.objectValue).keys {
                #expect(used.contains(section + "/" + name), "components/\(section)/\(name) is never referenced")
            }
        }
    }

    @Test("a read function filters on its result columns; its GET form drops those its arguments name and adds Range")
    func readFunctionFiltersFollowTheColumns() throws {
        let document = try Self.served(signUpChallenge: false)
        for function in OpenAPIDocument.readFunctions {
            let columns = function.rows.columns.map(\.name)
            for (method, isGet) in [("post", false), ("get", true)] {
                let parameters = try #require(document["paths"]?["/rest/v1/rpc/" + function.name]?[method]?["parameters"]?.arrayValue)
                let names = parameters.compactMap { $0["$ref"]?.stringValue?.split(separator: "/").last.map(String.init) }
                let filtered = names.filter { $0.hasPrefix("filter_") }.map { String($0.dropFirst("filter_".count)) }
                #expect(filtered == (isGet ? columns.filter { !function.argumentNames.contains($0) } : columns), "\(method) \(function.name)")
                #expect(names.contains("Range") == isGet, "\(method) \(function.name)")
            }
        }
        // The GET form of price_median takes location_id as an argument, so it cannot filter on it.
        #expect(OpenAPIDocument.readFunctions.first { $0.name == "price_median" }?.argumentNames == ["location_id", "rate_kind"])
    }

    @Test("the sign-up challenge is documented only where challenges are on")
    func challengeVariant() throws {
        let without = try Self.served(signUpChallenge: false)
        let with = try Self.served(signUpChallenge: true)
        #expect(without["paths"]?["/auth/v1/challenge"] == nil)
        #expect(with["paths"]?["/auth/v1/challenge"]?["get"]?["operationId"] == "signup_challenge")
        let body = { (document: JSONValue) in document["paths"]?["/auth/v1/signup"]?["post"]?["requestBody"]?["content"]?["application/json"]?["schema"] }
        #expect(body(without)?["required"] == nil)
        #expect(body(with)?["required"] == ["gotrue_meta_security"])
    }
}
