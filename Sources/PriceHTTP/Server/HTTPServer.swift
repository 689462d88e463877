internal import CMicroHTTPD
import Foundation
import PriceTelemetry
import Synchronization

/// The libmicrohttpd shell: reads a request into an `HTTPRequest`, asks the `HTTPApplication` once
/// what to do with it, and queues the answer. Nothing else lives here.
///
/// Threading model: libmicrohttpd's epoll event loops (`eventThreads`, one per core) read requests,
/// and the application decides each one there: most are answered on the spot. A request whose
/// answer needs blocking work (a database round trip) is suspended and its work handed to
/// `WorkerThreads`; the worker stores the answer and resumes the connection, whose next callback
/// queues it. An event loop therefore never blocks in libpq. docs/design.md records the
/// measurements behind this choice.
public final class HTTPServer: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        public var port: UInt16 = 8080
        public var maxConnections = 512
        /// Open connections per client network (an IPv4 address, an IPv6 network of `ipv6Prefix`
        /// bits); trusted proxies are exempt. Low enough that a few networks cannot fill
        /// `maxConnections`.
        public var maxConnectionsPerIP = 32
        /// Idle timeout (libmicrohttpd's: every byte restarts it); the receive deadlines below do not.
        public var connectionTimeoutSeconds = 30
        /// Seconds a connection has to deliver a complete request head, from accept or from the end of
        /// its previous request (so also how long an idle kept-alive connection stays open).
        public var requestHeadTimeoutSeconds = 10
        /// Seconds a request has to deliver its body once its head is in.
        public var requestBodyTimeoutSeconds = 20
        /// Per-connection memory for the request line and headers.
        public var connectionMemoryBytes = 16 * 1024
        public var threadStackBytes = 256 * 1024
        public var maxBodyBytes = 64 * 1024
        public var listenBacklog = 1024
        /// libmicrohttpd event-loop threads.
        public var eventThreads = max(1, ProcessInfo.processInfo.activeProcessorCount)
        /// Threads that run the work requests hand off (for pricesvc: waiting on PostgreSQL). The
        /// application sizes it (pricesvc: `PoolConfiguration.databaseWorkers`, one per connection); a
        /// request waits for one at most `workerQueueTimeout`.
        public var databaseWorkers = 1
        /// Longest a database request may wait for a worker before it is answered with 503.
        public var workerQueueTimeout: Duration = .seconds(2)
        /// Peers whose `X-Forwarded-For` is believed (see `ClientAddress`).
        public var trustedProxies: Set<String> = []
        /// IPv6 clients are counted per network of this prefix length: one host usually holds a whole /64.
        public var ipv6Prefix = 64
        public var accessLog = true

        public init() {}
    }

    public struct StartError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    let configuration: Configuration
    let application: any HTTPApplication
    let metrics: ServerMetrics
    let log: AccessLog
    let clientAddress: ClientAddress
    // The daemon handle is written by start/shutdown only, under `daemonLock`.
    private let daemonLock = NSLock()
    private var daemon: OpaquePointer?
    let inFlight = Atomic<Int>(0)
    let requestCounter = Atomic<UInt64>(0)
    let requestIDPrefix: String
    let workers: WorkerThreads
    let connections: ConnectionGuard

    /// - Parameter metrics: where every answered request is counted; the application renders it on /metrics.
    public init(configuration: Configuration, application: any HTTPApplication, metrics: ServerMetrics) {
        self.configuration = configuration
        self.application = application
        self.metrics = metrics
        self.log = AccessLog(enabled: configuration.accessLog)
        self.clientAddress = ClientAddress(trustedProxies: configuration.trustedProxies, ipv6Prefix: configuration.ipv6Prefix)
        self.requestIDPrefix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        self.workers = WorkerThreads(count: configuration.databaseWorkers,
                                       queueTimeout: configuration.workerQueueTimeout,
                                       stackSize: configuration.threadStackBytes)
        metrics.addWorkerQueue { [workers] in workers.queue }
        self.connections = ConnectionGuard(
            perNetworkLimit: configuration.maxConnectionsPerIP, ipv6Prefix: configuration.ipv6Prefix,
            deadlines: ReceiveDeadlines(headSeconds: configuration.requestHeadTimeoutSeconds,
                                        bodySeconds: configuration.requestBodyTimeoutSeconds),
            metrics: metrics)
    }

    /// The port actually bound (differs from the configured one when that was 0).
    public var boundPort: UInt16 {
        daemonLock.withLock { daemon.map { cmhd_bound_port($0) } ?? 0 }
    }

    public func start() throws(StartError) {
        var address = sockaddr_storage()
        let family = cmhd_make_sockaddr(configuration.host, configuration.port, &address)
        guard family >= 0 else {
            workers.stopAndJoin()
            throw StartError(description: "listen address '\(configuration.host)' is not an IPv4 or IPv6 address")
        }
        var flags = UInt32(MHD_USE_EPOLL.rawValue | MHD_USE_INTERNAL_POLLING_THREAD.rawValue
                           | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ITC.rawValue | MHD_USE_TURBO.rawValue)
        if family == AF_INET6 { flags |= UInt32(MHD_USE_IPv6.rawValue) }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let started = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                cmhd_start_daemon(flags, socketAddress, HTTPServer.acceptPolicy, context,
                                  HTTPServer.accessHandler, context,
                                  HTTPServer.completedHandler, context,
                                  HTTPServer.connectionNotification, context,
                                  UInt32(configuration.maxConnections),
                                  UInt32(configuration.connectionTimeoutSeconds),
                                  configuration.connectionMemoryBytes, configuration.threadStackBytes,
                                  UInt32(configuration.listenBacklog), UInt32(configuration.eventThreads))
            }
        }
        guard let started else {
            // The worker threads hold this server's workers unowned: join them before it can be freed.
            workers.stopAndJoin()
            throw StartError(description: "cannot listen on \(configuration.host):\(configuration.port) (address in use or not permitted)")
        }
        daemonLock.withLock { daemon = started }
        connections.startWatchdog()
    }

    /// Stops accepting, lets in-flight requests finish for at most `grace` seconds, then drains and
    /// joins the worker threads before it stops the daemon: a worker never resumes a connection of a
    /// stopped daemon. `graceOver` is called with the number of worker jobs still queued or running
    /// when the grace period ends with requests still in flight; those jobs finish (bounded by the
    /// pool's timeouts) and their answers are sent.
    public func shutdown(grace: Double, graceOver: (_ pendingJobs: Int) -> Void = { _ in }) {
        guard let running = daemonLock.withLock({ daemon }) else { return }
        _ = MHD_quiesce_daemon(running)
        waitForInFlight(until: Date().addingTimeInterval(grace))
        if inFlight.load(ordering: .acquiring) > 0 { graceOver(workers.queue.pending) }
        workers.stopAndJoin()
        // The drained jobs resumed their connections; let the event loops send those answers.
        waitForInFlight(until: Date().addingTimeInterval(1))
        daemonLock.withLock { daemon = nil }
        MHD_stop_daemon(running)
        connections.stopWatchdog()
    }

    private func waitForInFlight(until deadline: Date) {
        while inFlight.load(ordering: .acquiring) > 0, Date() < deadline {
            usleep(20_000)
        }
    }

    public var requestsInFlight: Int { inFlight.load(ordering: .relaxed) }

    func nextRequestID() -> String {
        let number = requestCounter.add(1, ordering: .relaxed).newValue
        return RequestID.compose(prefix: requestIDPrefix, number: number)
    }
}

