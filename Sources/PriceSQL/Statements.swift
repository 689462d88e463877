import PriceDB

/// Every statement the service sends, prepared once per connection. Identity first, then the
/// work, in one pipeline: the `set_config` calls are transaction-local, so nothing leaks into
/// the next request on the same connection.
public enum Statements {
    /// PostgREST's role switch, with the signed token instead of a claims JSON: the database
    /// verifies the token itself (auth.jwt()), so holding the service's credentials is not
    /// enough to act as another reporter. The third column verifies it right here, after the
    /// switch (left to right), so a token whose session was signed out or revoked fails every call
    /// (PT401), reads included, not only inserts.
    public static let identity = Statement(name: "pricesvc_identity", sql: """
        select pg_catalog.set_config('role', $1, true), pg_catalog.set_config('request.jwt', $2, true),
               auth.jwt() is not null
        """,
        parameters: (Param<String>("role", .text), Param<String>("token", .text)),
        columns: (Column<String?>("role", .text), Column<String?>("token", .text), Column<Bool?>("verified", .boolean)))

    /// The identity statement of a submission: the same role switch, without verifying here. The
    /// INSERT's RLS policy verifies the token once for the whole statement and decides whose rows
    /// they are, so verifying first as well would cost a second verification per submission.
    /// $3 is the `sub` this service verified in-process; it only fills the `reporter_id` default's
    /// hint (`auth.unverified_uid()`), a value anyone with these credentials can write and the policy
    /// refuses when it is wrong. A revoked session still fails the INSERT (PT401), not just a read.
    public static let submitterIdentity = Statement(name: "pricesvc_submitter_identity", sql: """
        select pg_catalog.set_config('role', $1, true), pg_catalog.set_config('request.jwt', $2, true),
               pg_catalog.set_config('pricesvc.hint_jwt', $2, true), pg_catalog.set_config('pricesvc.hint_uid', $3, true)
        """,
        parameters: (Param<String>("role", .text), Param<String>("token", .text), Param<String>("sub", .text)),
        columns: (Column<String?>("role", .text), Column<String?>("token", .text), Column<String?>("hint_jwt", .text),
                  Column<String?>("hint_uid", .text)))

    /// $1 is the rows as one JSON array, each object with only the client-writable keys (a row without
    /// `lat` and `lng` stores neither: null).
    public static let insertReports = Statement(name: "pricesvc_insert_reports", sql: """
        insert into public.price_reports (location_id, rate_kind, price_cents, currency, client_report_id, lat, lng)
        select r.location_id, r.rate_kind, r.price_cents, r.currency, r.client_report_id, r.lat, r.lng
        from rows from (pg_catalog.jsonb_to_recordset($1::jsonb)
                        as (location_id text, rate_kind text, price_cents integer, currency text, client_report_id uuid,
                            lat double precision, lng double precision))
             with ordinality as r(location_id, rate_kind, price_cents, currency, client_report_id, lat, lng, n)
        order by r.n
        """,
        parameters: Param<String>("reports", .jsonb), columns: ())

    /// Rows sent without `currency` (all rows of a request have the same keys): the column is left
    /// out so the table's default applies, instead of a copy of it here.
    public static let insertReportsDefaultCurrency = Statement(name: "pricesvc_insert_reports_default_currency", sql: """
        insert into public.price_reports (location_id, rate_kind, price_cents, client_report_id, lat, lng)
        select r.location_id, r.rate_kind, r.price_cents, r.client_report_id, r.lat, r.lng
        from rows from (pg_catalog.jsonb_to_recordset($1::jsonb)
                        as (location_id text, rate_kind text, price_cents integer, client_report_id uuid,
                            lat double precision, lng double precision))
             with ordinality as r(location_id, rate_kind, price_cents, client_report_id, lat, lng, n)
        order by r.n
        """,
        parameters: Param<String>("reports", .jsonb), columns: ())

    /// Filled by the insert trigger; lets `return=representation` answer without SELECT on the table.
    public static let receipts = Statement(name: "pricesvc_receipts", sql: """
        select pg_catalog.current_setting('pricesvc.receipts', true)
        """,
        parameters: (), columns: Column<String?>("receipts", .text))

