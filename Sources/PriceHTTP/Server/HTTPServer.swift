internal import CMicroHTTPD
import Foundation
import Synchronization

/// The libmicrohttpd shell: reads a request into an `HTTPRequest`, hands it to `PriceService`,
/// queues the answer. Nothing else lives here.
///
/// Threading model: libmicrohttpd's epoll event loops (`eventThreads`, one per core) parse requests
/// and answer those that need no database inline. A request that waits on PostgreSQL is suspended
/// and handed to `DatabaseWorkers`; the worker runs the pipelined round trip, stores the answer
/// and resumes the connection, whose next callback queues it. An event loop therefore never
/// blocks in libpq. docs/design.md records the measurements behind this choice.
public final class HTTPServer: @unchecked Sendable {
    public struct Configuration: Sendable {
        public var host = "127.0.0.1"
        public var port: UInt16 = 8080
        public var maxConnections = 512
        public var maxConnectionsPerIP = 128
        public var connectionTimeoutSeconds = 30
        /// Per-connection memory for the request line and headers.
        public var connectionMemoryBytes = 16 * 1024
        public var threadStackBytes = 256 * 1024
        public var maxBodyBytes = 64 * 1024
        public var listenBacklog = 1024
        /// libmicrohttpd event-loop threads.
        public var eventThreads = max(1, ProcessInfo.processInfo.activeProcessorCount)
        /// Threads that wait on PostgreSQL for requests; more than the pool size, so a request can
        /// queue for a connection (bounded by the pool's checkout timeout).
        public var databaseWorkers = 32
        /// Longest a database request may wait for a worker before it is answered with 503.
        public var workerQueueTimeout: Duration = .seconds(2)

        public init() {}
    }

    public struct StartError: Error, CustomStringConvertible, Sendable {
        public let description: String
    }

    let configuration: Configuration
    let service: PriceService
    // The daemon handle is written by start/shutdown only, under `daemonLock`.
    private let daemonLock = NSLock()
    private var daemon: OpaquePointer?
    let inFlight = Atomic<Int>(0)
    let requestCounter = Atomic<UInt64>(0)
    let requestIDPrefix: String
    let workers: DatabaseWorkers

    public init(configuration: Configuration, service: PriceService) {
        self.configuration = configuration
        self.service = service
        self.requestIDPrefix = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        self.workers = DatabaseWorkers(count: configuration.databaseWorkers,
                                       queueTimeout: configuration.workerQueueTimeout,
                                       stackSize: configuration.threadStackBytes)
    }

    /// The port actually bound (differs from the configured one when that was 0).
    public var boundPort: UInt16 {
        daemonLock.withLock { daemon.map { cmhd_bound_port($0) } ?? 0 }
    }