/// A suspended connection handed to a worker; libmicrohttpd allows resuming it from any thread.
struct SuspendedConnection: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// State of one request across libmicrohttpd's calls of the access handler. While the connection
/// is suspended only the worker touches it; suspend and resume order the accesses.
final class RequestState: @unchecked Sendable {
    var request: HTTPRequest
    var lifecycle: RequestLifecycle
    /// CLOCK_MONOTONIC nanoseconds when the head was in (`ConnectionGuard.now()`).
    let startedAt: Int64
    /// The application's label for metrics and the log, known once it decided.
    var label = ""
    /// The application's fields for every answer to this request (`Reply.headers`).
    var replyHeaders: [(String, String)] = []
    /// Set by a worker before it resumes the connection.
    var response: HTTPResponse?

    init(request: HTTPRequest, lifecycle: RequestLifecycle) {
        self.request = request
        self.lifecycle = lifecycle
        self.startedAt = ConnectionGuard.now()
    }
}

extension HTTPServer {
    /// libmicrohttpd calls this several times per request; `RequestLifecycle` decides what each
    /// call does, this function only performs it.
    static let accessHandler: MHD_AccessHandlerCallback = { cls, connection, url, method, _, uploadData, uploadSize, requestContext in
        guard let cls, let connection, let uploadSize, let requestContext else { return CMHD_NO }
        let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()

        let state: RequestState
        let action: RequestLifecycle.Action
        let record = HTTPServer.record(of: connection)
        if let existing = requestContext.pointee {
            state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
            if uploadSize.pointee > 0 {
                action = state.lifecycle.received(UnsafeRawBufferPointer(start: uploadData, count: uploadSize.pointee))
                uploadSize.pointee = 0
            } else {
                action = state.lifecycle.bodyComplete(hasStoredAnswer: state.response != nil)
            }
        } else {
            state = server.makeState(connection: connection, record: record, url: url, method: method)
            requestContext.pointee = Unmanaged.passRetained(state).toOpaque()
            server.inFlight.add(1, ordering: .relaxed)
            action = state.lifecycle.headersReceived()
            // The head is in: from now on the body's deadline applies.
            if action == .wait, let record { server.connections.headReceived(record) }
        }
        // Received in full (or answered): the rest is the server's own time.
        if action != .wait, let record { server.connections.bodyReceived(record) }
        return server.perform(action, state, connection)
    }