    /// The columns the median functions and `price_quotes` begin with: the community's median.
    private static let communityColumns: [SQLColumn] = [
        SQLColumn("location_id", .text), SQLColumn("rate_kind", .text), SQLColumn("currency", .text),
        SQLColumn("median_cents", .integer), SQLColumn("reporters", .integer),
    ]

    /// The median functions' result columns as they declare them (`returns table(...)`), in this order:
    /// the statements select exactly these, and PostgREST's read options (filters, order, paging) name them.
    public static let medianColumns: [SQLColumn] = communityColumns + [
        SQLColumn("reports", .integer), SQLColumn("last_reported_at", .timestamptz),
    ]

    private static let medianSelect = medianColumns.map { "m." + $0.name }.joined(separator: ", ")

    public static let median = Statement(name: "pricesvc_median_rows", sql: """
        select \(medianSelect) from public.price_median(location_id => $1) m
        """,
        parameters: Param<String>("location_id", .text), textColumns: medianColumns)

    public static let medianOfKind = Statement(name: "pricesvc_median_kind_rows", sql: """
        select \(medianSelect) from public.price_median(location_id => $1, rate_kind => $2) m
        """,
        parameters: (Param<String>("location_id", .text), Param<String>("rate_kind", .text)), textColumns: medianColumns)

    /// Every rate kind: one call of the function per kind ($2 lists them all), so the threshold and
    /// every other rule stay the function's; ordered as the function orders.
    public static let medianOfAllKinds = Statement(name: "pricesvc_median_all_kinds_rows", sql: """
        select \(medianSelect)
        from pg_catalog.unnest($2::text[]) as k(kind)
             cross join lateral public.price_median(location_id => $1, rate_kind => k.kind) m
        order by m.location_id, m.rate_kind, m.currency
        """,
        parameters: (Param<String>("location_id", .text), Param<String>("rate_kinds", .textArray)), textColumns: medianColumns)

    /// $1 is the location ids as one JSON array (no array-literal quoting to get wrong).
    public static let medians = Statement(name: "pricesvc_medians_rows", sql: """
        select \(medianSelect)
        from public.price_medians(location_ids => array(select pg_catalog.jsonb_array_elements_text($1::jsonb))) m
        """,
        parameters: Param<String>("location_ids", .jsonb), textColumns: medianColumns)

    public static let mediansOfKind = Statement(name: "pricesvc_medians_kind_rows", sql: """
        select \(medianSelect)
        from public.price_medians(location_ids => array(select pg_catalog.jsonb_array_elements_text($1::jsonb)),
                                  rate_kind => $2) m
        """,
        parameters: (Param<String>("location_ids", .jsonb), Param<String>("rate_kind", .text)), textColumns: medianColumns)

    public static let mediansOfAllKinds = Statement(name: "pricesvc_medians_all_kinds_rows", sql: """
        select \(medianSelect)
        from pg_catalog.unnest($2::text[]) as k(kind)
             cross join lateral public.price_medians(
                 location_ids => array(select pg_catalog.jsonb_array_elements_text($1::jsonb)), rate_kind => k.kind) m
        order by m.location_id, m.rate_kind, m.currency
        """,
        parameters: (Param<String>("location_ids", .jsonb), Param<String>("rate_kinds", .textArray)), textColumns: medianColumns)

    /// `price_quotes`' result columns as it declares them, in this order (as `medianColumns`): the
    /// community's median, then the published cost of the stay.
    public static let quoteColumns: [SQLColumn] = communityColumns + [
        SQLColumn("published_cents", .bigint), SQLColumn("published_allowed", .boolean),
        SQLColumn("published_reason", .text), SQLColumn("published_source", .text),
        SQLColumn("published_updated_at", .timestamptz),
    ]

    private static let quoteSelect = quoteColumns.map { "q." + $0.name }.joined(separator: ", ")

