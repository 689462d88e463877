internal import CLibPQ
import Glibc

/// A plain blocking libpq connection for the migrator and the owner tasks (PriceSQL's `OwnerTasks`): the
/// simple query protocol (`PQexec`) accepts files with many statements, which the pool's pipelined
/// extended protocol does not.
public final class MigrationSession {
    private let handle: OpaquePointer

    public init(conninfo: String, connectTimeout: Duration) throws(DatabaseError) {
        handle = try LibPQ.connect(conninfo: conninfo, connectTimeout: connectTimeout, applicationName: "pricesvc migrate")
        // `create ... if not exists` notices would otherwise be printed on stderr.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
    }

    deinit { PQfinish(handle) }

    /// Runs `sql` (any number of statements when `parameters` is empty) and returns the last result.
    @discardableResult
    public func execute(_ sql: String, _ parameters: [String?] = []) throws(DatabaseError) -> QueryResult {
        guard !LibPQ.containsNUL(sql), !parameters.contains(where: { $0.map(LibPQ.containsNUL) ?? false }) else {
            throw DatabaseError(code: .invalidParameter, message: "SQL text or parameter contains a NUL byte")
        }
        let result: OpaquePointer?
        if parameters.isEmpty {
            result = PQexec(handle, sql)
        } else {
            let values = parameters.map { $0.map { strdup($0) } ?? nil }
            defer { values.forEach { free($0) } }
            let pointers = values.map { UnsafePointer($0) }
            result = PQexecParams(handle, sql, Int32(pointers.count), nil, pointers, nil, nil, 0)
        }
        guard let result else {
            throw DatabaseError(code: .connectionLost, message: LibPQ.errorMessage(handle))
        }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return LibPQ.queryResult(result)
        case PGRES_FATAL_ERROR, PGRES_NONFATAL_ERROR, PGRES_BAD_RESPONSE:
            throw LibPQ.error(result, connectionIsBad: PQstatus(handle) != CONNECTION_OK)
        default:
            throw DatabaseError(code: .protocolViolation,
                                message: "unsupported result status \(PQresultStatus(result).rawValue) (COPY is not supported)")
        }
    }
}
