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

    /// The server process of this connection (what `pg_blocking_pids` takes).
    public var backendPID: Int32 { PQbackendPID(handle) }

    /// Like ``execute(_:_:)`` for a whole file (simple protocol, no parameters), but calls `probe` every
    /// `probeEvery` while the server has not answered: the migrator asks there, on another connection,
    /// what its statement waits for. The statement keeps running meanwhile.
    @discardableResult
    public func execute(_ sql: String, probeEvery: Duration, probe: () -> Void) throws(DatabaseError) -> QueryResult {
        guard !LibPQ.containsNUL(sql) else {
            throw DatabaseError(code: .invalidParameter, message: "SQL text contains a NUL byte")
        }
        guard PQsendQuery(handle, sql) == 1 else {
            throw DatabaseError(code: .connectionLost, message: LibPQ.errorMessage(handle))
        }
        var probeAt = ContinuousClock.now + probeEvery
        var lastResult: QueryResult?
        var firstError: DatabaseError?
        while true {
            while PQisBusy(handle) == 1 {
                var descriptor = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
                let remaining = probeAt - ContinuousClock.now
                let ready = poll(&descriptor, 1, Int32(max(0, min(1000, remaining / .milliseconds(1)))))
                if ready == 0, ContinuousClock.now >= probeAt {
                    probe()
                    probeAt = ContinuousClock.now + probeEvery
                }
                guard ready >= 0 || errno == EINTR else {
                    throw DatabaseError(code: .connectionLost, message: "poll failed: errno \(errno)")
                }
                guard PQconsumeInput(handle) == 1 else {
                    throw DatabaseError(code: .connectionLost, message: LibPQ.errorMessage(handle))
                }
            }
            guard let result = PQgetResult(handle) else { break }
            defer { PQclear(result) }
            switch PQresultStatus(result) {
            case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
                lastResult = LibPQ.queryResult(result)
            case PGRES_FATAL_ERROR, PGRES_NONFATAL_ERROR, PGRES_BAD_RESPONSE:
                if firstError == nil {
                    firstError = LibPQ.error(result, connectionIsBad: PQstatus(handle) != CONNECTION_OK)
                }
            default:
                if firstError == nil {
                    firstError = DatabaseError(code: .protocolViolation, message:
                        "unsupported result status \(PQresultStatus(result).rawValue) (COPY is not supported)")
                }
            }
        }
        if let firstError { throw firstError }
        return lastResult ?? QueryResult()
    }

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
