import Foundation

/// Which address a request is accounted to. The socket peer, unless the peer is a
/// configured trusted proxy: then the right-most `X-Forwarded-For` entry that is not itself
/// a trusted proxy (entries left of it are client-controlled and cannot be believed).
public struct ClientAddress: Sendable {
    public let trustedProxies: Set<String>

    public init(trustedProxies: Set<String>) {
        self.trustedProxies = trustedProxies
    }

    public func resolve(peer: String, forwardedFor: String?) -> String {
        guard trustedProxies.contains(peer), let forwardedFor else { return peer }
        let hops = forwardedFor.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        for hop in hops.reversed() where !hop.isEmpty {
            if !trustedProxies.contains(hop) { return hop }
        }
        return peer
    }
}
