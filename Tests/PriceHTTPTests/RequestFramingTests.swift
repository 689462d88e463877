import Testing
@testable import PriceHTTP

@Suite("How a request's body is delimited, and which framings are refused (RFC 9112 §6.3)")
struct RequestFramingTests {
    @Test("no length and no coding: no body; one length; chunked")
    func plainFramings() {
        #expect(RequestFraming.decide([("Host", "x")]) == .none)
        #expect(RequestFraming.decide([("Content-Length", "42")]) == .length(42))
        #expect(RequestFraming.decide([("content-length", " 7 ")]) == .length(7))
        #expect(RequestFraming.decide([("Transfer-Encoding", "chunked")]) == .chunked)
        #expect(RequestFraming.decide([("TRANSFER-ENCODING", "Chunked")]) == .chunked)
    }

    @Test("repeated identical lengths are one length; differing ones are refused, in either order")
    func duplicateLengths() {
        #expect(RequestFraming.decide([("Content-Length", "3"), ("Content-Length", "3")]) == .length(3))
        #expect(RequestFraming.decide([("Content-Length", "3, 3")]) == .length(3))
        for fields in [[("Content-Length", "3"), ("Content-Length", "30")],
                       [("Content-Length", "30"), ("content-length", "3")],
                       [("Content-Length", "3, 4")]] {
            guard case .invalid(let reason) = RequestFraming.decide(fields) else {
                Issue.record("\(fields) was accepted")
                continue
            }
            #expect(reason.contains("differing Content-Length"))
        }
    }

    @Test("whitespace before a colon leaves it in the name libmicrohttpd hands over: refused")
    func whitespaceInNames() {
        for name in ["Transfer-Encoding ", "Content-Length\t", "X A", "", "X:Y", "Caf\u{e9}"] {
            guard case .invalid(let reason) = RequestFraming.decide([(name, "chunked")]) else {
                Issue.record("'\(name)' was accepted")
                continue
            }
            #expect(reason.contains("not a token"))
        }
        #expect(RequestFraming.decide([("X-Custom_Header.1~!", "v")]) == .none)
    }

    @Test("Content-Length with Transfer-Encoding is refused, whichever comes first")
    func lengthAndCoding() {
        #expect(RequestFraming.decide([("Content-Length", "3"), ("Transfer-Encoding", "chunked")])
                == .invalid("Content-Length and Transfer-Encoding together"))
        #expect(RequestFraming.decide([("Transfer-Encoding", "chunked"), ("Content-Length", "3")])
                == .invalid("Content-Length and Transfer-Encoding together"))
    }

    @Test("only chunked, exactly once, is a transfer coding pricesvc reads")
    func otherCodings() {
        for value in ["gzip", "gzip, chunked", "chunked, chunked", "", "chunked;x=1"] {
            #expect(RequestFraming.decide([("Transfer-Encoding", value)]) == .invalid("Transfer-Encoding must be exactly chunked"),
                    "\(value)")
        }
        #expect(RequestFraming.decide([("Transfer-Encoding", "chunked"), ("Transfer-Encoding", "chunked")])
                == .invalid("Transfer-Encoding must be exactly chunked"))
    }

    @Test("a length that is not digits is refused; one too large for Int saturates (and is then 413)")
    func badLengths() {
        for value in ["", "-1", "+5", "0x10", "1e3", "5 5"] {
            guard case .invalid = RequestFraming.decide([("Content-Length", value)]) else {
                Issue.record("'\(value)' was accepted")
                continue
            }
        }
        #expect(RequestFraming.decide([("Content-Length", "99999999999999999999999")]) == .length(.max))
        #expect(RequestFraming.decide([("Content-Length", "9223372036854775807")]) == .length(.max))
        #expect(RequestFraming.decide([("Content-Length", "9223372036854775808")]) == .length(.max))
    }

    @Test("error texts quote a name without control bytes, and briefly")
    func printableReasons() {
        guard case .invalid(let reason) = RequestFraming.decide([("A\r\n\u{0}" + String(repeating: "b", count: 200), "")]) else {
            Issue.record("accepted")
            return
        }
        #expect(!reason.contains("\r") && !reason.contains("\u{0}") && reason.count < 200)
    }

    @Test("the lifecycle answers a refused framing at the head, before any body is read")
    func lifecycleAnswersAtTheHead() {
        var lifecycle = RequestLifecycle(body: RequestBody(limit: 100), framingProblem: "differing Content-Length values")
        #expect(lifecycle.headersReceived() == .answerMalformed)
        #expect(lifecycle.bodyComplete(hasStoredAnswer: false) == .wait)
    }
}

@Suite("Connections per client network, and receive deadlines")
struct ConnectionLimitsTests {
    @Test("IPv6 connections from one /64 count together; IPv4 addresses each on their own")
    func ipv6GroupedByPrefix() {
        var counter = ConnectionCounter(limit: 2, ipv6Prefix: 64)
        let first = counter.network(of: "2001:db8:1:2::1")
        let second = counter.network(of: "2001:db8:1:2:ffff::9")
        #expect(first == second)
        counter.opened(first)
        counter.opened(second)
        #expect(!counter.admits(counter.network(of: "2001:db8:1:2:abcd::1")))
        #expect(counter.admits(counter.network(of: "2001:db8:1:3::1")))
        #expect(counter.admits(counter.network(of: "192.0.2.1")))
        counter.closed(first)
        #expect(counter.admits(second))
        counter.closed(second)
        #expect(counter.open.isEmpty)
    }

    @Test("the count taken when a connection opens decides: two that passed the accept check at once do not both stay")
    func openedPastTheLimit() {
        var counter = ConnectionCounter(limit: 2)
        #expect(counter.admits("192.0.2.1"))
        let first = counter.opened("192.0.2.1")
        #expect(first)
        #expect(counter.admits("192.0.2.1"))
        #expect(counter.admits("192.0.2.1"))  // a second event loop checks before the first counts in
        let second = counter.opened("192.0.2.1")
        let third = counter.opened("192.0.2.1")
        #expect(second)
        #expect(!third)
        counter.closed("192.0.2.1")
        #expect(counter.open["192.0.2.1"] == 2)
    }

    @Test("an IPv4-mapped address counts as its IPv4 address")
    func mappedAddresses() {
        let counter = ConnectionCounter(limit: 1)
        #expect(counter.network(of: "::ffff:192.0.2.7") == counter.network(of: "192.0.2.7"))
    }

    @Test("closing more than was opened never goes negative")
    func closeIsBounded() {
        var counter = ConnectionCounter(limit: 1)
        counter.closed("192.0.2.1")
        #expect(counter.open.isEmpty)
        counter.opened("192.0.2.1")
        #expect(!counter.admits("192.0.2.1"))
    }

    @Test("a deadline is fixed when its phase starts: head, then body, none while the server works")
    func deadlines() {
        let deadlines = ReceiveDeadlines(headSeconds: 10, bodySeconds: 20)
        let accepted: Int64 = 5_000_000_000
        let head = deadlines.waitingForHead(now: accepted)
        #expect(head == accepted + 10_000_000_000)
        #expect(!ReceiveDeadlines.isOverdue(head, now: head - 1))
        #expect(ReceiveDeadlines.isOverdue(head, now: head))
        #expect(deadlines.receivingBody(now: accepted) == accepted + 20_000_000_000)
        #expect(!ReceiveDeadlines.isOverdue(ReceiveDeadlines.none, now: .max))
    }
}
