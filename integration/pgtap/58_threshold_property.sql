-- The threshold as a property: over random multisets and permutations of location_ids, every
-- rate kind (and none, for report_medians) and random `since`, every median function answers for a
-- multiset exactly what it answers for its distinct set, and no row it returns ever stands on fewer than
-- median_min_reporters() mature distinct reporters, counted here from the raw reports as the superuser.
-- The data mixes mature, young and pruned reporters (identities deleted after they reported, young and
-- old), folded and queued reports, several currencies, reports outside the window and at every age.
-- Seeded (setseed), a bounded number of iterations: the same cases every run, in a few seconds.
-- The threshold mode is the database's (private.threshold_counts()); 77 runs this file under 'attested'.
begin;
\ir _helpers.psql
select plan(17);
select setseed(0.19) \g /dev/null

-- Published rates for thr1:z .. thr4:z: 100 cents an hour, always (the loader `pricesvc import-rates`
-- calls, with a minimal valid feed).
create function tap.flat_zone(source text) returns void language sql as $$
    select private.cds_replace_source(source, jsonb_build_object(
        'time_zone', 'UTC', 'currency', 'USD', 'last_updated', 1767225600000,
        'author', 'pgTAP', 'license_url', 'https://example.org/licence',
        'zones', jsonb_build_array(jsonb_build_object(
            'curb_zone_id', md5(source || '/zone')::uuid, 'location_id', source || ':z', 'user_zone_id', 'z',
            'start_date', 0, 'end_date', null, 'published_date', 0, 'last_updated_date', 0,
            'curb_policy_ids', jsonb_build_array(md5(source || '/policy')::uuid))),
        'policies', jsonb_build_array(jsonb_build_object('curb_policy_id', md5(source || '/policy')::uuid,
                                                         'published_date', 0, 'priority', 1)),
        'rules', jsonb_build_array(jsonb_build_object('curb_policy_id', md5(source || '/policy')::uuid,
                                                      'rule_index', 0, 'activity', 'parking')),
        'time_spans', '[]'::jsonb,
        'rates', jsonb_build_array(jsonb_build_object('curb_policy_id', md5(source || '/policy')::uuid,
                                                      'rule_index', 0, 'rate_index', 0,
                                                      'rate', 100, 'rate_unit', 'hour'))));
$$;
select tap.flat_zone('thr' || g) from generate_series(1, 4) g \g /dev/null

-- 9 locations (thr9:z has no report at all), 14 reporters: 1-6 a month old, 7-9 made an hour ago,
-- 10-14 a month old. After they report, 9 (young) and 12-14 (old) are pruned.
create table tap.locations as select 'thr' || g || ':z' as location_id from generate_series(1, 9) g;
create table tap.reporters (n integer, reporter uuid);
insert into tap.reporters select g, md5('threshold-' || g)::uuid from generate_series(1, 14) g;
select tap.session_for(reporter) from tap.reporters \g /dev/null
update auth.users set created_at = clock_timestamp() - case when n between 7 and 9 then interval '1 hour' else interval '30 days' end
from tap.reporters r where r.reporter = auth.users.id;
-- Every reporter but 6, 11 and 14 signed up with App Attest: under the 'attested' threshold
-- mode (77_threshold_property_attested.sql runs this file so) only theirs count; under 'mature' it
-- changes nothing.
insert into auth.attested_keys (key_id_hash, user_id, app_id, environment, public_key, receipt)
select sha256(convert_to('threshold-key-' || n, 'UTF8')), reporter, 'TEAM123456.org.example.app', 'production',
       '\x04'::bytea || sha256(convert_to('x' || n, 'UTF8')) || sha256(convert_to('y' || n, 'UTF8')), '\x00'
from tap.reporters where n not in (6, 11, 14);

-- 400 reports, each reporter at most a few per location; then ages from now to 200 days (an UPDATE:
-- the store is rebuilt for them), then 60 more, queued or folded by their ids as inserts leave them.
create function tap.random_reports(how_many integer) returns void language sql as $$
    select tap.seed(r.reporter, 'thr' || (1 + floor(random() * 8))::int || ':z', 100 + floor(random() * 900)::int,
                    (private.rate_kinds())[1 + floor(random() * 4)::int],
                    (array['USD', 'USD', 'USD', 'EUR'])[1 + floor(random() * 4)::int])
    from (select g, 1 + floor(random() * 14)::int as n from generate_series(1, how_many) g) x
    join tap.reporters r on r.n = x.n;
