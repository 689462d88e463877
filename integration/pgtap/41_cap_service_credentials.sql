-- The cap and the reporter hold against whoever holds the service's own credentials: the cap is not
-- beaten within one statement, nor a reporter's cap status read. The session logs in as `authenticator`
-- (SET SESSION AUTHORIZATION, as the service does) and acts as `authenticated`; between two rows of one INSERT its source query rewrites
-- every setting that login can write: request.jwt, the pricesvc.* hints and receipts, and role. Every
-- such statement is refused whole, whatever its form (VALUES, INSERT ... SELECT, CTEs), and the error
-- never tells whether a reporter someone named is at the cap.
begin;
\ir _helpers.psql
select plan(14);

-- alice has 9 reports in the hour: one more is allowed, a second never. carol is at the cap, dave has none.
select tap.seed(tap.alice(), 'cap41:seed', 100 + i) from generate_series(1, 9) i \g /dev/null
select tap.seed(tap.carol(), 'cap41:seed', 100 + i) from generate_series(1, 10) i \g /dev/null
select tap.session_for(tap.dave()) \g /dev/null
create function tap.stored(reporter uuid) returns bigint language sql security definer set search_path = '' as $$
    select count(*) from public.price_reports where reporter_id = reporter
$$;

-- The outcome of a statement: 'stored' or the error's SQLSTATE, message, detail and hint. Starts from
-- `token` and the hint naming `named`, as the service's submission identity statement leaves them.
create function tap.outcome(statement text, token text, named uuid) returns text language plpgsql as $$
declare
    state text;
    message text;
    detail text;
    hint text;
begin
    perform set_config('request.jwt', token, true), set_config('pricesvc.hint_jwt', token, true),
            set_config('pricesvc.hint_uid', named::text, true), set_config('role', 'authenticated', true);
    execute statement;
    return 'stored';
exception when others then
    get stacked diagnostics state = returned_sqlstate, message = message_text, detail = pg_exception_detail,
                            hint = pg_exception_hint;
    return concat_ws(' | ', state, message, nullif(detail, ''), nullif(hint, ''));
end
$$;

-- What a row's source query can do to the settings before the next row; %1$s is the reporter it names.
create table tap.changes (name text, change text);

select tap.token_for(tap.alice()) as alice_token \gset
select tap.token_for(tap.bob()) as bob_token \gset
select tap.token_for(tap.alice(), interval '-1 hour') as alice_expired \gset
insert into tap.changes values
    ('no token, the hint names alice (the attack as found)',
     $$set_config('request.jwt', '', true) || set_config('pricesvc.hint_jwt', '', true) || set_config('pricesvc.hint_uid', '%1$s', true)$$),
    ('a malformed token, the hint names alice',
     $$set_config('request.jwt', 'x', true) || set_config('pricesvc.hint_jwt', 'x', true) || set_config('pricesvc.hint_uid', '%1$s', true)$$),
    ('bob''s valid token, the hint names alice',
     format($$set_config('request.jwt', %1$L, true) || set_config('pricesvc.hint_jwt', %1$L, true) || set_config('pricesvc.hint_uid', '%%1$s', true)$$, :'bob_token')),
    ('alice''s expired token',
     format($$set_config('request.jwt', %1$L, true) || set_config('pricesvc.hint_jwt', %1$L, true) || set_config('pricesvc.hint_uid', '%%1$s', true)$$, :'alice_expired')),
    ('role none, no token',
     $$set_config('role', 'none', true) || set_config('request.jwt', '', true) || set_config('pricesvc.hint_jwt', '', true) || set_config('pricesvc.hint_uid', '%1$s', true)$$),
    ('role anon, no token',
     $$set_config('role', 'anon', true) || set_config('request.jwt', '', true) || set_config('pricesvc.hint_jwt', '', true) || set_config('pricesvc.hint_uid', '%1$s', true)$$),
    ('request.jwt.claims and receipts, no token',
     $$set_config('request.jwt.claims', '{"sub":"%1$s","role":"authenticated"}', true) || set_config('pricesvc.receipts', '[]', true) || set_config('request.jwt', '', true) || set_config('pricesvc.hint_jwt', '', true) || set_config('pricesvc.hint_uid', '%1$s', true)$$);

-- Statement forms: %1$s is the change (evaluated for every row after the first), %2$s a location prefix.
create table tap.forms (name text, statement text);
insert into tap.forms values
    ('insert ... select, cross join lateral',
     $$insert into public.price_reports (location_id, rate_kind, price_cents)
       select '%2$s', 'hourly', 400 + g.i from generate_series(1, 20) g(i)
       cross join lateral (select case when g.i = 1 then null else %1$s end) x$$),
    ('multi-row values',
     $$insert into public.price_reports (location_id, rate_kind, price_cents)
       values ('%2$s', 'hourly', 401), ('%2$s', 'hourly', 402 + 0 * length(%1$s)), ('%2$s', 'hourly', 403 + 0 * length(%1$s)),
              ('%2$s', 'hourly', 404 + 0 * length(%1$s))$$),
    ('a CTE feeding the insert',
     $$with source as (select g.i, case when g.i = 1 then null else %1$s end as x from generate_series(1, 20) g(i))
       insert into public.price_reports (location_id, rate_kind, price_cents) select '%2$s', 'hourly', 400 + i from source$$),
    ('a data-modifying CTE, then a second insert',
     $$with first as (insert into public.price_reports (location_id, rate_kind, price_cents) values ('%2$s', 'hourly', 401) returning id),
            changed as (select %1$s as x from first)
       insert into public.price_reports (location_id, rate_kind, price_cents)
       select '%2$s', 'hourly', 400 + g.i from changed cross join generate_series(2, 20) g(i)$$);