    public func start() throws(StartError) {
        var address = sockaddr_storage()
        let family = cmhd_make_sockaddr(configuration.host, configuration.port, &address)
        guard family >= 0 else {
            throw StartError(description: "listen address '\(configuration.host)' is not an IPv4 or IPv6 address")
        }
        var flags = UInt32(MHD_USE_EPOLL.rawValue | MHD_USE_INTERNAL_POLLING_THREAD.rawValue
                           | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ITC.rawValue | MHD_USE_TURBO.rawValue)
        if family == AF_INET6 { flags |= UInt32(MHD_USE_IPv6.rawValue) }
        let context = Unmanaged.passUnretained(self).toOpaque()
        let started = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                cmhd_start_daemon(flags, socketAddress, HTTPServer.accessHandler, context,
                                  HTTPServer.completedHandler, context,
                                  UInt32(configuration.maxConnections), UInt32(configuration.maxConnectionsPerIP),
                                  UInt32(configuration.connectionTimeoutSeconds),
                                  configuration.connectionMemoryBytes, configuration.threadStackBytes,
                                  UInt32(configuration.listenBacklog), UInt32(configuration.eventThreads))
            }
        }
        guard let started else {
            throw StartError(description: "cannot listen on \(configuration.host):\(configuration.port) (address in use or not permitted)")
        }
        daemonLock.withLock { daemon = started }
    }

    /// Stops accepting, lets in-flight requests finish for at most `grace` seconds, then stops.
    public func shutdown(grace: Double) {
        guard let running = daemonLock.withLock({ daemon }) else { return }
        _ = MHD_quiesce_daemon(running)
        let deadline = Date().addingTimeInterval(grace)
        while inFlight.load(ordering: .acquiring) > 0, Date() < deadline {
            usleep(20_000)
        }
        daemonLock.withLock { daemon = nil }
        MHD_stop_daemon(running)
        workers.stop()
    }

    public var requestsInFlight: Int { inFlight.load(ordering: .relaxed) }

    func nextRequestID() -> String {
        let number = requestCounter.add(1, ordering: .relaxed).newValue
        return requestIDPrefix + "-" + String(number, radix: 16)
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
    var route: Route = .notFound
    var lifecycle: RequestLifecycle
    /// Set by a worker before it resumes the connection.
    var response: HTTPResponse?

    init(request: HTTPRequest, body: RequestBody) {
        self.request = request
        self.lifecycle = RequestLifecycle(body: body)
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
        if let existing = requestContext.pointee {
            state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
            if uploadSize.pointee > 0 {
                action = state.lifecycle.received(UnsafeRawBufferPointer(start: uploadData, count: uploadSize.pointee))
                uploadSize.pointee = 0
            } else {
                action = state.lifecycle.bodyComplete(needsDatabase: state.route.needsDatabase,
                                                      hasStoredAnswer: state.response != nil)
            }
        } else {
            state = server.makeState(connection: connection, url: url, method: method)
            requestContext.pointee = Unmanaged.passRetained(state).toOpaque()
            server.inFlight.add(1, ordering: .relaxed)
            action = state.lifecycle.headersReceived()
        }
        return server.perform(action, state, connection)
    }

    private func perform(_ action: RequestLifecycle.Action, _ state: RequestState, _ connection: OpaquePointer) -> MHD_Result {
        switch action {
        case .wait:
            return CMHD_YES
        case .answerTooLarge:
            return queue(service.payloadTooLarge(state.request), on: connection)
        case .answerInline:
            state.request.body = state.lifecycle.body.bytes
            return queue(service.handle(state.request, route: state.route), on: connection)
        case .answerStored:
            return queue(state.response ?? service.overloaded(state.request), on: connection)
        case .dispatch:
            state.request.body = state.lifecycle.body.bytes
            // Suspend first, so the worker's resume can never come before it.
            MHD_suspend_connection(connection)
            let suspended = SuspendedConnection(pointer: connection)
            let service = self.service
            workers.submit(run: {
                state.response = service.handle(state.request, route: state.route)
                MHD_resume_connection(suspended.pointer)
            }, expired: {
                state.response = service.overloaded(state.request)
                MHD_resume_connection(suspended.pointer)
            })
            return CMHD_YES
        }
    }

    static let completedHandler: MHD_RequestCompletedCallback = { cls, _, requestContext, _ in
        guard let cls, let requestContext, let existing = requestContext.pointee else { return }
        let server = Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue()
        Unmanaged<RequestState>.fromOpaque(existing).release()
        requestContext.pointee = nil
        server.inFlight.subtract(1, ordering: .relaxed)
    }

    private static let headerCollector: MHD_KeyValueIterator = { cls, _, key, value in
        guard let cls, let key else { return CMHD_YES }
        let state = Unmanaged<RequestState>.fromOpaque(cls).takeUnretainedValue()
        state.request.headers[String(cString: key).lowercased()] = value.map { String(cString: $0) } ?? ""
        return CMHD_YES
    }

    private static let argumentCollector: MHD_KeyValueIterator = { cls, _, key, value in
        guard let cls, let key else { return CMHD_YES }
        let state = Unmanaged<RequestState>.fromOpaque(cls).takeUnretainedValue()
        if state.request.query.count < 64 {
            state.request.query.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
        }
        return CMHD_YES
    }

    private func makeState(connection: OpaquePointer, url: UnsafePointer<CChar>?, method: UnsafePointer<CChar>?) -> RequestState {
        var peerBuffer = [CChar](repeating: 0, count: 64)
        let peer = cmhd_client_ip(connection, &peerBuffer, peerBuffer.count) == 0
            ? peerBuffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } : "unknown"
        let request = HTTPRequest(method: method.map { String(cString: $0) } ?? "GET",
                                  path: url.map { String(cString: $0) } ?? "/",
                                  clientIP: peer, requestID: nextRequestID())
        let state = RequestState(request: request, body: RequestBody(limit: configuration.maxBodyBytes))
        let opaque = Unmanaged.passUnretained(state).toOpaque()
        _ = MHD_get_connection_values(connection, CMHD_HEADER_KIND, HTTPServer.headerCollector, opaque)
        _ = MHD_get_connection_values(connection, CMHD_GET_ARGUMENT_KIND, HTTPServer.argumentCollector, opaque)
        state.request.clientIP = service.clientIP(peer: peer, forwardedFor: state.request.headers["x-forwarded-for"])
        state.route = service.route(state.request)
        let declared = state.request.headers["content-length"].flatMap { Int($0) }
        state.lifecycle = RequestLifecycle(body: RequestBody(limit: configuration.maxBodyBytes, declaredLength: declared))
        return state
    }

    private func queue(_ response: HTTPResponse, on connection: OpaquePointer) -> MHD_Result {
        let mhdResponse: OpaquePointer? = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress),
                                            CMHD_RESPMEM_MUST_COPY)
        }
        guard let mhdResponse else { return CMHD_NO }
        for (name, value) in response.headers {
            _ = MHD_add_response_header(mhdResponse, name, value)
        }
        let result = MHD_queue_response(connection, UInt32(response.status), mhdResponse)
        MHD_destroy_response(mhdResponse)
        return result
    }
}
