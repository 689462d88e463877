import PriceDB

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
    /// The user_metadata keys a sign-up may store (`PRICESVC_USER_METADATA_KEYS`); others are dropped.
    /// Empty by default: an app that sends an email address in `data` does not get it stored.
    public var userMetadataKeys: Set<String> = []
    /// The largest response body a function's result may make (`PRICESVC_MAX_RESPONSE_BYTES`); larger
    /// is 400 PGRST190, refused before the body is built. The widest legitimate answer, every rate kind
    /// of 50 locations from `price_medians` with every column and 200-character ids of 4-byte characters,
    /// measures 195 001 bytes (50 such quotes: 57 151); `ClientInputBoundsTests` keeps it under a quarter.
    public var maxResponseBytes = ServiceSettings.defaultMaxResponseBytes
    public static let defaultMaxResponseBytes = ReadOptions.defaultMaxResponseBytes
    /// `Retry-After` sent with 503 while the database is unreachable.
    public var unavailableRetryAfter = 1
    /// How long a request waits for an unavailable database to come back before it is answered 503
    /// (`PRICESVC_DB_HOLD_MS`; `DatabaseHold.off` answers at once, as before the hold).
    public var databaseHold = DatabaseHold()
    /// Which web origins may call the API from a browser (`*` by default, as Supabase).
    public var cors = CORSPolicy()
    /// Requests one client address may have waiting for or holding a database connection at once
    /// (0 = no limit): a quarter of the default pool.
    public var databaseRequestsPerIP = PoolConfiguration.defaultSize / 4
    /// Expensive calls (`price_quotes`: the published-rates engine) in flight from all clients at once
    /// (0 = no limit): half of the default pool, so the rest always serves reads and inserts.
    public var expensiveRequestsInFlight = PoolConfiguration.defaultSize / 2
    /// `statement_timeout` of an expensive call, lower than the connection's own.
    public var expensiveStatementTimeoutMilliseconds = 1500

    public init() {}
}