    private func perform(_ action: RequestLifecycle.Action, _ state: RequestState, _ connection: OpaquePointer) -> MHD_Result {
        switch action {
        case .wait:
            return CMHD_YES
        case .answerTooLarge:
            let (label, response) = application.payloadTooLarge(state.request)
            state.label = label
            return queue(response, state, on: connection)
        case .answerMalformed:
            var (label, response) = application.malformedRequest(state.request, reason: state.lifecycle.framingProblem ?? "")
            state.label = label
            response.headers.append(("Connection", "close"))
            return queue(response, state, on: connection)
        case .decide:
            state.request.body = state.lifecycle.body.bytes
            let reply = application.respond(to: state.request)
            state.label = reply.label
            state.replyHeaders = reply.headers
            switch reply.work {
            case .now(let response):
                _ = state.lifecycle.decided(onWorker: false)
                return queue(response, state, on: connection)
            case .onWorker(let run, let expired):
                _ = state.lifecycle.decided(onWorker: true)
                return handOff(state, connection, run: run, expired: expired)
            }
        case .answerNow, .handOff:
            preconditionFailure("only decided(onWorker:) returns \(action)")
        case .answerStored:
            return queue(state.response!, state, on: connection)
        }
    }

    private func handOff(_ state: RequestState, _ connection: OpaquePointer,
                         run: @escaping @Sendable () -> HTTPResponse,
                         expired: @escaping @Sendable () -> HTTPResponse) -> MHD_Result {
        let suspended = SuspendedConnection(pointer: connection)
        let accepted = workers.submit(run: {
            state.response = run()
            MHD_resume_connection(suspended.pointer)
        }, expired: {
            state.response = expired()
            MHD_resume_connection(suspended.pointer)
        }, accepted: {
            // Suspended before the job is queued, so the worker's resume can never come first.
            MHD_suspend_connection(connection)
        })
        // Shutting down: the workers are gone, so the request is answered as if none became free.
        return accepted ? CMHD_YES : queue(expired(), state, on: connection)
    }

