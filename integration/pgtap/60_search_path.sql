-- Search-path hijack: a caller who puts a schema they control in front of everything (even before
-- pg_catalog), or creates temp tables, changes nothing inside any SECURITY DEFINER function.
begin;
\ir _helpers.psql
select plan(39);

-- Known state before the attack.
select tap.seed(r, 'hijack:garage', c) from (values (tap.alice(), 100), (tap.bob(), 200), (tap.carol(), 300)) v(r, c) \g /dev/null
select tap.seed(r, 'hijack:quiet', 100) from unnest(array[tap.alice(), tap.bob()]) r \g /dev/null
select tap.seed(tap.dave(), 'hijack:cap', 100) from generate_series(1, 10) \g /dev/null
-- Published rates for hijack:garage: 100 an hour, always.
select private.cds_replace_source('hijack', $${"time_zone": "Europe/Paris", "currency": "USD", "last_updated": 0,
    "zones": [{"curb_zone_id": "00000000-0000-4000-8000-00000000000a", "location_id": "hijack:garage", "start_date": 0,
               "published_date": 0, "last_updated_date": 0, "curb_policy_ids": ["00000000-0000-4000-8000-00000000000b"]}],
    "policies": [{"curb_policy_id": "00000000-0000-4000-8000-00000000000b", "priority": 1, "published_date": 0}],
    "rules": [{"curb_policy_id": "00000000-0000-4000-8000-00000000000b", "rule_index": 0, "activity": "parking"}],
    "time_spans": [],
    "rates": [{"curb_policy_id": "00000000-0000-4000-8000-00000000000b", "rule_index": 0, "rate_index": 0,
               "rate": 100, "rate_unit": "hour"}]}$$) \g /dev/null

-- Places: hijack:garage 100 m east of a point in Paris, hijack:quiet 200 m north.
insert into private.places (source, location_id, name, kind, geom)
select 'hijack', v.id, v.id, 'parking',
       extensions.st_project(extensions.st_setsrid(extensions.st_makepoint(2.3522, 48.8566), 4326)::extensions.geography,
                             v.metres, pg_catalog.radians(v.bearing))::extensions.geometry
from (values ('hijack:garage', 100, 90), ('hijack:quiet', 200, 0)) v(id, metres, bearing);

