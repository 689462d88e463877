-- The shape other engineers code against: schemas, roles, tables, functions and their settings.
begin;
\ir _helpers.psql
select plan(56);

select has_schema(s) from unnest(array['auth', 'private', 'extensions', 'pricesvc_meta']) s;
select is((select extnamespace::regnamespace::text from pg_extension where extname = 'pgcrypto'), 'extensions',
          'pgcrypto lives in the extensions schema');

select is((select rolcanlogin and not rolinherit from pg_roles where rolname = 'authenticator'), true,
          'authenticator is LOGIN NOINHERIT');
select is((select array_agg(rolname order by rolname) from pg_roles
           where rolname in ('anon', 'authenticated', 'price_analyst') and not rolcanlogin),
          array['anon', 'authenticated', 'price_analyst']::name[], 'anon, authenticated and price_analyst cannot log in');
select ok(pg_has_role('authenticator', 'anon', 'member') and pg_has_role('authenticator', 'authenticated', 'member'),
          'authenticator may switch to anon and authenticated');
select ok(not pg_has_role('authenticator', 'price_analyst', 'member'), 'authenticator cannot become an analyst');
select ok(not (select rolsuper or rolbypassrls or rolcreaterole or rolcreatedb from pg_roles where rolname = 'authenticator'),
          'authenticator has no special attributes');

select columns_are('public', 'price_reports',
    array['id', 'reporter_id', 'location_id', 'rate_kind', 'price_cents', 'currency', 'client_report_id', 'created_at',
          'reporter_matures_at', 'reporter_attested', 'lat', 'lng']);
select col_default_is('public', 'price_reports', 'reporter_id', 'auth.unverified_uid()',
                      'reporter_id defaults to auth.unverified_uid() (a hint the RLS policy verifies)');
select col_default_is('public', 'price_reports', 'currency', 'USD'::text, 'currency defaults to USD');
select col_not_null('public', 'price_reports', c, c || ' is NOT NULL')
  from unnest(array['reporter_id', 'location_id', 'rate_kind', 'price_cents', 'currency', 'created_at',
                    'reporter_matures_at', 'reporter_attested']) c;
select is((select relrowsecurity and relforcerowsecurity from pg_class where oid = 'public.price_reports'::regclass), true,
          'RLS is enabled and forced on price_reports');
select policies_are('public', 'price_reports', array['reporters_insert_own_reports'], 'one policy only: insert your own');
select policy_cmd_is('public', 'price_reports', 'reporters_insert_own_reports', 'insert', 'the policy is for INSERT');
select policy_roles_are('public', 'price_reports', 'reporters_insert_own_reports', array['authenticated'], 'the policy applies to authenticated');
select trigger_is('public', 'price_reports', 'price_reports_admit', 'private', 'admit_price_report');
select indexes_are('public', 'price_reports', array['price_reports_pkey', 'price_reports_client_report_id_key',
                   'price_reports_reporter_recent_idx', 'price_reports_location_time_idx',
                   'price_reports_created_at_idx', 'price_reports_positions_idx']);

select tables_are('auth', array['signing_keys', 'users', 'sessions', 'refresh_tokens', 'rate_limit_buckets',
                          'spent_signup_challenges', 'publishable_keys', 'attested_keys',
                          'android_attested_keys']);
-- Published rates (migration 0010): one table per CDS object, all owned by pricesvc_owner.
select tables_are('cds', array['sources', 'zones', 'zone_policies', 'policies', 'rules', 'time_spans', 'rates', 'imports',
                          'schedules', 'schedule_intervals', 'time_zone_offsets']);
select is((select count(*)::int from pg_class c where c.relnamespace = 'cds'::regnamespace and c.relkind in ('r', 'S', 'i')
             and c.relowner <> 'pricesvc_owner'::regrole), 0, 'pricesvc_owner owns everything in cds');