    static let completedHandler: MHD_RequestCompletedCallback = { cls, connection, requestContext, _ in
        guard let cls, let requestContext, let existing = requestContext.pointee else { return }
        let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
        // A kept-alive connection now waits for its next request head, under the head deadline.
        if let connection, let record = HTTPServer.record(of: connection) { server.connections.requestCompleted(record) }
        Unmanaged<RequestState>.fromOpaque(existing).release()
        requestContext.pointee = nil
        server.inFlight.subtract(1, ordering: .relaxed)
    }

    /// `cls` points at the `HTTPRequest` `makeState` is building (a local, not yet shared).
    private static let headerCollector: MHD_KeyValueIterator = { cls, _, key, value in
        guard let cls, let key else { return CMHD_YES }
        let request = cls.assumingMemoryBound(to: HTTPRequest.self)
        let text = value.map { String(cString: $0) } ?? ""
        // Lower-casing keeps every byte that matters to the framing (whitespace, non-token bytes).
        request.pointee.headers.append(asciiLowercased(key), text)
        return CMHD_YES
    }

    /// libmicrohttpd's accept policy: the per-network connection limit (trusted proxies are exempt:
    /// every client behind them shares their address).
    static let acceptPolicy: MHD_AcceptPolicyCallback = { cls, address, _ in
        guard let cls else { return CMHD_NO }
        let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
        var buffer = [CChar](repeating: 0, count: 64)
        guard cmhd_address_text(address, &buffer, buffer.count) == 0 else { return CMHD_YES }
        let peer = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        if server.configuration.trustedProxies.contains(peer) { return CMHD_YES }
        return server.connections.admits(peer: peer) ? CMHD_YES : CMHD_NO
    }

    /// Connection opened: its record (network, socket, deadline) lives in libmicrohttpd's socket
    /// context until the connection is closed.
    static let connectionNotification: MHD_NotifyConnectionCallback = { cls, connection, socketContext, code in
        guard let cls, let connection, let socketContext else { return }
        let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
        if code == CMHD_CONNECTION_NOTIFY_STARTED {
            let peer = peerAddress(of: connection)
            let record = server.connections.opened(peer: peer, socket: cmhd_connection_socket(connection),
                                                   exempt: server.configuration.trustedProxies.contains(peer))
            socketContext.pointee = Unmanaged.passRetained(record).toOpaque()
        } else if let opaque = socketContext.pointee {
            let record = Unmanaged<ConnectionRecord>.fromOpaque(opaque)
            server.connections.closed(record.takeUnretainedValue())
            record.release()
            socketContext.pointee = nil
        }
    }

