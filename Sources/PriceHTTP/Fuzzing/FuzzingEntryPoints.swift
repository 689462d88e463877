/// The header parsing of the server shell, for the fuzz targets in `Fuzz/` (a separate package, so
/// `internal` is out of its reach). SPI, so no ordinary client sees it: `@_spi(Fuzzing) import PriceHTTP`.
@_spi(Fuzzing) public enum PriceHTTPFuzzing {
    /// The key the per-address limits count a request under (`ClientAddress.resolve`).
    public static func clientKey(peer: String, forwardedFor: String?, trustedProxies: Set<String>,
                                 ipv6Prefix: Int) -> String {
        ClientAddress(trustedProxies: trustedProxies, ipv6Prefix: ipv6Prefix).resolve(peer: peer, forwardedFor: forwardedFor)
    }

    /// `ClientNetwork.key`: an address literal as the network it is counted by; nil for anything else.
    public static func networkKey(_ address: String, ipv6Prefix: Int) -> String? {
        ClientNetwork.key(for: address, ipv6Prefix: ipv6Prefix)
    }
}
