internal import CLibPQ
import Glibc

/// One libpq session in pipeline and non-blocking mode, used by one thread at a time (the pool's
/// checkout guarantees it).
///
/// Non-blocking mode lets every wait go through `poll()` with the batch deadline, so a dead server
/// costs at most the batch timeout instead of a hung thread.
final class Connection: PipelineConnection {
    private var handle: OpaquePointer?
    private var prepared: Set<String> = []
    private let notices = ServerNotices()
    private(set) var isReusable = true

    /// Connects, enters pipeline and non-blocking mode, and prepares `statements` in one round trip.
    ///
    /// A statement the server refuses to prepare (its function not migrated yet, a missing grant) does not
    /// fail the connection: it and the statements after it are prepared on first use instead, so the error
    /// reaches only the requests that use it rather than every request.
    init(conninfo: String, connectTimeout: Duration, applicationName: String?, options: String? = nil,
         statements: [PreparedStatement]) throws(DatabaseError)
    {
        let handle = try LibPQ.connect(conninfo: conninfo, connectTimeout: connectTimeout,
                                       applicationName: applicationName, options: options)
        self.handle = handle
        PQsetNoticeReceiver(handle, recordServerNotice, Unmanaged.passUnretained(notices).toOpaque())
        guard PQsetnonblocking(handle, 1) == 0, PQenterPipelineMode(handle) == 1 else {
            let message = LibPQ.errorMessage(handle)
            close()
            throw DatabaseError(code: .connectFailed, message: "cannot enter pipeline mode: \(message)")
        }
        guard !statements.isEmpty else { return }
        do throws(BatchFailure) {
            _ = try execute(statements.map { .prepare($0) }, deadline: .now + connectTimeout)
        } catch {
            if error.error.code == .server, isReusable { return }
            close()
            var failure = error.error
            failure.code = .connectFailed
            failure.message = "preparing statements: \(failure.message)"
            throw failure
        }
    }

    deinit { close() }

    func close() {
        isReusable = false
        if let handle { PQfinish(handle) }
        handle = nil
    }

    func run(_ queries: [Query], deadline: ContinuousClock.Instant) throws(BatchFailure) -> [QueryResult] {
        var outgoing: [Outgoing] = []
        outgoing.reserveCapacity(queries.count)
        var preparing: Set<String> = []
        for query in queries {
            if case .prepared(let statement, _) = query, !prepared.contains(statement.name),
               preparing.insert(statement.name).inserted {
                outgoing.append(.prepare(statement))
            }
            outgoing.append(.query(query))
        }
        return try execute(outgoing, deadline: deadline)
    }

    // MARK: One round trip

    private enum Outgoing {
        case prepare(PreparedStatement)
        case query(Query)

        var step: PipelineBatch.Step {
            switch self {
            case .prepare(let statement): return .prepare(name: statement.name)
            case .query: return .query
            }
        }

        /// The call's texts: the statement's name and SQL for a prepare, else the name (or SQL) and the parameters.
        var texts: CTexts {
            switch self {
            case .prepare(let statement): return CTexts(statement.name, [statement.sql])
            case .query(.prepared(let statement, let parameters)): return CTexts(statement.name, parameters)
            case .query(.sql(let sql, let parameters)): return CTexts(sql, parameters)
            }
        }
    }

    private func execute(_ outgoing: [Outgoing], deadline: ContinuousClock.Instant) throws(BatchFailure) -> [QueryResult] {
        guard let handle, isReusable else {
            throw BatchFailure(error: lost("the connection is closed"), mayHaveReachedServer: false)
        }
        let calls = outgoing.map { ($0, $0.texts) }
        if calls.contains(where: { $0.1.containsNUL }) {
            throw BatchFailure(error: DatabaseError(code: .invalidParameter,
                                                    message: "query text or parameter contains a NUL byte"),
                               mayHaveReachedServer: false)
        }
        try ensureServerStillThere(handle)

        // From here on bytes may leave the process: a failure can no longer prove nothing ran.
        for (item, texts) in calls where !send(item, texts, on: handle) {
            throw sentFailure(lost(LibPQ.errorMessage(handle)))
        }
        guard PQpipelineSync(handle) == 1 else { throw sentFailure(lost(LibPQ.errorMessage(handle))) }
        try flush(handle, deadline: deadline)

        var batch = PipelineBatch(steps: outgoing.map(\.step))
        while true {
            let event = try nextEvent(handle, deadline: deadline)
            guard case .finished(let outcome) = batch.receive(event) else { continue }
            prepared.formUnion(outcome.preparedNames)
            if !outcome.connectionReusable { isReusable = false }
            switch outcome.results {
            case .success(let results): return results
            case .failure(let error):
                throw BatchFailure(error: error, reach: batch.serverRejectedAStep ? .rolledBack : .unknown)
            }
        }
    }

    /// A server that shut down or terminated this backend sends a FATAL and closes the socket while the
    /// connection sits idle in the pool. Reading that now, before sending, is what makes the pool's
    /// retry safe.
    private func ensureServerStillThere(_ handle: OpaquePointer) throws(BatchFailure) {
        for _ in 0..<4 {
            guard case .ready = waitForSocket(handle, events: POLLIN, deadline: .now) else { break }
            if PQconsumeInput(handle) == 0 { break }
            // PQconsumeInput only buffers; parsing (which hands an idle FATAL to the notice receiver) happens here.
            _ = PQisBusy(handle)
        }
        if PQstatus(handle) != CONNECTION_OK || notices.fatal != nil {
            isReusable = false
            throw BatchFailure(error: notices.fatal ?? lost(LibPQ.errorMessage(handle)), mayHaveReachedServer: false)
        }
    }