    static func peerAddress(of connection: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 64)
        return cmhd_client_ip(connection, &buffer, buffer.count) == 0
            ? buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } : "unknown"
    }

    static func record(of connection: OpaquePointer) -> ConnectionRecord? {
        cmhd_socket_context(connection).map { Unmanaged<ConnectionRecord>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Query arguments with their decoded lengths: a `%00` in a value stays in it (and is refused
    /// where values are checked) instead of silently cutting the value short.
    private static let argumentCollector: MHD_KeyValueIteratorN = { cls, _, key, keySize, value, valueSize in
        guard let cls, let key else { return CMHD_YES }
        let request = cls.assumingMemoryBound(to: HTTPRequest.self)
        if request.pointee.query.count < 64 {
            let name = String(decoding: UnsafeRawBufferPointer(start: key, count: keySize), as: UTF8.self)
            let text = value.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: valueSize), as: UTF8.self) } ?? ""
            request.pointee.query.append((name, text))
        }
        return CMHD_YES
    }

    /// `record`: the connection's, with its address and network made once (nil only if it has none: then
    /// both are worked out here).
    private func makeState(connection: OpaquePointer, record: ConnectionRecord?, url: UnsafePointer<CChar>?,
                           method: UnsafePointer<CChar>?) -> RequestState {
        let peer = record?.peer ?? HTTPServer.peerAddress(of: connection)
        var request = HTTPRequest(method: method.map { String(cString: $0) } ?? "GET",
                                  path: url.map { String(cString: $0) } ?? "/",
                                  clientIP: peer, requestID: nextRequestID())
        // Collected into this local, then moved into the state once.
        withUnsafeMutablePointer(to: &request) { pointer in
            _ = MHD_get_connection_values(connection, CMHD_HEADER_KIND, HTTPServer.headerCollector, pointer)
            _ = MHD_get_connection_values_n(connection, CMHD_GET_ARGUMENT_KIND, HTTPServer.argumentCollector, pointer)
        }
        request.clientIP = clientAddress.resolve(peer: peer, peerKey: record?.network,
                                                 forwardedFor: request.headers["x-forwarded-for"])
        if let incoming = request.headers["x-request-id"], RequestID.isWellFormed(incoming) {
            request.requestID = incoming
        }
        // The framing decides the length the 413 check compares, the same one libmicrohttpd reads
        // (any framing two parsers could read differently is refused).
        let framing = RequestFraming.decide(request.headers.fields)
        var problem: String?
        if case .invalid(let reason) = framing { problem = reason }
        return RequestState(request: request,
                            lifecycle: RequestLifecycle(body: RequestBody(limit: configuration.maxBodyBytes,
                                                                          declaredLength: framing.declaredLength),
                                                        framingProblem: problem))
    }

    /// Counts and logs the answer, then hands it to libmicrohttpd with the request id.
    private func queue(_ response: HTTPResponse, _ state: RequestState, on connection: OpaquePointer) -> MHD_Result {
        // The id only: copying the whole request would retain every one of its strings and arrays.
        let requestID = state.request.requestID
        let seconds = Double(ConnectionGuard.now() - state.startedAt) / 1e9
        metrics.record(route: state.label, status: response.status, seconds: seconds)
        if log.enabled {
            log.write(.init(time: Date(), requestID: requestID, method: state.request.method,
                            route: state.label, status: response.status, seconds: seconds))
        }
        // For HEAD libmicrohttpd sends the headers of this response, Content-Length included, and
        // no body: the length is the one the GET would have.
        let mhdResponse: OpaquePointer? = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress),
                                            CMHD_RESPMEM_MUST_COPY)
        }
        guard let mhdResponse else { return CMHD_NO }
        // withCString hands over a native string's own bytes; passing a String where a C string is
        // expected would copy each one into a new array.
        func add(_ fields: [(String, String)]) {
            for (name, value) in fields {
                name.withCString { name in value.withCString { value in _ = MHD_add_response_header(mhdResponse, name, value) } }
            }
        }
        add(response.headers)
        add(state.replyHeaders)
        requestID.withCString { _ = MHD_add_response_header(mhdResponse, "X-Request-Id", $0) }
        let result = MHD_queue_response(connection, UInt32(response.status), mhdResponse)
        MHD_destroy_response(mhdResponse)
        return result
    }
}


/// A header name, lower-cased in the copy that makes it a String (names are ASCII tokens; other bytes
/// are kept as they are and repaired like any C string).
private func asciiLowercased(_ name: UnsafePointer<CChar>) -> String {
    let length = strlen(name)
    return name.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
        String(unsafeUninitializedCapacity: length) { buffer in
            for index in 0..<length {
                let byte = bytes[index]
                buffer[index] = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            }
            return length
        }
    }
}