select is((select count(*)::int from pg_proc p where p.pronamespace::regnamespace::text in ('public', 'private')
             and (p.proname like 'cds\_%' or p.proname in ('published_cost', 'price_quotes', 'price_vs_published'))
             and p.proowner <> 'pricesvc_owner'::regrole), 0, 'pricesvc_owner owns the published-rate functions');

-- Settings live in one place.
select results_eq(
    $$select private.median_min_reporters(), private.report_window(), private.reporter_cap(), private.cap_window(),
             private.max_median_locations(), private.jwt_leeway()$$,
    $$values (3, interval '180 days', 10, interval '1 hour', 50, interval '30 seconds')$$,
    'settings: 3 reporters, 180 days, 10 per hour, 50 locations, 30 s leeway');

select results_eq(
    $$select private.reporter_maturity(), private.rate_kinds(), private.reporter_lock_namespace()$$,
    $$values (interval '24 hours', '{hourly,daily,flat,monthly}'::text[], 1886546275)$$,
    'settings: 24 h maturity, the four rate kinds, lock namespace "pric"');

-- Pieces written once and used everywhere.
select is((select pg_get_constraintdef(c.oid) from pg_constraint c
           where c.conname = 'price_reports_rate_kind_known' and c.conrelid = 'public.price_reports'::regclass),
          'CHECK ((rate_kind = ANY (private.rate_kinds())))', 'the table''s rate-kind check reads private.rate_kinds()');
select is((select pg_get_constraintdef(c.oid) from pg_constraint c where c.contypid = 'private.rate_kind'::regtype),
          'CHECK ((VALUE = ANY (private.rate_kinds())))', 'the rate_kind domain reads the same list');
select is((select array_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) order by a.attnum)
           from pg_attribute a where a.attrelid = 'private.median_row'::regclass and a.attnum > 0 and not a.attisdropped),
          array['location_id text', 'rate_kind text', 'currency text', 'median_cents integer', 'reporters integer',
                'reports integer', 'last_reported_at timestamp with time zone'],
          'a median row has the seven columns of the contract');
select is((select array_agg(p.proname::text order by p.proname) from pg_proc p
           where p.prorettype = 'private.median_row'::regtype and p.proretset
             and p.pronamespace <> 'tap'::regnamespace),
          array['price_median', 'price_median_overview', 'price_medians', 'report_medians', 'report_medians_exact', 'report_medians_scanned'],
          'every median function returns median rows');
select is((select array_agg(t.oid::regtype::text || ' ' || pg_get_userbyid(t.typowner) order by t.oid::regtype::text)
           from pg_type t left join pg_class c on c.oid = t.typrelid
           where t.typnamespace = 'private'::regnamespace
             and (t.typtype = 'd' or (t.typtype = 'c' and c.relkind = 'c'))),
          array['private.median_row pricesvc_owner', 'private.nearby_place pricesvc_owner', 'private.place_match pricesvc_owner',
                'private.rate_kind pricesvc_owner'],
          'the shared types belong to pricesvc_owner');