    /// The arguments of one `price_quotes` call: the ids as one JSON array, and the optional arguments a
    /// request passes (nil: left out of the call, so the function's own default applies).
    public struct QuoteArguments: Sendable, Equatable {
        public var locationIDs: String
        public var rateKind: String?
        public var startsAt: String?
        public var duration: String?

        public init(locationIDs: String, rateKind: String? = nil, startsAt: String? = nil, duration: String? = nil) {
            self.locationIDs = locationIDs
            self.rateKind = rateKind
            self.startsAt = startsAt
            self.duration = duration
        }

        func value(_ argument: QuoteArgument) -> String? {
            switch argument {
            case .rateKind: rateKind
            case .startsAt: startsAt
            case .duration: duration
            }
        }

        /// The bit of `allQuotes` for each argument present.
        var mask: Int { Statements.quoteMask(passing: QuoteArgument.allCases.filter { value($0) != nil }) }
    }

    /// The optional arguments of `public.price_quotes`, in its signature's order, with their casts.
    public enum QuoteArgument: Int, CaseIterable, Hashable, Sendable {
        case rateKind, startsAt, duration

        /// The named argument, bound to parameter `$number`.
        public func sql(parameter number: Int) -> String {
            switch self {
            case .rateKind: "rate_kind => $\(number)"
            case .startsAt: "starts_at => $\(number)::timestamptz"
            case .duration: "duration => $\(number)::interval"
            }
        }

        var parameter: SQLParameter {
            switch self {
            case .rateKind: SQLParameter("rate_kind", .text)
            case .startsAt: SQLParameter("starts_at", .timestamptz)
            case .duration: SQLParameter("duration", .interval)
            }
        }
    }

    /// The bit of `mask` in `allQuotes` for each argument a request passes.
    public static func quoteMask(passing arguments: [QuoteArgument]) -> Int {
        arguments.reduce(0) { $0 | (1 << $1.rawValue) }
    }

    /// `price_quotes` with every argument; `allQuotes` holds one statement per combination of arguments.
    public static let quotes = Statement<QuoteArguments, TextRow>(name: "pricesvc_quotes_rows", sql: """
        select \(quoteSelect)
        from public.price_quotes(location_ids => array(select pg_catalog.jsonb_array_elements_text($1::jsonb)),
                                 rate_kind => $2,
                                 starts_at => $3::timestamptz,
                                 duration => $4::interval) q
        """,
        parameters: quoteParameters(QuoteArgument.allCases), columns: quoteColumns,
        encode: { quoteParameterValues($0, QuoteArgument.allCases) })

    private static func quoteParameters(_ passed: [QuoteArgument]) -> [SQLParameter] {
        [SQLParameter("location_ids", .jsonb)] + passed.map(\.parameter)
    }

    private static func quoteParameterValues(_ arguments: QuoteArguments, _ passed: [QuoteArgument]) -> [String?] {
        [arguments.locationIDs] + passed.map { arguments.value($0) }
    }

    /// `quotes` without the arguments a request leaves out, indexed by `quoteMask` (one statement per
    /// combination, all prepared on every connection). With all of them it is exactly `quotes`, which
    /// the bench's pgbench runs.
    public static let allQuotes: [Statement<QuoteArguments, TextRow>] = (0..<(1 << QuoteArgument.allCases.count)).map { mask in
        if mask == (1 << QuoteArgument.allCases.count) - 1 { return quotes }
        let passed = QuoteArgument.allCases.filter { mask & (1 << $0.rawValue) != 0 }
        var list = ["location_ids => array(select pg_catalog.jsonb_array_elements_text($1::jsonb))"]
        for (index, argument) in passed.enumerated() {
            list.append(argument.sql(parameter: index + 2))
        }
        return Statement(name: "pricesvc_quotes_rows_\(mask)", sql: """
            select \(quoteSelect)
            from public.price_quotes(\(list.joined(separator: ",\n                         "))) q
            """,
            parameters: quoteParameters(passed), columns: quoteColumns,
            encode: { quoteParameterValues($0, passed) })
    }

    /// The statement that passes exactly the arguments present in `arguments`.
    public static func quotes(for arguments: QuoteArguments) -> Statement<QuoteArguments, TextRow> {
        allQuotes[arguments.mask]
    }

