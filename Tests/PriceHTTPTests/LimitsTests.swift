import Testing
import Glibc
@testable import PriceHTTP

@Suite("Per-IP limits at the server: client addresses and bodies")
struct LimitsTests {
    @Test("X-Forwarded-For is ignored unless the peer is a trusted proxy")
    func forwardedForFromUntrustedPeer() {
        let resolver = ClientAddress(trustedProxies: ["10.0.0.9"])
        #expect(resolver.resolve(peer: "203.0.113.5", forwardedFor: "1.2.3.4") == "203.0.113.5")
    }

    @Test("behind trusted proxies the right-most untrusted hop is the client; spoofed left entries are ignored")
    func forwardedForFromTrustedProxy() {
        let resolver = ClientAddress(trustedProxies: ["10.0.0.9", "10.0.0.8"])
        #expect(resolver.resolve(peer: "10.0.0.9", forwardedFor: "6.6.6.6, 198.51.100.7, 10.0.0.8") == "198.51.100.7")
        #expect(resolver.resolve(peer: "10.0.0.9", forwardedFor: nil) == "10.0.0.9")
        #expect(resolver.resolve(peer: "10.0.0.9", forwardedFor: "10.0.0.8") == "10.0.0.9")
    }

    @Test("an oversized chunked upload is drained up to a bound, then answered at once")
    func drainBound() {
        var body = RequestBody(limit: 10, drainLimit: 100)
        body.append([UInt8](repeating: 1, count: 11))
        #expect(body.isTooLarge && !body.mustAnswerNow)
        body.append([UInt8](repeating: 1, count: 89))
        #expect(!body.mustAnswerNow)
        body.append([1])
        #expect(body.mustAnswerNow)
        #expect(body.bytes.isEmpty)
    }

    @Test("a body over the limit is dropped as soon as it is known to be too large")
    func bodyLimit() {
        var body = RequestBody(limit: 10)
        body.append(Array("12345".utf8))
        body.append(Array("67890".utf8))
        #expect(!body.isTooLarge)
        #expect(body.bytes.count == 10)
        body.append([1])
        #expect(body.isTooLarge)
        #expect(body.bytes.isEmpty)
        #expect(!body.mustAnswerNow)
        #expect(RequestBody(limit: 10, declaredLength: 11).isTooLarge)
        #expect(!RequestBody(limit: 10, declaredLength: 10).isTooLarge)
    }
}

@Suite("Per-address limits group IPv6 clients by network")
struct ClientNetworkTests {
    @Test("an IPv6 address counts as its /64 by default, written canonically")
    func fullAddressToSlash64() {
        #expect(ClientNetwork.key(for: "2001:db8:1:2:3:4:5:6", ipv6Prefix: 64) == "2001:db8:1:2::/64")
        #expect(ClientNetwork.key(for: "2001:0DB8:0001:0002::ffff", ipv6Prefix: 64) == "2001:db8:1:2::/64")
        #expect(ClientNetwork.key(for: "2001:db8:1:3::1", ipv6Prefix: 64) == "2001:db8:1:3::/64")
    }

    @Test("text with a NUL is no address: inet_pton would judge only the part before it (found by FuzzRequestHead)")
    func nulIsNoAddress() {
        #expect(ClientNetwork.key(for: "198.51.100.7\u{0}/evil", ipv6Prefix: 64) == nil)
        #expect(ClientNetwork.key(for: "2001:db8::1\u{0}x", ipv6Prefix: 64) == nil)
        #expect(ClientNetwork.key(for: String(repeating: "1", count: 65), ipv6Prefix: 64) == nil)
        #expect(ClientNetwork.key(for: "198.51.100.7", ipv6Prefix: 64) == "198.51.100.7")
    }

