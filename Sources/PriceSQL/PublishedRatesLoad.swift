import PriceDB

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
        return Set(try session.rows(OwnerStatements.timeZoneNames, ()))
    }

    /// Replaces one source's published rates with `document` in one statement (so atomically): readers
    /// see the old data or the new, and a failure leaves the old.
    public func replacePublishedRates(source: String, document: String) throws(DatabaseError) -> PublishedRatesLoad {
        let session = try MigrationSession(conninfo: conninfo, connectTimeout: connectTimeout)
        guard let row = try session.rows(OwnerStatements.replacePublishedRates, (source, document)).first else {
            throw DatabaseError(code: .protocolViolation, message: "private.cds_replace_source returned no status row")
        }
        let load = PublishedRatesLoad(status: row.0, checksum: row.1, zones: row.2, policies: row.3,
                                      rules: row.4, timeSpans: row.5, rates: row.6)
        // Fresh statistics for what the quote functions read, at once: they keep one generic plan per
        // session, made with the statistics of the moment, and ANALYZE is what makes sessions plan anew.
        // A plan made while the tables were empty (before the first import) would otherwise scan a large
        // feed sequentially on every quote until autovacuum got round to it.
        if load.status == "imported" { _ = try session.execute(OwnerStatements.analyzePublishedRates) }
        return load
    }
}

/// `pricesvc import-places`.
extension OwnerTasks {
    /// Replaces one source's places with `document` in one statement (so atomically); returns how many
    /// places the source had before and has now.
    public func replacePlaces(source: String, document: String) throws(DatabaseError) -> (previous: Int, stored: Int) {
        let session = try MigrationSession(conninfo: conninfo, connectTimeout: connectTimeout)
        guard let row = try session.rows(OwnerStatements.replacePlaces, (source, document)).first else {
            throw DatabaseError(code: .protocolViolation, message: "private.places_replace_source returned no row")
        }
        _ = try session.execute(OwnerStatements.analyzePlaces)
        return (row.0, row.1)
    }
}