    /// `places_nearby`'s result columns as its row type declares them (private.nearby_place), in this order.
    public static let placesColumns: [SQLColumn] = [
        SQLColumn("location_id", .text), SQLColumn("name", .text), SQLColumn("source", .text), SQLColumn("kind", .text),
        SQLColumn("lat", .doublePrecision), SQLColumn("lng", .doublePrecision), SQLColumn("distance_m", .integer),
        SQLColumn("median_cents", .integer), SQLColumn("reporters", .integer), SQLColumn("currency", .text),
        SQLColumn("last_reported_at", .timestamptz), SQLColumn("published_cents", .bigint),
        SQLColumn("published_allowed", .boolean), SQLColumn("published_reason", .text),
    ]

    private static let placesSelect = placesColumns.map { "n." + $0.name }.joined(separator: ", ")

    /// The arguments of one `places_nearby` call as sent: `lat` and `lng` always, `starts_at` and `duration`
    /// always (null when left out, which is the function's default), the others only when given (nil: left
    /// out of the call, so the function's own default applies).
    public struct PlacesArguments: Sendable, Equatable {
        public var lat: String
        public var lng: String
        public var radiusMetres: String?
        public var rateKind: String?
        public var startsAt: String?
        public var duration: String?
        public var maxResults: String?

        public init(lat: String, lng: String, radiusMetres: String? = nil, rateKind: String? = nil, startsAt: String? = nil,
                    duration: String? = nil, maxResults: String? = nil) {
            (self.lat, self.lng, self.radiusMetres, self.rateKind) = (lat, lng, radiusMetres, rateKind)
            (self.startsAt, self.duration, self.maxResults) = (startsAt, duration, maxResults)
        }

        func value(_ argument: PlacesArgument) -> String? {
            switch argument {
            case .radiusMetres: radiusMetres
            case .rateKind: rateKind
            case .maxResults: maxResults
            }
        }

        /// The index into `allPlaces` of the statement that passes exactly the optional arguments present.
        var mask: Int { PlacesArgument.allCases.filter { value($0) != nil }.reduce(0) { $0 | (1 << $1.rawValue) } }
    }

    /// The arguments of `public.places_nearby` whose defaults are not null, with their casts.
    public enum PlacesArgument: Int, CaseIterable, Hashable, Sendable {
        case radiusMetres, rateKind, maxResults

        func sql(parameter number: Int) -> String {
            switch self {
            case .radiusMetres: "radius_m => $\(number)::integer"
            case .rateKind: "rate_kind => $\(number)"
            case .maxResults: "max_results => $\(number)::integer"
            }
        }

        var parameter: SQLParameter {
            switch self {
            case .radiusMetres: SQLParameter("radius_m", .integer)
            case .rateKind: SQLParameter("rate_kind", .text)
            case .maxResults: SQLParameter("max_results", .integer)
            }
        }
    }

    /// `places_nearby` with the optional arguments of each combination, indexed by `PlacesArguments.mask`
    /// (all prepared on every connection); the last passes every argument, and is the one the bench runs.
    public static let allPlaces: [Statement<PlacesArguments, TextRow>] = (0..<(1 << PlacesArgument.allCases.count)).map { mask in
        let passed = PlacesArgument.allCases.filter { mask & (1 << $0.rawValue) != 0 }
        var list = ["lat => $1::double precision", "lng => $2::double precision", "starts_at => $3::timestamptz",
                    "duration => $4::interval"]
        for (index, argument) in passed.enumerated() { list.append(argument.sql(parameter: index + 5)) }
        return Statement(name: "pricesvc_places_nearby_\(mask)", sql: """
            select \(placesSelect)
            from public.places_nearby(\(list.joined(separator: ", "))) n
            """,
            parameters: [SQLParameter("lat", .doublePrecision), SQLParameter("lng", .doublePrecision),
                         SQLParameter("starts_at", .timestamptz), SQLParameter("duration", .interval)] + passed.map(\.parameter),
            columns: placesColumns,
            encode: { arguments in [arguments.lat, arguments.lng, arguments.startsAt, arguments.duration] + passed.map { arguments.value($0) } })
    }

