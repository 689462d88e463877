/// Everything a deployment can tune about the API (the server's own settings are `HTTPServer.Configuration`). `pricesvc` fills it from flags and
/// `PRICESVC_*` variables; the defaults here are the documented ones.
public struct ServiceSettings: Sendable {
    public var requestsPerMinutePerIP = 120
    public var accessTokenLifetime = 3600
    public var signUpsPerHourPerIP = 30
    public var signUpBurstPerIP = 30
    public var refreshesPerWindowPerIP = 150
    public var refreshWindowSeconds = 300
    public var refreshReuseSeconds = 10
    public var userMetadataMaxBytes = 1024
    /// `Retry-After` sent with 503 while the database is unreachable.
    public var unavailableRetryAfter = 1
    /// Which web origins may call the API from a browser (`*` by default, as Supabase).
    public var cors = CORSPolicy()
    /// Requests one client address may have waiting for or holding a database connection at once
    /// (0 = no limit): a quarter of the default pool of 8.
    public var databaseRequestsPerIP = 2
    /// Expensive calls (`price_quotes`: the published-rates engine) in flight from all clients at once
    /// (0 = no limit): half of the default pool of 8, so the rest always serves reads and inserts.
    public var expensiveRequestsInFlight = 4
    /// `statement_timeout` of an expensive call, lower than the connection's own.
    public var expensiveStatementTimeoutMilliseconds = 1500

    public init() {}
}