-- Community places: two reporters at hijack:spot, 2 km south of the Paris point (a third, below,
-- reports through the attacker's path).
insert into public.price_reports (reporter_id, location_id, rate_kind, price_cents, lat, lng)
select r, 'hijack:spot', 'hourly', 400, 48.8386, 2.3522 from unnest(array[tap.bob(), tap.carol()]) r;

-- The attacker's schema: same-named functions, tables and operators, each returning something that
-- would help them if it were picked up.
create schema evil;
grant usage on schema evil to public;
create function evil.now() returns timestamptz language sql return '2000-01-01'::timestamptz;
create function evil.median_min_reporters() returns integer language sql return 1;
create function evil.reporter_cap() returns integer language sql return 1000;
create function evil.report_window() returns interval language sql return interval '100 years';
create function evil.cap_window() returns interval language sql return interval '1 second';
create function evil.max_median_locations() returns integer language sql return 100000;
create function evil.jwt_leeway() returns interval language sql return interval '100 years';
create function evil.hmac(bytea, bytea, text) returns bytea language sql return '\x00'::bytea;
create function evil.current_setting(text, boolean) returns text language sql
    return 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJhMTFjZTAwMC0wMDAwLTQwMDAtODAwMC0wMDAwMDAwMDAwMDEifQ.';
create function evil.pg_advisory_xact_lock(integer, integer) returns void language sql return null;
create function evil.clock_timestamp() returns timestamptz language sql return '2000-01-01'::timestamptz;
create function evil.reporter_maturity() returns interval language sql return interval '0 seconds';
create function evil.pg_xact_commit_timestamp(xid) returns timestamptz language sql return '2000-01-01'::timestamptz;
create function evil.rate_kinds() returns text[] language sql return '{hourly,daily,flat,monthly,weekly}'::text[];
create domain evil.rate_kind as text;
create function evil.rate_kind_argument(text) returns text language sql return 'weekly';
create function evil.reporter_lock_namespace() returns integer language sql return 1;
create function evil.take_rate_limit_token(text, bytea, integer, double precision, text) returns void
    language sql return null;
create type evil.median_row as (location_id text, rate_kind text, currency text, median_cents integer,
                                reporters integer, reports integer, last_reported_at timestamptz);
create function evil.report_medians(text[], text, timestamptz) returns setof evil.median_row language sql
    return ('hijack:fake', 'hourly', 'USD', 1, 1, 1, null)::evil.median_row;
create table evil.rate_limit_buckets (like auth.rate_limit_buckets);
create table evil.sessions (like auth.sessions);
create table evil.price_reports (like public.price_reports);
create table evil.signing_keys (slot text, secret bytea);
insert into evil.signing_keys values ('current', convert_to('attacker-key-attacker-key-attacker-key!!', 'UTF8'));
create table evil.users (like auth.users);
create table evil.schema_migrations (name text, checksum text, applied_at timestamptz);
create table evil.median_queue (like private.median_queue);
create function evil.cds_max_stay() returns interval language sql return interval '100 years';
create function evil.cds_unit_seconds(text) returns integer language sql return 1;
create function evil.timezone(text, timestamptz) returns timestamp language sql return '2000-01-01'::timestamp;
create table evil.rates (like cds.rates);
create table evil.zones (like cds.zones);
insert into evil.rates select * from cds.rates;
update evil.rates set rate = 1000000;
insert into evil.schema_migrations values ('evil.sql', 'x', now());
create function evil.text_eq_always(text, text) returns boolean language sql return true;
create operator evil.= (leftarg = text, rightarg = text, function = evil.text_eq_always);
create function evil.places_max_radius_m() returns integer language sql return 1000000;
create function evil.places_max_results() returns integer language sql return 1000000;
create function evil.st_distance(anyelement, anyelement, boolean) returns double precision language sql as 'select 0::double precision';
create function evil.st_dwithin(anyelement, anyelement, double precision, boolean) returns boolean language sql as 'select true';
create function evil.round(double precision) returns double precision language sql return 0;
create function evil.similarity(text, text) returns real language sql return 1;
create function evil.lower(text) returns text language sql return 'hijack:quiet';
create table evil.community_places (like private.community_places);
create function evil.counted_positions(text[], timestamptz)
    returns table(location_id text, reporter_id uuid, lat double precision, lng double precision, created_at timestamptz, id bigint)
    language sql as $$ select 'hijack:lone', null::uuid, 0::double precision, 0::double precision, now(), 0::bigint $$;
create table evil.places (source text, location_id text, name text, kind text, lat double precision, lng double precision);
insert into evil.places values ('evil', 'hijack:fake', 'fake', 'parking', 48.8566, 2.3522);
grant all on all tables in schema evil to public;
-- Temp tables shadow relation names even with an empty search_path unless every name is qualified.
create temp table price_reports (like public.price_reports);
create temp table rates (like cds.rates);
insert into rates select * from evil.rates;
create temp table places (like evil.places);
insert into places select * from evil.places;
create temp table signing_keys (slot text, secret bytea);
insert into signing_keys values ('current', convert_to('attacker-key-attacker-key-attacker-key!!', 'UTF8'));
grant all on price_reports, signing_keys, rates, places to public;

-- Runs a statement the way the attacker would: evil schema first, pg_catalog last. Rows come back as text.
create function tap.evil(statement text) returns setof text language plpgsql
    set search_path = evil, pg_temp, pg_catalog as $$
begin
    return query execute 'select t::text from (' || statement || ') t';
end
$$;
create function tap.evil_exec(statement text) returns void language plpgsql
    set search_path = evil, pg_temp, pg_catalog as $$
begin
    execute statement;
end
$$;

set local role authenticated;

-- auth.jwt(): neither a fake hmac, a fake key table nor a fake current_setting get a forged token through.
select tap.use_token(tap.sign('{"alg":"HS256"}', '{"sub":"a11ce000-0000-4000-8000-000000000001"}',
                              convert_to('attacker-key-attacker-key-attacker-key!!', 'UTF8'))) \g /dev/null
select throws_ok($$select tap.evil('select auth.jwt()')$$, 'PT401', 'invalid token',
                 'auth.jwt(): a token signed with the attacker''s key still fails');
select tap.use_token(tap.token_for(tap.dave())) \g /dev/null
select results_eq($$select * from tap.evil('select auth.uid()')$$, array['(' || tap.dave() || ')'],
                  'auth.jwt(): the real token and key are used');

-- The insert trigger: real now(), real cap, real lock, real table.
select throws_ok($$select tap.evil_exec('insert into public.price_reports (location_id, rate_kind, price_cents) values (''hijack:cap'', ''hourly'', 1)')$$,
                 'PT429', null, 'admit_price_report(): the real cap of 10 still holds');
select tap.use_token(tap.token_for(tap.alice())) \g /dev/null
select throws_ok($$select tap.evil_exec('insert into public.price_reports (location_id, rate_kind, price_cents) values (''hijack:kind'', ''weekly'', 1)')$$,
                 '23514', null, 'the table''s rate-kind check: the real list of kinds');
select tap.evil_exec($$insert into public.price_reports (location_id, rate_kind, price_cents) values ('hijack:new', 'hourly', 1)$$) \g /dev/null
select cmp_ok((current_setting('pricesvc.receipts', true)::jsonb -> 0 ->> 'created_at')::timestamptz, '>', '2001-01-01'::timestamptz,
          'admit_price_report(): created_at is the real clock');
-- median_enqueue() with coordinates: the real threshold, counted positions and table.
select tap.evil_exec($$insert into public.price_reports (location_id, rate_kind, price_cents, lat, lng) values ('hijack:lone', 'hourly', 1, 1.5, 2.5)$$) \g /dev/null
select tap.evil_exec($$insert into public.price_reports (location_id, rate_kind, price_cents, lat, lng) values ('hijack:spot', 'hourly', 400, 48.8390, 2.3530)$$) \g /dev/null
reset role;
select is((select array_agg(location_id || ' ' || round(lat::numeric, 4) || ' ' || round(lng::numeric, 4) || ' ' || reporters)
           from private.community_places where location_id like 'hijack:%' and lat is not null),
          array['hijack:spot 48.8386 2.3522 3'],
          'median_enqueue(): one reporter makes no community place; the third at hijack:spot makes it, at the real median');
select is((select count(*)::int from evil.community_places), 0, 'median_enqueue(): the attacker''s table is untouched');
set local role authenticated;

-- Median functions: real threshold, real window, real aggregate, real table.
select results_eq($$select * from tap.evil('select median_cents, reporters from public.price_median(''hijack:garage'')')$$,
                  array['(200,3)'], 'price_median(): unchanged');
select is_empty($$select * from tap.evil('select * from public.price_medians(array[''hijack:quiet''])')$$,
                'price_medians(): the threshold is not lowered');
select throws_ok($$select tap.evil('select * from public.price_medians(array(select ''x'' || i from generate_series(1, 51) i))')$$,
                 '22023', null, 'price_medians(): the 50-location limit is not raised');
select throws_ok($$select tap.evil('select * from public.price_medians(array[''hijack:garage''], ''weekly'')')$$,
                 '22023', 'unknown rate_kind ''weekly''', 'price_medians(): the real rate-kind domain and list');
-- Published rates: real tables, real rates, real clock arithmetic, real limits.
select results_eq($$select * from tap.evil('select median_cents, published_cents from public.price_quotes(array[''hijack:garage''], ''hourly'', ''2026-03-03 10:00+00'', ''PT2H'')')$$,
                  array['(200,200)'], 'price_quotes(): unchanged');
select throws_ok($$select tap.evil('select * from public.price_quotes(array[''hijack:garage''], ''weekly'')')$$,
                 '22023', 'unknown rate_kind ''weekly''', 'price_quotes(): the real rate-kind domain and list');
select results_eq($$select * from tap.evil('select cost_cents from public.published_cost(array[''hijack:garage''], ''2026-03-03 10:00+00'', ''90 minutes'')')$$,
                  array['(150)'], 'published_cost(): unchanged');
select throws_ok($$select tap.evil('select * from public.published_cost(array[''hijack:garage''], now(), ''400 days'')')$$,
                 '22023', null, 'published_cost(): the longest stay is not raised');
-- Places: real table, real distances, real index order, real medians and prices, real bounds.
select results_eq($$select * from tap.evil('select location_id, distance_m, median_cents, published_cents from public.places_nearby(48.8566, 2.3522, 500, ''hourly'', ''2026-03-03 10:00+00'', ''PT2H'')')$$,
                  array['(hijack:garage,100,200,200)', '(hijack:quiet,200,,)'], 'places_nearby(): unchanged');
select results_eq($$select * from tap.evil('select location_id, source, distance_m, median_cents from public.places_nearby(48.8386, 2.3522, 100)')$$,
                  array['(hijack:spot,community,0,400)'], 'places_nearby(): the real community places');
select throws_ok($$select tap.evil('select * from public.places_nearby(48.8566, 2.3522, 5001)')$$,
                 '22023', 'radius_m must be between 1 and 5000', 'places_nearby(): the widest radius is not raised');
select throws_ok($$select tap.evil('select * from public.places_nearby(48.8566, 2.3522, max_results => 101)')$$,
                 '22023', 'max_results must be between 1 and 100', 'places_nearby(): the most results are not raised');
select results_eq($$select * from tap.evil('select location_id, distance_m, similarity from public.places_match(''Hijack garage'', 48.8566, 2.3522)')$$,
                  array['(hijack:garage,100,1)'], 'places_match(): real names, similarity, distances and radius');
select throws_ok($$select tap.evil('select * from public.places_match(''x'', 48.8566, 2.3522, 1001)')$$,
                 '22023', 'radius_m must be between 1 and 1000', 'places_match(): the widest radius is not raised');
reset role;
set local role price_analyst;
select results_eq($$select * from tap.evil('select location_id from public.price_median_overview() where location_id like ''hijack:%''')$$,
                  array['(hijack:garage)', '(hijack:spot)'], 'price_median_overview(): unchanged');
select results_eq($$select * from tap.evil('select median_cents, published_cents, difference_cents from public.price_vs_published(''2026-03-03 10:00+00'') where location_id like ''hijack:garage''')$$,
                  array['(200,100,100)'], 'price_vs_published(): unchanged');
reset role;

-- Auth functions, as authenticator, which is who calls them.
create temp table signed_up (user_id uuid, session_id uuid, created_at timestamptz, updated_at timestamptz);
grant all on signed_up to public;
set local role authenticator;
select tap.evil_exec($$insert into pg_temp.signed_up select * from auth.sign_up_anonymous('\x01', '{"device":"hijack"}', pg_catalog.sha256('hijack-token'), 30, 30)$$) \g /dev/null
select is((select count(*)::int from signed_up), 1, 'sign_up_anonymous(): works');
select tap.evil_exec($$select auth.sign_up_anonymous('\x02', '{}', pg_catalog.sha256('hijack-limit-1'), 1, 1)$$) \g /dev/null
select throws_ok($$select tap.evil_exec('select auth.sign_up_anonymous(''\x02'', ''{}'', pg_catalog.sha256(''hijack-limit-2''), 1, 1)')$$,
                 'PT429', 'too many anonymous sign-ups from this address',
                 'sign_up_anonymous(): the real per-IP bucket still refuses');
select results_eq($$select * from tap.evil('select status, user_metadata from auth.refresh_session(pg_catalog.sha256(''hijack-token''), pg_catalog.sha256(''hijack-token-2''), ''\x01'', 150, 300, 10)')$$,
                  array['(ok,"{""device"": ""hijack""}")'], 'refresh_session(): rotates the real token');
select set_config('request.jwt', tap.token_for(s.user_id, session => s.session_id), true) from signed_up s \g /dev/null
select results_eq(format('select * from tap.evil(%L)', format('select user_metadata from auth.get_user(%L, %L)', (select user_id from signed_up), (select session_id from signed_up))),
                  array['("{""device"": ""hijack""}")'], 'get_user(): reads the real users table');
select lives_ok(format('select tap.evil_exec(%L)', format('select auth.sign_out(%L, %L)', (select session_id from signed_up), 'local')),
                'sign_out(): works');
select is_empty($$select * from tap.evil('select name from pricesvc_meta.applied_migrations() where name like ''evil%''')$$,
                'applied_migrations(): reads the real bookkeeping table');
reset role;

-- Owner-only functions.
select tap.evil_exec($$select auth.add_signing_key(pg_catalog.convert_to('pgtap-next-signing-secret-0123456789abcdef', 'UTF8'))$$) \g /dev/null
select is((select count(*)::int from evil.signing_keys), 1, 'add_signing_key(): the attacker''s table is untouched');
select is((select array_agg(t order by t) from tap.evil($$select slot from auth.signing_key_list()$$) t), array['(current)', '(next)'],
          'signing_key_list(): reads the real keys');
select is((select count(*)::int from tap.evil($$select key_id from auth.signing_key_ring('x') where wrapped is null$$)), 2,
          'signing_key_ring(): reads the real keys');
select tap.evil_exec($$select auth.promote_signing_key()$$) \g /dev/null
select tap.evil_exec($$select auth.retire_signing_key()$$) \g /dev/null
select is((select count(*)::int from evil.signing_keys), 1, 'promote and retire: the attacker''s table is untouched');
select is((select slot from auth.signing_keys), 'current', 'promote and retire: the real table has its one key');
select tap.evil_exec($$select auth.create_publishable_key('evil', pg_catalog.sha256('k'), 'k')$$) \g /dev/null
select is((select count(*)::int from tap.evil($$select key_hash from auth.publishable_key_hashes() where key_hash = pg_catalog.sha256('k')$$)), 1,
          'publishable keys: made and read in the real table');
update auth.sessions set revoked_at = now() - interval '3 days' where id = (select session_id from signed_up);
update auth.users set created_at = now() - interval '3 days' where id = (select user_id from signed_up);
select results_eq($$select * from tap.evil('select sessions, users from auth.prune(interval ''2 days'')')$$, array['(1,1)'],
                  'prune(): deletes the real revoked session and its user');
select ok((select count(*) from private.median_queue where location_id like 'hijack:%') > 0, 'reports are queued');
select tap.evil_exec($$select private.median_fold_stale(interval '0')$$) \g /dev/null
select is((select count(*)::int from private.median_queue where location_id like 'hijack:%'), 0,
          'median_fold_stale(): folds the real queue');

-- forget_user(): the real community places follow the erasure.
select tap.evil_exec(format('select auth.forget_user(%L)', tap.carol())) \g /dev/null
select is((select count(*)::int from private.community_places where location_id = 'hijack:spot' and lat is not null), 0,
          'forget_user(): two reporters left, the real community place is gone');

select * from finish();
rollback;
