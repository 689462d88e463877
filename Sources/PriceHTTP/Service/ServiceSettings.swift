/// Everything a deployment can tune about the HTTP surface. `pricesvc` fills it from flags and
/// `PRICESVC_*` variables; the defaults here are the documented ones.
public struct ServiceSettings: Sendable {
    public var requestsPerMinutePerIP = 120
    public var trustedProxies: Set<String> = []
    /// IPv6 clients are limited per network of this prefix length: one host usually holds a whole /64.
    public var ipv6Prefix = 64
    public var accessTokenLifetime = 3600
    public var signUpsPerHourPerIP = 30
    public var signUpBurstPerIP = 30
    public var refreshesPerWindowPerIP = 150
    public var refreshWindowSeconds = 300
    public var refreshReuseSeconds = 10
    public var userMetadataMaxBytes = 1024
    /// `Retry-After` sent with 503 while the database is unreachable.
    public var unavailableRetryAfter = 1
    public var accessLog = true

    public init() {}
}
