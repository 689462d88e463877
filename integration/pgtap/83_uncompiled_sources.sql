-- A feed whose zones have policies of their own, more distinct sets than cds_compiled_max_schedules(),
-- is not compiled: compiling 20 000 such sets never finished, where the import alone takes
-- seconds. The decision comes before anything is written, its zones keep no schedule, and their quotes
-- take the general path and cost what the feed says.
begin;
\ir _helpers.psql
select plan(4);

-- n zones, zone i under policy i: 100 + i cents an hour, always.
create function tap.own_policy_feed(source text, n integer) returns jsonb language sql as $$
    select jsonb_build_object(
        'time_zone', 'UTC', 'currency', 'USD', 'last_updated', 1767225600000,
        'author', 'pgTAP', 'license_url', 'https://example.org/licence',
        'zones', (select jsonb_agg(jsonb_build_object(
                      'curb_zone_id', md5(source || '/zone/' || i)::uuid, 'location_id', source || ':' || i, 'user_zone_id', i::text,
                      'start_date', 0, 'end_date', null, 'published_date', 0, 'last_updated_date', 0,
                      'curb_policy_ids', jsonb_build_array(md5(source || '/policy/' || i)::uuid)))
                  from generate_series(1, n) i),
        'policies', (select jsonb_agg(jsonb_build_object('curb_policy_id', md5(source || '/policy/' || i)::uuid,
                                                         'published_date', 0, 'priority', 1))
                     from generate_series(1, n) i),
        'rules', (select jsonb_agg(jsonb_build_object('curb_policy_id', md5(source || '/policy/' || i)::uuid,
                                                      'rule_index', 0, 'activity', 'parking'))
                  from generate_series(1, n) i),
        'time_spans', '[]'::jsonb,
        'rates', (select jsonb_agg(jsonb_build_object('curb_policy_id', md5(source || '/policy/' || i)::uuid,
                                                      'rule_index', 0, 'rate_index', 0,
                                                      'rate', 100 + i, 'rate_unit', 'hour'))
                  from generate_series(1, n) i))
$$;

select private.cds_replace_source('tapown', tap.own_policy_feed('tapown', private.cds_compiled_max_schedules() + 1)) \g /dev/null
select is((select count(*)::int from cds.schedules where source = 'tapown'), 0, 'too many policy sets: no schedule is made');
select is((select count(*)::int from cds.zones where source = 'tapown' and schedule_id is not null), 0,
          'and no zone has one');
select results_eq($$select location_id, cost_cents from public.published_cost(array['tapown:1', 'tapown:1001'],
                                                                           '2026-03-02 10:00+00', interval '2 hours')
                    order by 1$$,
                  $$values ('tapown:1', 202::bigint), ('tapown:1001', 2202::bigint)$$,
                  'their quotes take the general path and cost what the feed says');

select private.cds_replace_source('tapfew', tap.own_policy_feed('tapfew', 3)) \g /dev/null
select is((select count(*)::int from cds.schedules where source = 'tapfew' and compiled), 3,
          'a feed within the limit is compiled');

select * from finish();
rollback;