    /// The statement that passes exactly the arguments present in `arguments`.
    public static func places(for arguments: PlacesArguments) -> Statement<PlacesArguments, TextRow> {
        allPlaces[arguments.mask]
    }

    /// `places_match`'s result columns (private.place_match; similarity, a real, sent as double precision).
    public static let placeMatchColumns: [SQLColumn] = [
        SQLColumn("location_id", .text), SQLColumn("name", .text), SQLColumn("distance_m", .integer),
        SQLColumn("similarity", .doublePrecision),
    ]

    /// `places_match(name, lat, lng)` and, when `radius_m` is given, with it: the function's default otherwise.
    public static let placeMatches: [Statement<(String, String, String, String?), TextRow>] = [false, true].map { radius in
        Statement(name: "pricesvc_places_match\(radius ? "_radius" : "")", sql: """
            select m.location_id, m.name, m.distance_m, m.similarity::double precision
            from public.places_match(name => $1, lat => $2::double precision, lng => $3::double precision\(radius ? ", radius_m => $4::integer" : "")) m
            """,
            parameters: [SQLParameter("name", .text), SQLParameter("lat", .doublePrecision), SQLParameter("lng", .doublePrecision)]
                + (radius ? [SQLParameter("radius_m", .integer)] : []),
            columns: placeMatchColumns,
            encode: { arguments in [arguments.0, arguments.1, arguments.2] + (radius ? [arguments.3] : []) })
    }

    /// Sent after the identity statement, before an expensive call: its own statement timeout, for this
    /// transaction only. The server restarts the timer at each statement of the pipeline, so it applies
    /// to the call that follows.
    public static let expensiveStatementTimeout = Statement(name: "pricesvc_expensive_statement_timeout", sql: """
        select pg_catalog.set_config('statement_timeout', $1, true)
        """,
        parameters: Param<Int>("milliseconds", .text), columns: Column<String?>("statement_timeout", .text))

    public static let signUp = Statement(name: "pricesvc_sign_up", sql: """
        select s.user_id::text, s.session_id::text, pg_catalog.to_json(s.created_at)::text,
               pg_catalog.to_json(s.updated_at)::text
        from auth.sign_up_anonymous($1::bytea, $2::jsonb, $3::bytea, $4::integer, $5::integer) s
        """,
        parameters: (Param<Bytea>("ip_key", .bytea), Param<String>("user_metadata", .jsonb),
                     Param<Bytea>("refresh_token_hash", .bytea), Param<Int>("signups_per_hour", .integer),
                     Param<Int>("signup_burst", .integer)),
        columns: (Column<String>("user_id", .text), Column<String>("session_id", .text),
                  Column<String>("created_at", .text), Column<String>("updated_at", .text)))

    /// An App Attest sign-up: the identity and its verified key in one call (PA011 when the key already
    /// made an identity; the per-address limit as `signUp`). Sent after `spendSignUpChallenge` in the
    /// same pipeline.
    public static let signUpAttested = Statement(name: "pricesvc_sign_up_attested", sql: """
        select s.user_id::text, s.session_id::text, pg_catalog.to_json(s.created_at)::text,
               pg_catalog.to_json(s.updated_at)::text
        from auth.sign_up_attested($1::bytea, $2::jsonb, $3::bytea, $4::integer, $5::integer,
                                   $6::bytea, $7::text, $8::text, $9::bytea, $10::bytea) s
        """,
        parameters: (Param<Bytea>("ip_key", .bytea), Param<String>("user_metadata", .jsonb),
                     Param<Bytea>("refresh_token_hash", .bytea), Param<Int>("signups_per_hour", .integer),
                     Param<Int>("signup_burst", .integer), Param<Bytea>("key_id_hash", .bytea),
                     Param<String>("app_id", .text), Param<String>("environment", .text),
                     Param<Bytea>("public_key", .bytea), Param<Bytea>("receipt", .bytea)),
        columns: (Column<String>("user_id", .text), Column<String>("session_id", .text),
                  Column<String>("created_at", .text), Column<String>("updated_at", .text)))

