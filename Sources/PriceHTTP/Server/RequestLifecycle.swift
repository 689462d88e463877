/// The decisions of the server shell for one request, as a plain value: libmicrohttpd calls the
/// access handler several times per request (headers, each body chunk, end of body, and once more
/// after a suspended connection is resumed); this says what to do at each call. The shell only
/// performs the actions, so every path is tested without a socket.
struct RequestLifecycle: Sendable, Equatable {
    enum Action: Sendable, Equatable {
        /// Return to libmicrohttpd and wait for the next call.
        case wait
        /// Queue the 413 answer now.
        case answerTooLarge
        /// The framing is ambiguous (`RequestFraming.invalid`): queue a 400 and close the connection.
        case answerMalformed
        /// The body is complete: ask the application for its decision (then call `decided`).
        case decide
        /// Queue the application's answer on this thread.
        case answerNow
        /// Suspend the connection and hand the blocking work to a worker thread.
        case handOff
        /// The worker's answer is stored: queue it.
        case answerStored
    }

    private enum Phase: Sendable, Equatable { case receiving, deciding, handedOff, answered }

    private(set) var body: RequestBody
    /// Why the request's framing is refused, when it is.
    let framingProblem: String?
    private var phase = Phase.receiving

    init(body: RequestBody, framingProblem: String? = nil) {
        self.body = body
        self.framingProblem = framingProblem
    }

    /// First call: headers only. Answering here would force `Connection: close`, so only a request
    /// whose framing is refused (where closing is the point) or a declared body over the limit is
    /// answered at once.
    mutating func headersReceived() -> Action {
        if framingProblem != nil { return answer(.answerMalformed) }
        return body.isTooLarge ? answer(.answerTooLarge) : .wait
    }

    mutating func received(_ chunk: UnsafeRawBufferPointer) -> Action {
        guard phase == .receiving else { return .wait }
        body.append(chunk)
        return body.mustAnswerNow ? answer(.answerTooLarge) : .wait
    }

    /// A call with no more upload data: the body is complete, or a resumed connection came back.
    mutating func bodyComplete(hasStoredAnswer: Bool) -> Action {
        switch phase {
        case .answered, .deciding:
            return .wait
        case .handedOff:
            return hasStoredAnswer ? answer(.answerStored) : .wait
        case .receiving:
            if body.isTooLarge { return answer(.answerTooLarge) }
            phase = .deciding
            return .decide
        }
    }

    /// What the application decided: an answer now, or work for a worker.
    mutating func decided(onWorker: Bool) -> Action {
        precondition(phase == .deciding, "decided(onWorker:) follows .decide")
        if onWorker {
            phase = .handedOff
            return .handOff
        }
        return answer(.answerNow)
    }

    private mutating func answer(_ action: Action) -> Action {
        phase = .answered
        return action
    }
}
