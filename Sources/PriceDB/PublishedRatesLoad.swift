/// What `private.cds_replace_source` did with one source's document.
public struct PublishedRatesLoad: Sendable, Equatable {
    /// `imported`, or `unchanged` when the source already holds exactly this data (nothing was written).
    public var status: String
    public var checksum: String
    public var zones: Int
    public var policies: Int
    public var rules: Int
    public var timeSpans: Int
    public var rates: Int
}

/// `pricesvc import-rates`: owner-only steps, each on its own `MigrationSession` like the others.
extension OwnerTasks {
    /// The IANA zone names this PostgreSQL knows: a feed's times are read there, so its list decides.
    public func timeZoneNames() throws(DatabaseError) -> Set<String> {
        let session = try MigrationSession(conninfo: conninfo, connectTimeout: connectTimeout)
        return Set(try session.execute("select name from pg_catalog.pg_timezone_names").rows.compactMap { $0.first ?? nil })
    }

    /// Replaces one source's published rates with `document` in one statement (so atomically): readers
    /// see the old data or the new, and a failure leaves the old.
    public func replacePublishedRates(source: String, document: String) throws(DatabaseError) -> PublishedRatesLoad {
        let session = try MigrationSession(conninfo: conninfo, connectTimeout: connectTimeout)
        let rows = try session.execute("""
            select status, checksum, zones, policies, rules, time_spans, rates
            from private.cds_replace_source($1, $2::jsonb)
            """, [source, document]).rows
        guard let row = rows.first, row.count == 7, let status = row[0], let checksum = row[1] else {
            throw DatabaseError(code: .protocolViolation, message: "private.cds_replace_source returned no status row")
        }
        let counts = row[2...].map { $0.flatMap { Int($0) } ?? 0 }
        return PublishedRatesLoad(status: status, checksum: checksum, zones: counts[0], policies: counts[1],
                                  rules: counts[2], timeSpans: counts[3], rates: counts[4])
    }
}
