@_spi(Fuzzing) import PriceHTTP

private let harness = ServiceHarness.shared
private let peer = "10.0.0.1"
private let trustedProxies: Set<String> = [peer, "10.0.0.2", "2001:db8::1"]

/// The request head as the service reads it: method and path (routing), every header the service
/// looks at (apikey, Authorization, Content-Type, Accept, Prefer, Range, Origin and the CORS
/// preflight, X-Request-Id) and the body, written as a request in text (see `RequestText`); and
/// `X-Forwarded-For` resolved to the address the limits count, as from a trusted proxy. Beyond not
/// crashing: every answer keeps `ResponseChecks`; the client key is an address literal's canonical
/// network (IPv4, or IPv6 masked to its prefix), or the proxy's own, and masking it again changes
/// nothing.
func fuzzRequestHead(_ input: UnsafeRawBufferPointer) {
    let text = RequestText(input)
    let request = harness.request(text)
    ResponseChecks.check(harness.handle(request), input: input)

    _ = RequestID.isWellFormed(request.headers["x-request-id"] ?? "")
    let prefix = 1 + (text.body.first.map(Int.init) ?? 63) % 128
    let key = PriceHTTPFuzzing.clientKey(peer: peer, forwardedFor: request.headers["x-forwarded-for"],
                                         trustedProxies: trustedProxies, ipv6Prefix: prefix)
    if key != peer {
        fuzzRequire(!key.utf8.contains(0), "key \(printable(key)) holds a NUL")
        if let slash = key.firstIndex(of: "/") {
            fuzzRequire(key[key.index(after: slash)...] == "\(prefix)", "key \(printable(key)) not at /\(prefix)")
            let network = String(key[..<slash])
            fuzzRequire(PriceHTTPFuzzing.networkKey(network, ipv6Prefix: prefix) == key,
                        "key \(printable(key)) is not its own network")
        } else {
            fuzzRequire(PriceHTTPFuzzing.networkKey(key, ipv6Prefix: prefix) == key, "key \(printable(key)) is not canonical")
        }
    }
    return
}
