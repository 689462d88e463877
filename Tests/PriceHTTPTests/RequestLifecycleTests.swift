import Testing
@testable import PriceHTTP

@Suite("What the server shell does at each libmicrohttpd callback")
struct RequestLifecycleTests {
    func feed(_ lifecycle: inout RequestLifecycle, _ bytes: Int) -> RequestLifecycle.Action {
        let chunk = [UInt8](repeating: 0x61, count: bytes)
        return chunk.withUnsafeBytes { lifecycle.received($0) }
    }

    @Test("headers alone never get an answer (that would force Connection: close)")
    func headersWait() {
        var lifecycle = RequestLifecycle(body: RequestBody(limit: 100))
        #expect(lifecycle.headersReceived() == .wait)
        #expect(feed(&lifecycle, 10) == .wait)
    }

    @Test("a complete body is decided once, and an answer that needs no worker is queued on the event loop")
    func decidedAndAnsweredInline() {
        var lifecycle = RequestLifecycle(body: RequestBody(limit: 100))
        #expect(lifecycle.headersReceived() == .wait)
        #expect(feed(&lifecycle, 10) == .wait)
        #expect(lifecycle.bodyComplete(hasStoredAnswer: false) == .decide)
        #expect(lifecycle.body.bytes.count == 10)
        #expect(lifecycle.decided(onWorker: false) == .answerNow)
        #expect(lifecycle.bodyComplete(hasStoredAnswer: false) == .wait)
    }

    @Test("work for a worker is handed off once, then answered when the worker has stored its answer")
    func handOffThenAnswer() {
        var lifecycle = RequestLifecycle(body: RequestBody(limit: 100))
        _ = lifecycle.headersReceived()
        #expect(lifecycle.bodyComplete(hasStoredAnswer: false) == .decide)
        #expect(lifecycle.decided(onWorker: true) == .handOff)
        // A spurious call while suspended, before the worker is done: nothing to do.
        #expect(lifecycle.bodyComplete(hasStoredAnswer: false) == .wait)
        #expect(lifecycle.bodyComplete(hasStoredAnswer: true) == .answerStored)
        #expect(lifecycle.bodyComplete(hasStoredAnswer: true) == .wait)
    }

    @Test("a declared Content-Length over the limit is answered at the headers, and the rest is ignored")
    func declaredTooLarge() {
        var lifecycle = RequestLifecycle(body: RequestBody(limit: 100, declaredLength: 101))
        #expect(lifecycle.headersReceived() == .answerTooLarge)
        #expect(feed(&lifecycle, 50) == .wait)
        #expect(lifecycle.bodyComplete(hasStoredAnswer: false) == .wait)
    }

    @Test("a chunked body found too large is drained and answered with 413 when it ends, never decided")
    func chunkedTooLargeAnsweredAtTheEnd() {
        var lifecycle = RequestLifecycle(body: RequestBody(limit: 100, drainLimit: 1000))
        _ = lifecycle.headersReceived()
        #expect(feed(&lifecycle, 80) == .wait)
        #expect(feed(&lifecycle, 80) == .wait)
        #expect(lifecycle.bodyComplete(hasStoredAnswer: false) == .answerTooLarge)
        #expect(lifecycle.bodyComplete(hasStoredAnswer: false) == .wait)
    }

    @Test("a chunked body far over the limit is answered before it ends")
    func chunkedFarTooLarge() {
        var lifecycle = RequestLifecycle(body: RequestBody(limit: 100, drainLimit: 1000))
        _ = lifecycle.headersReceived()
        #expect(feed(&lifecycle, 600) == .wait)
        #expect(feed(&lifecycle, 600) == .answerTooLarge)
        #expect(feed(&lifecycle, 600) == .wait)
        #expect(lifecycle.bodyComplete(hasStoredAnswer: false) == .wait)
    }
}