    /// An Android Key Attestation sign-up: the identity and its verified key in one call (PA011 when the
    /// key already made an identity; the per-address limit as `signUp`). Sent after `spendSignUpChallenge`
    /// in the same pipeline; the same four columns as `signUpAttested`.
    public static let signUpAndroidAttested = Statement(name: "pricesvc_sign_up_android_attested", sql: """
        select s.user_id::text, s.session_id::text, pg_catalog.to_json(s.created_at)::text,
               pg_catalog.to_json(s.updated_at)::text
        from auth.sign_up_android_attested($1::bytea, $2::jsonb, $3::bytea, $4::integer, $5::integer,
                                           $6::bytea, $7::text, $8::text, $9::text, $10::boolean) s
        """,
        parameters: (Param<Bytea>("ip_key", .bytea), Param<String>("user_metadata", .jsonb),
                     Param<Bytea>("refresh_token_hash", .bytea), Param<Int>("signups_per_hour", .integer),
                     Param<Int>("signup_burst", .integer), Param<Bytea>("key_id_hash", .bytea),
                     Param<String>("package_name", .text), Param<String>("security_level", .text),
                     Param<String>("verified_boot_state", .text), Param<String>("device_locked", .boolean)),
        columns: (Column<String>("user_id", .text), Column<String>("session_id", .text),
                  Column<String>("created_at", .text), Column<String>("updated_at", .text)))

    /// Sent before `signUp` in the same pipeline (one transaction) when sign-up challenges are on:
    /// PA010 when the solution was already used, and then no user is created.
    public static let spendSignUpChallenge = Statement(name: "pricesvc_spend_signup_challenge", sql: """
        select auth.spend_signup_challenge($1::bytea, pg_catalog.to_timestamp($2::double precision))
        """,
        parameters: (Param<Bytea>("digest", .bytea), Param<Int>("expires_at", .doublePrecision)),
        columns: Column<String?>("spend_signup_challenge", .void))

    /// One row: `status` is `ok` when the token rotated; the session's live token is `generations`
    /// derivations down from the presented one, and `live_token_hash` is its stored hash.
    public static let refresh = Statement(name: "pricesvc_refresh", sql: """
        select r.status, r.user_id::text, r.session_id::text, pg_catalog.to_json(r.created_at)::text,
               pg_catalog.to_json(r.updated_at)::text, r.user_metadata::text, r.generations::text,
               pg_catalog.encode(r.live_token_hash, 'hex'), r.attested, r.attestation
        from auth.refresh_session($1::bytea, $2::bytea, $3::bytea, $4::integer, $5::integer, $6::integer) r
        """,
        parameters: (Param<Bytea>("presented_hash", .bytea), Param<Bytea>("child_hash", .bytea),
                     Param<Bytea>("ip_key", .bytea), Param<Int>("refreshes_per_window", .integer),
                     Param<Int>("window_seconds", .integer), Param<Int>("reuse_seconds", .integer)),
        columns: (Column<String?>("status", .text), Column<String?>("user_id", .text), Column<String?>("session_id", .text),
                  Column<String?>("created_at", .text), Column<String?>("updated_at", .text),
                  Column<String?>("user_metadata", .text), Column<Int?>("generations", .text),
                  Column<String?>("live_token_hash", .text), Column<Bool?>("attested", .boolean),
                  Column<String?>("attestation", .text)))

    /// Sent first on every auth route, in the same transaction: the token PostgreSQL verifies now, with
    /// the ring as it is now. For sign-up and refresh it is the instance's own anon key (so an instance
    /// whose signing key was retired mints nothing, even if it could not re-read the ring); for /user
    /// and /logout the caller's access token, which `auth.get_user` and `auth.sign_out` check again
    /// against the session they are asked about (a token acts only on its own session).
    public static let verifiedToken = Statement(name: "pricesvc_verified_token", sql: """
        select pg_catalog.set_config('request.jwt', $1, true), auth.jwt() is not null
        """,
        parameters: Param<String>("token", .text),
        columns: (Column<String?>("token", .text), Column<Bool?>("verified", .boolean)))