create table tap.results (victim uuid, name text, outcome text);
grant insert, select on tap.results to public;
grant select on tap.changes, tap.forms to public;

-- As the service's login, acting as authenticated.
set local session authorization authenticator;
set local role authenticated;


-- The cap beaten in one statement: starting from alice's own valid token (the first row's), as a genuine submission
-- does, every change in every form is refused whole; alice keeps her 9 reports.
insert into tap.results
select tap.alice(), c.name || ', ' || f.name,
       tap.outcome(format(f.statement, format(c.change, tap.alice()), 'cap41:attack'), :'alice_token', tap.alice())
from tap.changes c cross join tap.forms f;
-- Cap status through a role change: no token, the hint names a victim, and the statement changes role
-- (the form the attack was found in first); carol at the cap and dave with no report get the same answer.
insert into tap.results
select v.victim, 'role none in the FROM clause',
       tap.outcome($$insert into public.price_reports (location_id, rate_kind, price_cents)
                     select 'cap41:leak', 'hourly', 1 from (select set_config('role', 'none', true)) s$$, '', v.victim)
from (values (tap.carol()), (tap.dave())) v(victim);
insert into tap.results
select v.victim, c.name || ', ' || f.name,
       tap.outcome(format(f.statement, format(c.change, v.victim), 'cap41:leak'), t.token, v.victim)
from (values (tap.carol()), (tap.dave())) v(victim), tap.changes c, tap.forms f,
     (values (''), (:'bob_token')) t(token);

-- The service's own path still works: alice's 10th report is stored, her 11th is PT429 with its wait.
select is(tap.outcome($$insert into public.price_reports (location_id, rate_kind, price_cents) values ('cap41:own', 'hourly', 1)$$,
                      :'alice_token', tap.alice()), 'stored', 'alice''s 10th report, sent as the service sends it, is stored');
select matches(tap.outcome($$insert into public.price_reports (location_id, rate_kind, price_cents) values ('cap41:own', 'hourly', 2)$$,
                           :'alice_token', tap.alice()),
               '^PT429 \| reporter cap reached: at most 10 price reports in any 60 minutes \| .* \| Retry after \d+ seconds$',
               'her 11th is PT429 with its wait');
reset role;
reset session authorization;

select is((select count(*)::int from tap.results where victim = tap.alice()), 28,
          'alice: 7 changes between rows x 4 statement forms were tried');
select is((select array_agg(name order by name) from tap.results where victim = tap.alice() and outcome = 'stored'), null,
          'none of them stored anything: the cap refuses every row past it, whoever the trigger takes the caller to be');
select is((select array_agg(distinct outcome) from tap.results where victim = tap.alice() and outcome not like '42501 | %'), null,
          'each is refused with 42501 (the policy''s, or a permission the changed role lacks), never PT429');
select is(tap.stored(tap.alice()), 10::bigint, 'alice has exactly 10 reports in the hour');

select is((select count(*)::int from tap.results where victim = tap.carol()), 57,
          'carol and dave: the role change in the FROM clause and 7 changes x 4 forms x 2 starting tokens each were tried');
select is((select array_agg(c.name order by c.name) from tap.results c join tap.results d
           on d.victim = tap.dave() and d.name = c.name and d.outcome is distinct from c.outcome
           where c.victim = tap.carol()), null,
          'each answers carol (at the cap) exactly as it answers dave (no reports): nothing tells her cap status');
select is((select outcome from tap.results where victim = tap.carol() and name = 'role none in the FROM clause'),
          '42501 | new row violates row-level security policy for table "price_reports"',
          'a role change mid-statement gets the policy''s 42501, not PT429');
select is((select count(*)::int from tap.results where outcome = 'stored'), 0, 'no attempt stored a row');
select is((select count(*)::int from public.price_reports where location_id like 'cap41:leak%' or location_id like 'cap41:attack%'), 0,
          'no forged row exists');

-- Fixtures are told apart by the session's login, never a setting: a superuser naming carol is answered
-- (PT429), acting as authenticated or not; the service's login is not, whatever role it claims.
select throws_ok($$insert into public.price_reports (reporter_id, location_id, rate_kind, price_cents)
                  values ('ca201000-0000-4000-8000-000000000003', 'cap41:fixture', 'hourly', 1)$$,
                 'PT429', null, 'a superuser session naming a reporter at the cap gets PT429');
set local role authenticated;
select set_config('request.jwt', '', true), set_config('pricesvc.hint_jwt', '', true),
       set_config('pricesvc.hint_uid', tap.carol()::text, true) \g /dev/null
select throws_ok($$insert into public.price_reports (location_id, rate_kind, price_cents) values ('cap41:fixture', 'hourly', 1)$$,
                 'PT429', null, 'so does a superuser session acting as authenticated without a token');
reset role;
set local session authorization authenticator;
select set_config('request.jwt', '', true), set_config('pricesvc.hint_jwt', '', true),
       set_config('pricesvc.hint_uid', tap.carol()::text, true) \g /dev/null
set local role authenticated;
select throws_ok($$insert into public.price_reports (location_id, rate_kind, price_cents) values ('cap41:fixture', 'hourly', 1)$$,
                 '42501', null, 'the service''s login naming carol without a token gets 42501');
reset role;
reset session authorization;

select * from finish();
rollback;
