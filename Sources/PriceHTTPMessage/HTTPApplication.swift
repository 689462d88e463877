/// What the server asks of the application behind it. Both calls run on an event loop, once per
/// request, so everything decided here (route, limits, keys, body) is decided before any hand-off.
public protocol HTTPApplication: Sendable {
    /// The complete request: answer it now, or name the blocking work a worker thread should do.
    /// - Important: Must not block; anything that waits (a database round trip) goes in `Reply.Work.onWorker`.
    func respond(to request: HTTPRequest) -> Reply

    /// The answer for a body over the limit, decided from the headers alone (`request.body` is empty).
    func payloadTooLarge(_ request: HTTPRequest) -> (label: String, response: HTTPResponse)

    /// The 400 for a request whose framing is refused (PriceHTTP's `RequestFraming.invalid`), decided from the
    /// headers alone; the server adds `Connection: close` and closes the connection after it.
    func malformedRequest(_ request: HTTPRequest, reason: String) -> (label: String, response: HTTPResponse)
}

/// The application's decision for one request.
public struct Reply: Sendable {
    public enum Work: Sendable {
        case now(HTTPResponse)
        /// `run` blocks (a database round trip) and runs on a worker thread. `expired` answers instead
        /// when no worker took the request within the queue timeout.
        case onWorker(run: @Sendable () -> HTTPResponse, expired: @Sendable () -> HTTPResponse)
    }

    /// A bounded label for metrics and the access log (never the raw path).
    public var label: String
    /// Fields every answer to this request carries, whichever answer it is (CORS): the server adds them
    /// after the response's own, so a shared response needs no copy to gain them.
    public var headers: [(String, String)]
    public var work: Work

    public init(label: String, headers: [(String, String)] = [], work: Work) {
        self.label = label
        self.headers = headers
        self.work = work
    }

    /// The answer as the server sends it, with any worker's part run on the calling thread (tests, tools).
    public func answer() -> HTTPResponse {
        var response: HTTPResponse
        switch work {
        case .now(let now): response = now
        case .onWorker(let run, _): response = run()
        }
        response.headers += headers
        return response
    }
}
