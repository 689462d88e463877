import PriceDB
import PriceJSON
import PriceSQL

/// `pricesvc statements [--json]`: every statement the service and the owner tasks send, as this build
/// sends them, and the session settings of the service's connections. The bench builds its pgbench
/// scripts from the JSON form (bench/pgbench_scripts.py), so both sides run the same text.
extension Commands {
    static func statements(_ configuration: Configuration, json: Bool) throws -> Int32 {
        let session = SessionSettings(statementTimeoutMilliseconds: try configuration.int("statement-timeout-ms", min: 1))
        let listed = Statements.catalog.map { ("service", $0) } + OwnerStatements.catalog.map { ("owner", $0) }
        if json {
            print(statementsJSON(listed, session: session))
            return 0
        }
        for (sender, statement) in listed {
            let parameters = statement.parameters.enumerated().map { "$\($0 + 1) \($1.name) \($1.type.rawValue)" }
            let columns = statement.columns.map { "\($0.name) \($0.type.rawValue)" }
            print("-- \(statement.name) (\(sender)): (\(parameters.joined(separator: ", "))) -> (\(columns.joined(separator: ", ")))")
            print(statement.sql + ";\n")
        }
        return 0
    }

    static func statementsJSON(_ listed: [(String, StatementDescription)], session: SessionSettings) -> String {
        var writer = JSONWriter(capacity: 32 * 1024)
        writer.beginObject()
        writer.key("session_settings")
        writer.beginArray()
        for (name, value) in session.values {
            writer.beginObject()
            writer.key("name"); writer.string(name)
            writer.key("value"); writer.string(value)
            writer.endObject()
        }
        writer.endArray()
        writer.key("statements")
        writer.beginArray()
        for (sender, statement) in listed {
            writer.beginObject()
            writer.key("name"); writer.string(statement.name)
            writer.key("sender"); writer.string(sender)
            writer.key("sql"); writer.string(statement.sql)
            for (key, list) in [("parameters", statement.parameters.map { ($0.name, $0.type) }),
                                ("columns", statement.columns.map { ($0.name, $0.type) })] {
                writer.key(key)
                writer.beginArray()
                for (name, type) in list {
                    writer.beginObject()
                    writer.key("name"); writer.string(name)
                    writer.key("type"); writer.string(type.rawValue)
                    writer.endObject()
                }
                writer.endArray()
            }
            writer.endObject()
        }
        writer.endArray()
        writer.endObject()
        return writer.text
    }
}