    @Test("other prefixes: /48 and /56 merge more, /128 is the address itself, odd lengths mask within a byte")
    func otherPrefixes() {
        #expect(ClientNetwork.key(for: "2001:db8:1:2:3:4:5:6", ipv6Prefix: 48) == "2001:db8:1::/48")
        #expect(ClientNetwork.key(for: "2001:db8:1:2ff:3:4:5:6", ipv6Prefix: 56) == "2001:db8:1:200::/56")
        #expect(ClientNetwork.key(for: "2001:db8:1:2:3:4:5:6", ipv6Prefix: 128) == "2001:db8:1:2:3:4:5:6/128")
        #expect(ClientNetwork.key(for: "2001:db8:ffff::", ipv6Prefix: 36) == "2001:db8:f000::/36")
        #expect(ClientNetwork.key(for: "ffff::1", ipv6Prefix: 1) == "8000::/1")
    }

    @Test("IPv4 stays one address; IPv4-mapped IPv6 is the IPv4 address")
    func ipv4AndMapped() {
        #expect(ClientNetwork.key(for: "203.0.113.5", ipv6Prefix: 64) == "203.0.113.5")
        // An IPv4 address is its own key only because inet_pton accepts nothing but the form inet_ntop
        // prints; pin that round trip, and the near-misses it must refuse.
        for edge in ["0.0.0.0", "255.255.255.255", "127.0.0.1", "10.200.3.40", "1.2.3.4"] {
            var address = in_addr()
            #expect(inet_pton(AF_INET, edge, &address) == 1)
            var printed = [CChar](repeating: 0, count: 16)
            #expect(inet_ntop(AF_INET, &address, &printed, 16) != nil)
            #expect(printed.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } == edge)
            #expect(ClientNetwork.key(for: edge, ipv6Prefix: 64) == edge)
        }
        for nearMiss in ["010.0.0.1", "1.2.3.04", "0x7f.0.0.1", "1.2.3", "1.2.3.4.", "1..2.3", "+1.2.3.4", "1.2.3.256"] {
            #expect(ClientNetwork.key(for: nearMiss, ipv6Prefix: 64) == nil, "\(nearMiss)")
        }
        #expect(ClientNetwork.key(for: "::ffff:203.0.113.5", ipv6Prefix: 64) == "203.0.113.5")
        #expect(ClientNetwork.key(for: "::FFFF:cb00:7105", ipv6Prefix: 48) == "203.0.113.5")
        // Only the mapped form is IPv4; the deprecated compatible form is an ordinary IPv6 address.
        #expect(ClientNetwork.key(for: "::203.0.113.5", ipv6Prefix: 64) == "::/64")
    }

    @Test(arguments: ["", "unknown", "203.0.113.5:443", "[2001:db8::1]", "2001:db8::1%eth0", "2001:db8::1/64",
                      "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", " 1.2.3.4", "::ffff:1.2.3.4.5", "2001:db8:::1"])
    func garbageIsNotAnAddress(_ text: String) {
        #expect(ClientNetwork.key(for: text, ipv6Prefix: 64) == nil)
    }

    @Test("behind a trusted proxy two addresses in one /64 are one client; garbage counts as the proxy")
    func resolvedThroughAProxy() {
        let resolver = ClientAddress(trustedProxies: ["127.0.0.1"], ipv6Prefix: 64)
        #expect(resolver.resolve(peer: "127.0.0.1", forwardedFor: "2001:db8:7:7::1")
                    == resolver.resolve(peer: "127.0.0.1", forwardedFor: "2001:db8:7:7:ffff::2"))
        #expect(resolver.resolve(peer: "127.0.0.1", forwardedFor: "2001:db8:7:8::1") == "2001:db8:7:8::/64")
        #expect(resolver.resolve(peer: "127.0.0.1", forwardedFor: "::ffff:198.51.100.7") == "198.51.100.7")
        #expect(resolver.resolve(peer: "127.0.0.1", forwardedFor: "not-an-address") == "127.0.0.1")
        #expect(resolver.resolve(peer: "127.0.0.1", forwardedFor: "2001:db8::1, 198.51.100.7:80") == "127.0.0.1")
        // The socket peer is grouped the same way, and an untrusted peer's header is still ignored.
        #expect(resolver.resolve(peer: "2001:db8:9:9::5", forwardedFor: "1.2.3.4") == "2001:db8:9:9::/64")
        let wide = ClientAddress(trustedProxies: [], ipv6Prefix: 48)
        #expect(wide.resolve(peer: "2001:db8:9:9::5", forwardedFor: nil) == "2001:db8:9::/48")
    }
}
