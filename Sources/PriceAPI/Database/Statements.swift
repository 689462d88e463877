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
    static let identity = PreparedStatement(name: "pricesvc_identity", sql: """
        select pg_catalog.set_config('role', $1, true), pg_catalog.set_config('request.jwt', $2, true),
               auth.jwt() is not null
        """)

    /// The identity statement of a submission: the same role switch, without verifying here. The
    /// INSERT's RLS policy verifies the token once for the whole statement and decides whose rows
    /// they are, so verifying first as well would cost a second verification per submission (issue 9).
    /// $3 is the `sub` this service verified in-process; it only fills the `reporter_id` default's
    /// hint (`auth.unverified_uid()`), a value anyone with these credentials can write and the policy
    /// refuses when it is wrong. A revoked session still fails the INSERT (PT401), not just a read.
    static let submitterIdentity = PreparedStatement(name: "pricesvc_submitter_identity", sql: """
        select pg_catalog.set_config('role', $1, true), pg_catalog.set_config('request.jwt', $2, true),
               pg_catalog.set_config('pricesvc.hint_jwt', $2, true), pg_catalog.set_config('pricesvc.hint_uid', $3, true)
        """)

    static let insertReports = PreparedStatement(name: "pricesvc_insert_reports", sql: """
        insert into public.price_reports (location_id, rate_kind, price_cents, currency, client_report_id)
        select r.location_id, r.rate_kind, r.price_cents, r.currency, r.client_report_id
        from rows from (pg_catalog.jsonb_to_recordset($1::jsonb)
                        as (location_id text, rate_kind text, price_cents integer, currency text, client_report_id uuid))
             with ordinality as r(location_id, rate_kind, price_cents, currency, client_report_id, n)
        order by r.n
        """)

    /// Rows sent without `currency` (all rows of a request have the same keys): the column is left
    /// out so the table's default applies, instead of a copy of it here.
    static let insertReportsDefaultCurrency = PreparedStatement(name: "pricesvc_insert_reports_default_currency", sql: """
        insert into public.price_reports (location_id, rate_kind, price_cents, client_report_id)
        select r.location_id, r.rate_kind, r.price_cents, r.client_report_id
        from rows from (pg_catalog.jsonb_to_recordset($1::jsonb)
                        as (location_id text, rate_kind text, price_cents integer, client_report_id uuid))
             with ordinality as r(location_id, rate_kind, price_cents, client_report_id, n)
        order by r.n
        """)

    /// Filled by the insert trigger; lets `return=representation` answer without SELECT on the table.
    static let receipts = PreparedStatement(name: "pricesvc_receipts", sql: """
        select pg_catalog.current_setting('pricesvc.receipts', true)
        """)

    /// The median functions' rows, typed by libpq's text output (`MedianQuery.columns`, in this
    /// order); filters, order and paging are applied to them by `ReadOptions`.
    private static let medianColumns =
        "m.location_id, m.rate_kind, m.currency, m.median_cents, m.reporters, m.reports, m.last_reported_at"

    static let median = PreparedStatement(name: "pricesvc_median_rows", sql: """
        select \(medianColumns) from public.price_median(location_id => $1) m
        """)

    static let medianOfKind = PreparedStatement(name: "pricesvc_median_kind_rows", sql: """
        select \(medianColumns) from public.price_median(location_id => $1, rate_kind => $2) m
        """)

    /// Every rate kind: one call of the function per kind ($2 is `RateKind.arrayLiteral`), so the
    /// threshold and every other rule stay the function's; ordered as the function orders.
    static let medianOfAllKinds = PreparedStatement(name: "pricesvc_median_all_kinds_rows", sql: """
        select \(medianColumns)
        from pg_catalog.unnest($2::text[]) as k(kind)
             cross join lateral public.price_median(location_id => $1, rate_kind => k.kind) m
        order by m.location_id, m.rate_kind, m.currency
        """)

    static let medians = PreparedStatement(name: "pricesvc_medians_rows", sql: """
        select \(medianColumns)
        from public.price_medians(location_ids => array(select pg_catalog.jsonb_array_elements_text($1::jsonb))) m
        """)

    static let mediansOfKind = PreparedStatement(name: "pricesvc_medians_kind_rows", sql: """
        select \(medianColumns)
        from public.price_medians(location_ids => array(select pg_catalog.jsonb_array_elements_text($1::jsonb)),
                                  rate_kind => $2) m
        """)

    static let mediansOfAllKinds = PreparedStatement(name: "pricesvc_medians_all_kinds_rows", sql: """
        select \(medianColumns)
        from pg_catalog.unnest($2::text[]) as k(kind)
             cross join lateral public.price_medians(
                 location_ids => array(select pg_catalog.jsonb_array_elements_text($1::jsonb)), rate_kind => k.kind) m
        order by m.location_id, m.rate_kind, m.currency
        """)

    /// `price_quotes`' rows, typed by libpq's text output (`QuoteQuery.columns`, in this order), in the
    /// function's order; `ReadOptions` filters, orders and pages them. (One line: bench/pgbench_scripts.py
    /// reads one-line constants to rebuild the statements as sent.)
    private static let quoteColumns = "q.location_id, q.rate_kind, q.currency, q.median_cents, q.reporters, q.published_cents, q.published_allowed, q.published_reason, q.published_source, q.published_updated_at"

    /// `price_quotes` with every argument; `allQuotes` holds one statement per combination of arguments.
    static let quotes = PreparedStatement(name: "pricesvc_quotes_rows", sql: """
        select \(quoteColumns)
        from public.price_quotes(location_ids => array(select pg_catalog.jsonb_array_elements_text($1::jsonb)),
                                 rate_kind => $2,
                                 starts_at => $3::timestamptz,
                                 duration => $4::interval) q
        """)

    /// Sent after the identity statement, before an expensive call (`DatabaseShare.Cost.expensive`): its
    /// own statement timeout, for this transaction only. The server restarts the timer at each statement
    /// of the pipeline, so it applies to the call that follows.
    static let expensiveStatementTimeout = PreparedStatement(name: "pricesvc_expensive_statement_timeout", sql: """
        select pg_catalog.set_config('statement_timeout', $1, true)
        """)

    static let signUp = PreparedStatement(name: "pricesvc_sign_up", sql: """
        select s.user_id::text, s.session_id::text, pg_catalog.to_json(s.created_at)::text,
               pg_catalog.to_json(s.updated_at)::text
        from auth.sign_up_anonymous($1::bytea, $2::jsonb, $3::bytea, $4::integer, $5::integer) s
        """)

    /// Sent before `signUp` in the same pipeline (one transaction) when sign-up challenges are on:
    /// PA010 when the solution was already used, and then no user is created.
    static let spendSignUpChallenge = PreparedStatement(name: "pricesvc_spend_signup_challenge", sql: """
        select auth.spend_signup_challenge($1::bytea, pg_catalog.to_timestamp($2::double precision))
        """)

    static let refresh = PreparedStatement(name: "pricesvc_refresh", sql: """
        select r.status, r.user_id::text, r.session_id::text, pg_catalog.to_json(r.created_at)::text,
               pg_catalog.to_json(r.updated_at)::text, r.user_metadata::text, r.generations::text,
               pg_catalog.encode(r.live_token_hash, 'hex')
        from auth.refresh_session($1::bytea, $2::bytea, $3::bytea, $4::integer, $5::integer, $6::integer) r
        """)

    static let signOut = PreparedStatement(name: "pricesvc_sign_out", sql: """
        select auth.sign_out($1::uuid, $2)
        """)

    static let user = PreparedStatement(name: "pricesvc_user", sql: """
        select u.user_id::text, pg_catalog.to_json(u.created_at)::text, pg_catalog.to_json(u.updated_at)::text,
               u.user_metadata::text
        from auth.get_user($1::uuid, $2::uuid) u
        """)

    static let appliedMigrations = PreparedStatement(name: "pricesvc_applied_migrations", sql: """
        select name, checksum from pricesvc_meta.applied_migrations()
        """)

    /// The optional arguments of `public.price_quotes`, in its signature's order, with their casts.
    enum QuoteArgument: Int, CaseIterable, Hashable, Sendable {
        case rateKind, startsAt, duration

        /// The named argument, bound to parameter `$number`.
        func sql(parameter number: Int) -> String {
            switch self {
            case .rateKind: "rate_kind => $\(number)"
            case .startsAt: "starts_at => $\(number)::timestamptz"
            case .duration: "duration => $\(number)::interval"
            }
        }
    }

    /// The bit of `mask` in `allQuotes` for each argument a request passes.
    static func quoteMask(passing arguments: [QuoteArgument]) -> Int {
        arguments.reduce(0) { $0 | (1 << $1.rawValue) }
    }

    /// `quotes` without the arguments a request leaves out, indexed by `quoteMask` (one statement per
    /// combination, all prepared on every connection). With all of them it is exactly `quotes`, which
    /// the bench's pgbench runs.
    static let allQuotes: [PreparedStatement] = (0..<(1 << QuoteArgument.allCases.count)).map { mask in
        if mask == (1 << QuoteArgument.allCases.count) - 1 { return quotes }
        let passed = QuoteArgument.allCases.filter { mask & (1 << $0.rawValue) != 0 }
        var list = ["location_ids => array(select pg_catalog.jsonb_array_elements_text($1::jsonb))"]
        for (index, argument) in passed.enumerated() {
            list.append(argument.sql(parameter: index + 2))
        }
        return PreparedStatement(name: "pricesvc_quotes_rows_\(mask)", sql: """
            select \(quoteColumns)
            from public.price_quotes(\(list.joined(separator: ",\n                         "))) q
            """)
    }

    public static let all: [PreparedStatement] = [
        identity, submitterIdentity, insertReports, insertReportsDefaultCurrency, receipts, median, medianOfKind, medianOfAllKinds,
        medians, mediansOfKind, mediansOfAllKinds,
        signUp, refresh, signOut, user, appliedMigrations, expensiveStatementTimeout,
        // Last: on a database without migration 0006 (0010) they fail to prepare, and only they are then
        // retried on use.
        spendSignUpChallenge,
    ] + allQuotes
}