$$;
-- The cap (10 an hour per reporter) would refuse most of these: the test backdates as it goes.
create function tap.backdate_all() returns void language sql as $$
    update public.price_reports set created_at = clock_timestamp() - random() * interval '200 days'
    where location_id like 'thr%' and created_at > clock_timestamp() - interval '1 minute';
$$;
do $$
begin
    for i in 1..40 loop
        perform tap.random_reports(10);
        perform tap.backdate_all();
    end loop;
end
$$;
select tap.random_reports(8) \g /dev/null
delete from auth.users where id in (select reporter from tap.reporters where n in (9, 12, 13, 14));

select is((select count(*)::int from public.price_reports where location_id like 'thr%'), 408, 'the reports are stored');
select ok((select count(*) from private.median_queue where location_id like 'thr%') between 1 and 407,
          'some reports are queued, the others folded');

-- Rows whose reporters is not the number of distinct mature reporters whose latest report (in the
-- window, after `since`'s UTC day) is in the row's currency, or is below the threshold. From the raw
-- reports; maturity is the report's reporter_matures_at, set when it was admitted.
create function tap.raw_reporters(location text, kind text, currency text, since timestamptz) returns integer
    language sql stable as $$
    with in_window as (
        select r.* from public.price_reports r
        where r.location_id = location and r.rate_kind = kind
          and r.created_at > greatest(timezone('UTC', date_trunc('day', timezone('UTC', since))),
                                      clock_timestamp() - private.report_window())
          and r.reporter_matures_at <= clock_timestamp()
    ),
    latest as (
        select distinct on (w.reporter_id) w.currency from in_window w
        order by w.reporter_id, w.created_at desc, w.id desc
    )
    select count(*)::integer from latest l where l.currency = raw_reporters.currency
$$;
create table tap.violations (fn text, detail text);
create function tap.check_threshold(fn text, rows_json jsonb, since timestamptz default null) returns void language sql as $$
    insert into tap.violations
    select fn, x::text from jsonb_array_elements(rows_json) x
    where (x ->> 'reporters') is not null
      and ((x ->> 'reporters')::int < private.median_min_reporters()
           or (x ->> 'reporters')::int <> tap.raw_reporters(x ->> 'location_id', x ->> 'rate_kind',
                                                             x ->> 'currency', since));
$$;
-- Rows as one comparable value: a function's answer for a multiset and for its set must be equal.
create function tap.answer(query text) returns jsonb language plpgsql as $$
declare
    result jsonb;
begin
    execute format('select coalesce(jsonb_agg(to_jsonb(t) order by to_jsonb(t)::text), ''[]'') from (%s) t', query) into result;
    return result;
end
$$;

create table tap.runs (fn text, nonempty boolean);
do $$
declare
    locations text[] := array(select location_id from tap.locations order by 1);
    kinds text[] := private.rate_kinds();
    multiset text[];
    distinct_set text[];
    shuffled text[];
    kind text;
    since timestamptz;
    answers jsonb[];
    q text;
begin
    for i in 1..60 loop
        multiset := array(select locations[1 + floor(random() * 9)::int] from generate_series(1, 1 + floor(random() * 20)::int));
        distinct_set := array(select distinct x from unnest(multiset) x);
        shuffled := array(select x from unnest(multiset) x order by random());
        kind := kinds[1 + floor(random() * 4)::int];
        since := case when random() < 0.4 then null else clock_timestamp() - random() * interval '200 days' end;

        foreach q in array case when i % 2 = 0 then array['select * from public.price_medians(%L, %L)',
                                                             'select * from public.price_quotes(%L, %L)']
                                else array['select * from public.price_medians(%L, %L)'] end loop
            answers := array[tap.answer(format(q, multiset, kind)), tap.answer(format(q, distinct_set, kind)),
                             tap.answer(format(q, shuffled, kind))];
            if answers[1] <> answers[2] or answers[1] <> answers[3] then
                insert into tap.violations values (q, format('%s / %s: %s <> %s', multiset, kind, answers[1], answers[2]));
            end if;
            perform tap.check_threshold(q, answers[1]);
            insert into tap.runs values (split_part(q, '(', 1), answers[1] <> '[]');
        end loop;

        -- report_medians, the one reader behind them all, with no rate kind (every kind) and a `since`.
        answers := array[tap.answer(format('select * from private.report_medians(%L, null, %L)', multiset, since)),
                         tap.answer(format('select * from private.report_medians(%L, null, %L)', distinct_set, since))];
        if answers[1] <> answers[2] then
            insert into tap.violations values ('report_medians', format('%s / %s: %s <> %s', multiset, since, answers[1], answers[2]));
        end if;
        perform tap.check_threshold('report_medians', answers[1], since);
        insert into tap.runs values ('report_medians', answers[1] <> '[]');

        -- price_median, one location at a time, is price_medians' row for it.
        if i % 3 = 0 and tap.answer(format('select m.* from unnest(%L::text[]) l, public.price_median(l, %L) m', distinct_set, kind))
           <> tap.answer(format('select * from public.price_medians(%L, %L)', distinct_set, kind)) then
            insert into tap.violations values ('price_median', format('%s / %s', distinct_set, kind));
        end if;

        -- The overview (every location and kind, narrowed by `since`) and price_vs_published.
        if i % 10 = 0 then
            answers := array[tap.answer(format('select * from public.price_median_overview(%L) where location_id like ''thr%%''', since))];
            perform tap.check_threshold('price_median_overview', answers[1], since);
            insert into tap.runs values ('price_median_overview', answers[1] <> '[]');
            answers := array[tap.answer($q$select v.*, 'hourly' as rate_kind from public.price_vs_published() v
                                           where v.location_id like 'thr%'$q$)];
            perform tap.check_threshold('price_vs_published', answers[1]);
            insert into tap.runs values ('price_vs_published', answers[1] <> '[]');
        end if;
    end loop;
end
$$;

select is((select count(*)::int from tap.runs where fn = 'select * from public.price_medians'), 60, 'price_medians: 60 multisets');
select is((select count(*)::int from tap.runs where fn = 'select * from public.price_quotes'), 30, 'price_quotes: 30 multisets');
select is((select count(*)::int from tap.runs where fn = 'report_medians'), 60, 'report_medians: 60 multisets and sinces');
select is((select count(*)::int from tap.runs where fn = 'price_median_overview'), 6, 'price_median_overview: 6 sinces');
select ok((select count(*) filter (where nonempty) from tap.runs where fn = 'select * from public.price_medians') >= 15,
          'price_medians answered with medians in many of them (the property is not vacuous)');
select ok((select count(*) filter (where nonempty) from tap.runs where fn = 'select * from public.price_quotes') >= 8,
          'price_quotes too');
select ok((select count(*) filter (where nonempty) from tap.runs where fn = 'report_medians') >= 15,
          'report_medians too');
select ok((select count(*) filter (where nonempty) from tap.runs where fn = 'price_median_overview') >= 3,
          'most overviews had medians');
select ok((select bool_and(nonempty) from tap.runs where fn = 'price_vs_published'), 'and every price_vs_published');
select ok(exists (select from public.price_reports r join tap.reporters t on t.reporter = r.reporter_id
                  where t.n in (12, 13, 14) and r.location_id like 'thr%'),
          'pruned old reporters'' reports are in the data');

select ok(case private.threshold_counts()
              when 'mature' then not exists (select from public.price_reports r where r.reporter_matures_at = 'infinity')
              else exists (select from public.price_reports r where r.location_id like 'thr%' and not r.reporter_attested
                                                            and r.reporter_matures_at = 'infinity') end,
          format('mode %s: unattested reporters'' reports are in the data, and never mature only under attested',
                 private.threshold_counts()));

select is_empty($$select fn, detail from tap.violations where fn like '%price_medians%'$$,
                'price_medians: a multiset answers what its set and a permutation answer, always over the threshold');
select is_empty($$select fn, detail from tap.violations where fn like '%price_quotes%'$$,
                'price_quotes: the same');
select is_empty($$select fn, detail from tap.violations where fn in ('report_medians', 'price_median')$$,
                'report_medians (every kind, any since) and price_median: the same');
select is_empty($$select fn, detail from tap.violations where fn in ('price_median_overview', 'price_vs_published')$$,
                'price_median_overview and price_vs_published: never below the threshold of mature reporters');

select * from finish();
rollback;