    public static let signOut = Statement(name: "pricesvc_sign_out", sql: """
        select auth.sign_out($1::uuid, $2)
        """,
        parameters: (Param<String>("session_id", .uuid), Param<String>("scope", .text)),
        columns: Column<String?>("sign_out", .void))

    public static let user = Statement(name: "pricesvc_user", sql: """
        select u.user_id::text, pg_catalog.to_json(u.created_at)::text, pg_catalog.to_json(u.updated_at)::text,
               u.user_metadata::text, u.attested, u.attestation
        from auth.get_user($1::uuid, $2::uuid) u
        """,
        parameters: (Param<String>("user_id", .uuid), Param<String>("session_id", .uuid)),
        columns: (Column<String?>("user_id", .text), Column<String?>("created_at", .text),
                  Column<String?>("updated_at", .text), Column<String?>("user_metadata", .text),
                  Column<Bool?>("attested", .boolean), Column<String?>("attestation", .text)))

    public static let appliedMigrations = Statement(name: "pricesvc_applied_migrations", sql: """
        select name, checksum from pricesvc_meta.applied_migrations()
        """,
        parameters: (), columns: (Column<String>("name", .text), Column<String>("checksum", .text)))

    /// The signing keys as this instance may see them: ids and slots, and each key wrapped for the key
    /// the instance holds (`holder_key_id`: ``AnonAuth/SigningKeyRing/keyID(_:)`` of its secret).
    public static let signingKeyRing = Statement(name: "pricesvc_signing_key_ring", sql: """
        select key_id, slot, wrapped from auth.signing_key_ring($1)
        """,
        parameters: Param<String>("holder_key_id", .text),
        columns: (Column<String>("key_id", .text), Column<String>("slot", .text), Column<Bytea?>("wrapped", .bytea)))

    /// The SHA-256 of every publishable API key not revoked.
    public static let publishableKeyHashes = Statement(name: "pricesvc_publishable_key_hashes", sql: """
        select key_hash from auth.publishable_key_hashes()
        """,
        parameters: (), columns: Column<Bytea>("key_hash", .bytea))

    /// Every statement the service sends, in the order a new connection prepares them.
    public static let catalog: [StatementDescription] = [
        identity.description, submitterIdentity.description, insertReports.description,
        insertReportsDefaultCurrency.description, receipts.description, median.description, medianOfKind.description,
        medianOfAllKinds.description, medians.description, mediansOfKind.description, mediansOfAllKinds.description,
        signUp.description, refresh.description, verifiedToken.description, signOut.description, user.description,
        appliedMigrations.description,
        expensiveStatementTimeout.description,
        // Last: on a database without migration 0006 (0010) they fail to prepare, and only they are then
        // retried on use.
        spendSignUpChallenge.description,
        // Migration 0017's.
        signingKeyRing.description, publishableKeyHashes.description,
        // Last too: on a database without migration 0015.
        signUpAttested.description,
        // Migration 0022's.
        signUpAndroidAttested.description,
    ] + allQuotes.map(\.description)
        // Migration 0022's: on an older database they fail to prepare, and are retried on use.
        + allPlaces.map(\.description) + placeMatches.map(\.description)

    /// What every pooled connection prepares.
    public static let all: [PreparedStatement] = catalog.map { PreparedStatement(name: $0.name, sql: $0.sql) }
}

extension Statement where Row == TextRow {
    /// A statement with typed parameters whose rows are passed on as text, checked against `textColumns`.
    public init<each P: TextEncodable>(name: String, sql: String, parameters: (repeat Param<each P>),
                                       textColumns: [SQLColumn]) where Parameters == (repeat each P) {
        var parameterList: [SQLParameter] = []
        for parameter in repeat each parameters { parameterList.append(parameter.description) }
        self.init(name: name, sql: sql, parameters: parameterList, columns: textColumns, encode: { values in
            var encoded: [String?] = []
            for value in repeat each values { encoded.append(value.sqlText) }
            return encoded
        })
    }
}
