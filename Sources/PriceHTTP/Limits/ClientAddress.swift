import Foundation

/// Which client a request is accounted to. The socket peer, unless the peer is a configured
/// trusted proxy: then the right-most `X-Forwarded-For` entry that is not itself a trusted proxy
/// (entries left of it are client-controlled and cannot be believed). The address is then grouped
/// by `ClientNetwork`, so an IPv6 client counts once per network, not once per address.
struct ClientAddress: Sendable {
    let trustedProxies: Set<String>
    let ipv6Prefix: Int

    init(trustedProxies: Set<String>, ipv6Prefix: Int = 64) {
        self.trustedProxies = trustedProxies
        self.ipv6Prefix = ipv6Prefix
    }

    /// `peerKey`: the peer's network when the caller has it already (a connection's record), the same
    /// value this would compute.
    func resolve(peer: String, peerKey known: String? = nil, forwardedFor: String?) -> String {
        let peerKey = known ?? ClientNetwork.key(for: peer, ipv6Prefix: ipv6Prefix) ?? peer
        guard !trustedProxies.isEmpty, trustedProxies.contains(peer), let forwardedFor else { return peerKey }
        let hops = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() where !hop.isEmpty {
            if !trustedProxies.contains(hop) {
                // What the proxy wrote is not an address (a port, "unknown", garbage): the request
                // is the proxy's, which is never a fresh bucket.
                return ClientNetwork.key(for: hop, ipv6Prefix: ipv6Prefix) ?? peerKey
            }
        }
        return peerKey
    }
}