    private func send(_ item: Outgoing, _ texts: CTexts, on handle: OpaquePointer) -> Bool {
        // libpq copies the texts into its send buffer during the call.
        let sent: Int32 = texts.withPointers { cStrings in
            let head = cStrings[0]
            let count = Int32(cStrings.count - 1)
            return cStrings.withUnsafeBufferPointer { all in
                let values = count > 0 ? all.baseAddress! + 1 : nil
                switch item {
                case .prepare:
                    return PQsendPrepare(handle, head, cStrings[1], 0, nil)
                case .query(.prepared):
                    return PQsendQueryPrepared(handle, head, count, values, nil, nil, 0)
                case .query(.sql):
                    return PQsendQueryParams(handle, head, count, nil, values, nil, nil, 0)
                }
            }
        }
        return sent == 1
    }

    /// Pushes the output buffer out. While the socket is full, results may already be arriving;
    /// reading them keeps the server from blocking on its own send (the documented pipeline deadlock).
    private func flush(_ handle: OpaquePointer, deadline: ContinuousClock.Instant) throws(BatchFailure) {
        while true {
            switch PQflush(handle) {
            case 0: return
            case 1: break
            default: throw sentFailure(lost(LibPQ.errorMessage(handle)))
            }
            switch waitForSocket(handle, events: POLLIN | POLLOUT, deadline: deadline) {
            case .timedOut: throw sentFailure(timedOut())
            case .failed(let message): throw sentFailure(lost(message))
            case .ready(let events):
                if events & Int16(POLLIN) != 0, PQconsumeInput(handle) == 0 {
                    throw sentFailure(lost(LibPQ.errorMessage(handle)))
                }
            }
        }
    }

    /// The next result event, waiting on the socket only while libpq needs more input.
    private func nextEvent(_ handle: OpaquePointer, deadline: ContinuousClock.Instant) throws(BatchFailure) -> PipelineBatch.Event {
        while PQisBusy(handle) == 1 {
            guard PQstatus(handle) == CONNECTION_OK else { return .connectionLost(lost(LibPQ.errorMessage(handle))) }
            switch waitForSocket(handle, events: POLLIN, deadline: deadline) {
            case .timedOut: throw sentFailure(timedOut())
            case .failed(let message): return .connectionLost(lost(message))
            case .ready: break
            }
            // On failure libpq queues an error result; PQgetResult returns it without blocking.
            if PQconsumeInput(handle) == 0 { break }
        }
        guard let result = PQgetResult(handle) else {
            return PQstatus(handle) == CONNECTION_OK ? .endOfStep : .connectionLost(lost(LibPQ.errorMessage(handle)))
        }
        defer { PQclear(result) }
        switch PQresultStatus(result) {
        case PGRES_TUPLES_OK, PGRES_COMMAND_OK, PGRES_EMPTY_QUERY:
            return .result(LibPQ.queryResult(result))
        case PGRES_PIPELINE_SYNC:
            return .sync
        case PGRES_PIPELINE_ABORTED:
            return .aborted
        case PGRES_FATAL_ERROR, PGRES_NONFATAL_ERROR, PGRES_BAD_RESPONSE:
            return .error(LibPQ.error(result, connectionIsBad: PQstatus(handle) != CONNECTION_OK))
        default:
            // COPY and single-row results would leave the session mid-protocol.
            isReusable = false
            return .connectionLost(DatabaseError(code: .protocolViolation,
                                                 message: "unsupported result status \(PQresultStatus(result).rawValue)"))
        }
    }

    // MARK: Socket waits

    private enum SocketWait {
        case ready(Int16)
        case timedOut
        case failed(String)
    }

    private func waitForSocket(_ handle: OpaquePointer, events: Int32, deadline: ContinuousClock.Instant) -> SocketWait {
        let socket = PQsocket(handle)
        guard socket >= 0 else { return .failed("the connection has no socket") }
        var descriptor = pollfd(fd: socket, events: Int16(events), revents: 0)
        while true {
            let remaining = max(.zero, deadline - .now)
            let milliseconds = Int32(min((remaining / .seconds(1) * 1000).rounded(.up), Double(Int32.max)))
            let ready = poll(&descriptor, 1, milliseconds)
            if ready > 0 { return .ready(descriptor.revents) }
            if ready == 0 {
                if remaining > .zero, ContinuousClock.now < deadline { continue }
                return .timedOut
            }
            if errno != EINTR { return .failed("poll failed: \(String(cString: strerror(errno)))") }
        }
    }

    // MARK: Errors

    private func lost(_ message: String) -> DatabaseError {
        isReusable = false
        return notices.fatal ?? DatabaseError(code: .connectionLost, message: message)
    }

    private func timedOut() -> DatabaseError {
        isReusable = false
        return DatabaseError(code: .timeout, message: "the database did not answer within the batch timeout")
    }

    private func sentFailure(_ error: DatabaseError) -> BatchFailure {
        isReusable = false
        return BatchFailure(error: error, mayHaveReachedServer: true)
    }
}

/// Remembers a FATAL the server sent while no query was running (libpq passes those to the notice
/// receiver). Touched only by the thread that owns the connection, inside libpq calls.
private final class ServerNotices {
    var fatal: DatabaseError?
}

/// Notice receiver: ignores ordinary notices (they would otherwise go to stderr) and keeps a FATAL.
private func recordServerNotice(_ context: UnsafeMutableRawPointer?, _ result: OpaquePointer?) {
    guard let context, let result else { return }
    let error = LibPQ.error(result, connectionIsBad: true)
    guard error.severity == "FATAL" || error.severity == "PANIC" else { return }
    Unmanaged<ServerNotices>.fromOpaque(context).takeUnretainedValue().fatal = error
}