-- Every SECURITY DEFINER function pins search_path = '' (and there is none we do not know about).
select is((select array_agg(p.oid::regprocedure::text order by p.oid::regprocedure::text) from pg_proc p
           where p.prosecdef and p.pronamespace::regnamespace::text in ('public', 'auth', 'private', 'pricesvc_meta')),
          array['auth.add_signing_key(bytea,boolean)', 'auth.attestation_of(uuid)',
                'auth.create_publishable_key(text,bytea,text)', 'auth.forget_user(uuid)',
                'auth.get_user(uuid,uuid)', 'auth.install_first_signing_key(bytea)', 'auth.jwt()',
                'auth.promote_signing_key()', 'auth.prune(interval)', 'auth.publishable_key_hashes()',
                'auth.publishable_key_list()',
                'auth.refresh_session(bytea,bytea,bytea,integer,integer,integer)',
                'auth.retire_signing_key(text)', 'auth.revoke_publishable_key(uuid)',
                'auth.sign_out(uuid,text)',
                'auth.sign_up_android_attested(bytea,jsonb,bytea,integer,integer,bytea,text,text,text,boolean)',
                'auth.sign_up_anonymous(bytea,jsonb,bytea,integer,integer)',
                'auth.sign_up_attested(bytea,jsonb,bytea,integer,integer,bytea,text,text,bytea,bytea)',
                'auth.signing_key_list()', 'auth.signing_key_ring(text)',
                'auth.spend_signup_challenge(bytea,timestamp with time zone)',
                'places_match(text,double precision,double precision,integer)',
                'places_nearby(double precision,double precision,integer,text,timestamp with time zone,interval,integer)',
                'price_median(text,text)', 'price_median_overview(timestamp with time zone)',
                'price_medians(text[],text)', 'price_quotes(text[],text,timestamp with time zone,interval)',
                'price_vs_published(timestamp with time zone)', 'pricesvc_meta.applied_migrations()',
                'pricesvc_meta.maintenance_runs()',
                'private.admit_price_report()', 'private.median_enqueue()', 'private.median_fold_stale(interval,integer)',
                'private.median_rebuild_changed()', 'private.prune_reports(integer)', 'private.reports_follow_identity_age()',
                'published_cost(text[],timestamp with time zone,interval)'],
          'the SECURITY DEFINER functions are exactly these');
select is((select count(*)::int from pg_proc p
           where p.prosecdef and p.pronamespace::regnamespace::text in ('public', 'auth', 'private', 'pricesvc_meta')
             and not coalesce(p.proconfig @> array['search_path=""'], false)),
          0, 'every SECURITY DEFINER function sets search_path = ''''');
select is((select count(*)::int from pg_proc p
           where p.pronamespace::regnamespace::text in ('auth', 'private', 'pricesvc_meta', 'public', 'cds')
             and p.prokind = 'f' and has_function_privilege('public', p.oid, 'execute')),
          0, 'no function of ours is executable by PUBLIC');

-- Who may execute what.
select function_privs_are('public', 'price_medians', array['text[]', 'text'], 'authenticated', array['EXECUTE']);
select function_privs_are('public', 'price_median', array['text', 'text'], 'price_analyst', array['EXECUTE']);
select function_privs_are('public', 'price_median_overview', array['timestamptz'], 'price_analyst', array['EXECUTE']);
select function_privs_are('public', 'price_median_overview', array['timestamptz'], 'authenticated', array[]::text[]);
select function_privs_are('public', 'price_medians', array['text[]', 'text'], 'anon', array[]::text[]);
select function_privs_are('auth', 'sign_up_anonymous', array['bytea', 'jsonb', 'bytea', 'integer', 'integer'],
                          'authenticator', array['EXECUTE']);
select function_privs_are('auth', 'sign_up_anonymous', array['bytea', 'jsonb', 'bytea', 'integer', 'integer'],
                          'authenticated', array[]::text[]);
select function_privs_are('pricesvc_meta', 'applied_migrations', array[]::text[], 'authenticator', array['EXECUTE']);
select function_privs_are('public', 'price_quotes', array['text[]', 'text', 'timestamptz', 'interval'], 'authenticated', array['EXECUTE']);
select function_privs_are('public', 'price_quotes', array['text[]', 'text', 'timestamptz', 'interval'], 'price_analyst', array['EXECUTE']);
select function_privs_are('public', 'price_quotes', array['text[]', 'text', 'timestamptz', 'interval'], 'anon', array[]::text[]);
select function_privs_are('public', 'price_vs_published', array['timestamptz'], 'price_analyst', array['EXECUTE']);
select function_privs_are('public', 'price_vs_published', array['timestamptz'], 'authenticated', array[]::text[]);
select table_privs_are('cds', 'rates', 'price_analyst', array['SELECT'], 'analysts read published rates');
select table_privs_are('cds', 'rates', 'authenticated', array[]::text[], 'reporters do not read the tables directly');

select * from finish();
rollback;
