-- Maturity cannot be pruned away. Three fresh identities reported, signed out and were pruned (`pricesvc
-- prune --older-than 1s`); the median code once read the missing auth.users rows as old identities and
-- showed their median with reporters: 3. Now each report carries when its reporter matures, fixed on
-- admission, and prune keeps every identity younger than maturity plus the fold margin.
begin;
\ir _helpers.psql
select plan(22);

create table tap.sybils as select g as n, md5('sybil-' || g)::uuid as id from generate_series(1, 3) g;
create function tap.sybil(n integer) returns uuid language sql immutable return md5('sybil-' || n)::uuid;

-- Three identities made just now, each with a live session, as sign-up leaves them.
select tap.session_for(id) from tap.sybils \g /dev/null
update auth.users set created_at = clock_timestamp() where id in (select id from tap.sybils);

-- Each reports through the service's path: role authenticated, its own token.
set local role authenticated;
select tap.use_token(tap.token_for(tap.sybil(1))) \g /dev/null
insert into public.price_reports (location_id, rate_kind, price_cents) values ('mature:sybils', 'hourly', 1000);
select tap.use_token(tap.token_for(tap.sybil(2))) \g /dev/null
insert into public.price_reports (location_id, rate_kind, price_cents) values ('mature:sybils', 'hourly', 1100);
select tap.use_token(tap.token_for(tap.sybil(3))) \g /dev/null
insert into public.price_reports (location_id, rate_kind, price_cents) values ('mature:sybils', 'hourly', 1200);
select throws_ok($$insert into public.price_reports (location_id, rate_kind, price_cents, reporter_matures_at)
                   values ('mature:sybils', 'hourly', 1300, '-infinity')$$,
                 '42501', null, 'a client cannot name when it matures');
reset role;

select ok((select bool_and(r.reporter_matures_at = u.created_at + interval '24 hours')
           from public.price_reports r join auth.users u on u.id = r.reporter_id where r.location_id = 'mature:sybils'),
          'admission records when each reporter matures: its identity''s creation plus 24 hours');
select is_empty($$select * from public.price_medians(array['mature:sybils'])$$, 'three fresh identities: no median');

-- They sign out, and their identities are deleted, as prune with --older-than 1s deleted them.
update auth.sessions set revoked_at = clock_timestamp() where user_id in (select id from tap.sybils);
delete from auth.users where id in (select id from tap.sybils);
select is_empty($$select * from public.price_medians(array['mature:sybils'])$$,
                'pruned: still no median (a missing identity is not an old one)');
select is_empty($$select * from public.price_median('mature:sybils')$$, 'price_median: none');
select is_empty($$select * from public.price_median_overview() where location_id = 'mature:sybils'$$, 'the overview: none');
select is_empty($$select * from public.price_median_overview(now() - interval '1 day') where location_id = 'mature:sybils'$$,
                'the overview narrowed by since (a scan of the reports): none');
select is_empty($$select * from public.price_quotes(array['mature:sybils']) where median_cents is not null$$,
                'price_quotes: none');
select private.median_fold('mature:sybils', 'hourly') \g /dev/null
select is_empty($$select * from public.price_medians(array['mature:sybils'])$$, 'after a fold: none');
select private.median_rebuild(array['mature:sybils']) \g /dev/null
select is_empty($$select * from public.price_medians(array['mature:sybils'])$$, 'after a rebuild: none');
select is((select count(*)::int from private.median_queue where location_id = 'mature:sybils'), 3,
          'their reports wait in the queue until they mature');

-- A day on (the report's own record moved back, as the clock would move forward), they count, exactly
-- as they would have without the prune.
update public.price_reports set reporter_matures_at = reporter_matures_at - interval '1 day 1 minute'
where location_id = 'mature:sybils';
select results_eq($$select median_cents, reporters from public.price_medians(array['mature:sybils'])$$,
                  $$values (1100, 3)$$, 'once matured by their own reports'' record, they count');

-- Pruned old reporters keep counting: their reports matured long ago.
select tap.seed(r, 'mature:old', c) from (values (tap.alice(), 300), (tap.bob(), 400), (tap.carol(), 500)) v(r, c) \g /dev/null
delete from auth.users where id in (tap.alice(), tap.bob(), tap.carol());
select results_eq($$select median_cents, reporters from public.price_medians(array['mature:old'])$$,
                  $$values (400, 3)$$, 'old reporters, pruned: their median stays');

-- A reporter the database does not know (only the owner or a superuser can name one) is taken as made
-- at its report.
select tap.seed(tap.dave(), 'mature:unknown', 100) \g /dev/null
delete from auth.users where id = tap.dave();
insert into public.price_reports (reporter_id, location_id, rate_kind, price_cents)
values (tap.dave(), 'mature:unknown', 'hourly', 200);
select ok((select reporter_matures_at > clock_timestamp() + interval '23 hours' from public.price_reports
           where location_id = 'mature:unknown' and price_cents = 200),
          'a reporter with no identity matures a day after its report, never at once');

-- Ageing an identity as the superuser (README, tests) re-dates its reports, and the store follows.
select tap.session_for(id) from (values (md5('ageing-1')::uuid), (md5('ageing-2')::uuid), (md5('ageing-3')::uuid)) v(id) \g /dev/null
update auth.users set created_at = clock_timestamp() where id in (md5('ageing-1')::uuid, md5('ageing-2')::uuid, md5('ageing-3')::uuid);
select tap.seed(md5('ageing-' || g)::uuid, 'mature:aged', 100 * g) from generate_series(1, 3) g \g /dev/null
select is_empty($$select * from public.price_medians(array['mature:aged'])$$, 'made just now: no median');
update auth.users set created_at = created_at - interval '2 days'
where id in (md5('ageing-1')::uuid, md5('ageing-2')::uuid, md5('ageing-3')::uuid);
select results_eq($$select median_cents, reporters from public.price_medians(array['mature:aged'])$$,
                  $$values (200, 3)$$, 'aged two days by the superuser: their reports count');

-- Prune: never an identity younger than maturity plus the fold margin.
select throws_ok($$select * from auth.prune(interval '1 second')$$, '22023',
                 'older_than must be at least 24:05:00 (reporter maturity 24:00:00 plus the median fold margin 00:05:00), got 00:00:01',
                 'prune --older-than 1s is refused, naming the minimum');
select throws_ok($$select * from auth.prune(interval '0')$$, '22023', null, 'older_than 0 is refused');
select throws_ok($$select * from auth.prune(interval '24 hours 4 minutes')$$, '22023', null,
                 'older_than just below maturity plus margin is refused');
select throws_ok($$select * from auth.prune(null)$$, '22023', null, 'a null older_than is refused');

create table tap.idle as select g as n, md5('idle-' || g)::uuid as id from generate_series(1, 2) g;
insert into auth.users (id, created_at) values ((select id from tap.idle where n = 1), clock_timestamp() - interval '24 hours'),
                                               ((select id from tap.idle where n = 2), clock_timestamp() - interval '24 hours 6 minutes');
select lives_ok($$select * from auth.prune(interval '24 hours 5 minutes')$$, 'older_than of maturity plus margin is taken');
select is((select array_agg(n order by n) from tap.idle i where exists (select from auth.users u where u.id = i.id)), array[1],
          'it removes the identity without a session older than that, and keeps the one a day old');

select * from finish();
rollback;
