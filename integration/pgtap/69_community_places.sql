-- Community places: a report may carry lat and lng (both or neither, in
-- range). For a location id no import places, its position is the per-coordinate median of its counted
-- reporters' latest coordinates, and it is searchable only once median_min_reporters() (3) of them gave
-- coordinates: two reporters never make a place visible, nor move one. An imported place ignores them. A
-- report's coordinates are readable by no client role. forget-user takes them out; a rebuild from scratch
-- gives what the incremental hooks gave; searches keep the KNN plan.
begin;
\ir _helpers.psql
select plan(78);

-- Reporters a month old (counted at once) and a fresh one (counted in a day).
create function tap.reporter(n integer) returns uuid language sql immutable
    return ('c0000000-0000-4000-8000-' || lpad(n::text, 12, '0'))::uuid;
create function tap.fresh() returns uuid language sql immutable return 'f0000000-0000-4000-8000-000000000001'::uuid;
insert into auth.users (id, created_at) select tap.reporter(n), now() - interval '30 days' from generate_series(1, 10) n;
-- The plan of a statement, as text.
create function tap.plan_of(statement text) returns text language plpgsql as $$
declare
    line text;
    plan text := '';
begin
    for line in execute 'explain (costs off) ' || statement loop
        plan := plan || line || E'\n';
    end loop;
    return plan;
end
$$;
insert into auth.users (id, created_at) values (tap.fresh(), now());
-- A report with coordinates, as the owner (the trigger still sets time and maturity).
create function tap.report_at(reporter uuid, location text, lat double precision, lng double precision,
                              cents integer default 300, kind text default 'hourly') returns bigint
    language sql volatile as $$
        insert into public.price_reports (reporter_id, location_id, rate_kind, price_cents, lat, lng)
        values (reporter, location, kind, cents, lat, lng) returning id
    $$;
-- The community place of a location as the table holds it (a row without lat and lng is one below the
-- threshold, kept for its valid_until).
create function tap.community(location text) returns text language sql stable
    return (select format('%s %s %s', round(c.lat::numeric, 6), round(c.lng::numeric, 6), c.reporters)
            from private.community_places c where c.location_id = location and c.lat is not null);
-- The ids a search at instant `at` finds within radius metres, with their position: the reader, not the
-- table (places_nearest computes what the table does not hold for `at`).
create function tap.searched(lat double precision, lng double precision, at timestamptz, radius integer default 500)
    returns text[] language sql stable
    return (select array_agg(format('%s %s %s', n.location_id, round(n.lat::numeric, 6), round(n.lng::numeric, 6))
                             order by n.distance, n.location_id)
            from private.places_nearest(extensions.st_setsrid(extensions.st_makepoint(lng, lat), 4326)::extensions.geography,
                                        radius, 20, at) n);
-- The ids places_nearby finds around a point, with their source.
create function tap.nearby(lat double precision, lng double precision, radius integer default 500) returns text[]
    language sql stable
    return (select array_agg(n.location_id || '@' || n.source order by n.distance_m, n.location_id)
            from public.places_nearby(lat, lng, radius_m => radius) n);

------------------------------------------------------------------------------------------------------
-- The columns and their checks
------------------------------------------------------------------------------------------------------

select has_column('public', 'price_reports', 'lat', 'reports have lat');
select has_column('public', 'price_reports', 'lng', 'reports have lng');
select col_is_null('public', 'price_reports', 'lat', 'lat is nullable (a report need not say where)');
select is((select array_agg(conname::text order by conname) from pg_constraint
           where conrelid = 'public.price_reports'::regclass and conname ~ '^price_reports_(coordinates|lat|lng)'
             and convalidated),
          array['price_reports_coordinates_together', 'price_reports_lat_range', 'price_reports_lng_range'],
          'the three coordinate checks exist and are validated');
select throws_ok($$select tap.report_at(tap.reporter(1), 'bounds:1', 90.0001, 0)$$, '23514', null, 'lat above 90 is refused');
select throws_ok($$select tap.report_at(tap.reporter(1), 'bounds:1', -90.0001, 0)$$, '23514', null, 'lat below -90 is refused');
select throws_ok($$select tap.report_at(tap.reporter(1), 'bounds:1', 0, 180.0001)$$, '23514', null, 'lng above 180 is refused');
select throws_ok($$select tap.report_at(tap.reporter(1), 'bounds:1', 0, -180.0001)$$, '23514', null, 'lng below -180 is refused');
select throws_ok($$select tap.report_at(tap.reporter(1), 'bounds:1', 'NaN', 0)$$, '23514', null, 'a NaN lat is refused');
select throws_ok($$select tap.report_at(tap.reporter(1), 'bounds:1', 0, 'Infinity')$$, '23514', null, 'an infinite lng is refused');
select throws_ok($$select tap.report_at(tap.reporter(1), 'bounds:1', 37.7, null)$$, '23514',
                 'new row for relation "price_reports" violates check constraint "price_reports_coordinates_together"',
                 'lat without lng is refused');
select throws_ok($$select tap.report_at(tap.reporter(1), 'bounds:1', null, -122.4)$$, '23514', null, 'lng without lat is refused');
select lives_ok($$select tap.report_at(tap.reporter(1), 'bounds:1', 90, -180); select tap.report_at(tap.reporter(2), 'bounds:2', -90, 180)$$,
                'the bounds themselves are in range');
select lives_ok($$select tap.report_at(tap.reporter(1), 'bounds:3', null, null)$$, 'a report without coordinates, as before');

------------------------------------------------------------------------------------------------------
-- Who may write and read them
------------------------------------------------------------------------------------------------------

select column_privs_are('public', 'price_reports', c, 'authenticated', array['INSERT'],
                        'authenticated may insert ' || c || ', never read it')
from unnest(array['lat', 'lng']) c;
select column_privs_are('public', 'price_reports', c, r, array[]::text[], r || ' has no privilege on ' || c)
from unnest(array['lat', 'lng']) c, unnest(array['anon', 'authenticator', 'price_analyst']) r;
select table_privs_are('private', 'community_places', r, array[]::text[], r || ' cannot read community_places')
from unnest(array['authenticated', 'anon', 'authenticator', 'price_analyst']) r;
select is((select count(*)::int from pg_proc p, unnest(array['authenticated', 'anon', 'authenticator', 'price_analyst']) r
           where p.oid in ('private.counted_positions(text[], timestamptz)'::regprocedure,
                           'private.community_positions_median(text[], timestamptz)'::regprocedure,
                           'private.community_places_live(extensions.geography, double precision, timestamptz)'::regprocedure,
                           'private.community_places_refresh_stale(interval, integer)'::regprocedure,
                           'private.community_places_refresh(text[])'::regprocedure)
             and has_function_privilege(r, p.oid, 'EXECUTE')),
          0, 'no client role may call counted_positions, the median, the live search or a refresh');

-- A reporter's own insert through the policy, with coordinates; reading them back is refused.
select tap.use_token(tap.token_for(tap.alice())) \g /dev/null
set local role authenticated;
select lives_ok($$insert into public.price_reports (location_id, rate_kind, price_cents, lat, lng)
                  values ('own:1', 'hourly', 250, 37.79, -122.39)$$, 'a signed-in reporter inserts lat and lng');
select throws_ok($$select lat, lng from public.price_reports$$, '42501', null, 'and cannot read them back');
reset role;
set local role anon;
select throws_ok($$select lat from public.price_reports$$, '42501', null, 'anon cannot read them');
reset role;
set local role authenticator;
select throws_ok($$select lat from public.price_reports$$, '42501', null, 'authenticator cannot read them');
reset role;

------------------------------------------------------------------------------------------------------
-- The threshold: two reporters never make a place visible, three do
------------------------------------------------------------------------------------------------------

-- Near the Ferry Building. Two reporters at one point, and one more, fresh (counted tomorrow).
select tap.report_at(tap.reporter(1), 'mapkit:ferry', 37.7950, -122.3930) \g /dev/null
select tap.report_at(tap.reporter(2), 'mapkit:ferry', 37.7950, -122.3930) \g /dev/null
select tap.report_at(tap.fresh(), 'mapkit:ferry', 37.7950, -122.3930) \g /dev/null
select is(tap.community('mapkit:ferry'), null, 'two counted reporters (and a fresh one): no community place');
select is(tap.nearby(37.7950, -122.3930), null, 'and places_nearby finds nothing there');
select is((select count(*)::int from public.places_match('ferry', 37.7950, -122.3930)), 0, 'nor does places_match');
-- A counted reporter whose report has no coordinates does not complete it either.
select tap.seed(tap.reporter(3), 'mapkit:ferry', 300) \g /dev/null
select is(tap.community('mapkit:ferry'), null, 'a third reporter without coordinates does not make it visible');

-- The third counted reporter with coordinates: visible, at the median of the three.
select tap.report_at(tap.reporter(3), 'mapkit:ferry', 37.7960, -122.3940) \g /dev/null
select is(tap.community('mapkit:ferry'), '37.795000 -122.393000 3', 'three counted reporters: the place, at the per-coordinate median');
select is(tap.nearby(37.7950, -122.3930), array['mapkit:ferry@community'], 'places_nearby finds it, source community');
select results_eq($$select name, kind, round(lat::numeric, 6), round(lng::numeric, 6), distance_m, median_cents, reporters
                    from public.places_nearby(37.7950, -122.3910)$$,
                  $$values (null::text, 'parking'::text, 37.795000, -122.393000,
                            round(extensions.st_distance(extensions.st_makepoint(-122.3910, 37.7950)::extensions.geography,
                                                         extensions.st_makepoint(-122.3930, 37.7950)::extensions.geography, false))::integer,
                            300, 3)$$,
                  'its row: no name, parking, the median position, the distance to it and price_medians'' columns');
select is((select location_id from public.places_match('anything', 37.7950, -122.3930)), 'mapkit:ferry',
          'places_match offers it too');

-- Two more reporters far away (1 km north) never move it: the median stays with the three.
select tap.report_at(tap.reporter(4), 'mapkit:ferry', 37.8040, -122.3930) \g /dev/null
select tap.report_at(tap.reporter(5), 'mapkit:ferry', 37.8040, -122.3930) \g /dev/null
select is(tap.community('mapkit:ferry'), '37.796000 -122.393000 5',
          'two reporters 1 km away: each coordinate stays within what the three gave');
-- One of the three moving their own report moves nothing beyond their own vote.
select tap.report_at(tap.reporter(1), 'mapkit:ferry', 37.9000, -122.3930) \g /dev/null
select is(tap.community('mapkit:ferry'), '37.804000 -122.393000 5',
          'a reporter counts once, with their latest coordinates');
select tap.report_at(tap.reporter(1), 'mapkit:ferry', 37.7950, -122.3930) \g /dev/null
-- A later report without coordinates leaves their position standing.
select tap.seed(tap.reporter(1), 'mapkit:ferry', 310, 'daily') \g /dev/null
select is(tap.community('mapkit:ferry'), '37.796000 -122.393000 5', 'a later report without coordinates keeps the earlier ones');

-- Honest reporters agreeing on one point (as apps reading one MapKit place do): two others move nothing.
select tap.report_at(tap.reporter(n), 'mapkit:pier', 37.8000, -122.4000) from generate_series(1, 3) n \g /dev/null
select is(tap.community('mapkit:pier'), '37.800000 -122.400000 3', 'three agreeing reporters: their point');
select tap.report_at(tap.reporter(n), 'mapkit:pier', 37.7000, -122.3000) from generate_series(6, 7) n \g /dev/null
select is(tap.community('mapkit:pier'), '37.800000 -122.400000 5', 'two reporters elsewhere do not move it at all');

-- The fresh reporter counts once their identity matures (aged by the superuser, as the tests age them:
-- the reports follow, and the store rebuilds the location).
select tap.report_at(tap.reporter(1), 'mapkit:young', 37.81, -122.41) \g /dev/null
select tap.report_at(tap.reporter(2), 'mapkit:young', 37.81, -122.41) \g /dev/null
select tap.report_at(tap.fresh(), 'mapkit:young', 37.81, -122.41) \g /dev/null
select is(tap.community('mapkit:young'), null, 'a fresh reporter is not counted');
update auth.users set created_at = now() - interval '2 days' where id = tap.fresh();
select is(tap.community('mapkit:young'), '37.810000 -122.410000 3', 'once matured, they are');

------------------------------------------------------------------------------------------------------
-- Time alone: a search at an instant gives the rule's answer at that instant, however long ago the
-- table was refreshed (a reporter maturing, a report leaving the window, with no write in between)
------------------------------------------------------------------------------------------------------

-- Two counted reporters and one who matures in an hour.
insert into auth.users (id, created_at)
values ('f0000000-0000-4000-8000-000000000002', now() - private.elapsed(private.reporter_maturity()) + interval '1 hour');
select tap.report_at(tap.reporter(1), 'time:late', 10.0, 20.0) \g /dev/null
select tap.report_at(tap.reporter(2), 'time:late', 10.0002, 20.0002) \g /dev/null
select tap.report_at('f0000000-0000-4000-8000-000000000002', 'time:late', 10.0004, 20.0004) \g /dev/null
select is((select reporters from private.community_places where location_id = 'time:late' and lat is null), 2,
          'two counted of three: the row is below the threshold');
select ok((select valid_until between now() + interval '59 minutes' and now() + interval '61 minutes'
           from private.community_places where location_id = 'time:late'),
          'and holds until the third reporter matures, in an hour');
select is(tap.searched(10.0, 20.0, now()), null, 'a search now finds nothing');
select is(tap.searched(10.0, 20.0, now() + interval '2 hours'), array['time:late 10.000200 20.000200'],
          'a search two hours on finds it at the median of the three, with no refresh in between');
select is(tap.community('time:late'), null, 'the table still says what held when it was written');
select is(tap.searched(10.0, 20.0, now() + interval '2 hours'),
          (select array_agg(format('%s %s %s', m.location_id, round(m.lat::numeric, 6), round(m.lng::numeric, 6)))
           from private.community_positions_median(array['time:late'], now() + interval '2 hours') m),
          'what it finds is the rule at that instant');
select is((select array_agg(w.location_id) from private.places_within(
               extensions.st_setsrid(extensions.st_makepoint(20.0, 10.0), 4326)::extensions.geography, 500,
               now() + interval '2 hours') w),
          array['time:late'], 'places_within (the ties at the cut) finds it too');

-- Three counted reporters whose reports leave the window in an hour: found now, not two hours on.
select tap.report_at(tap.reporter(n), 'time:old', 11.0, 21.0) from generate_series(4, 6) n \g /dev/null
update public.price_reports set created_at = now() - private.elapsed(private.report_window()) + interval '1 hour'
where location_id = 'time:old';
select is(tap.searched(11.0, 21.0, now()), array['time:old 11.000000 21.000000'], 'three in the window: found now');
select is(tap.searched(11.0, 21.0, now() + interval '2 hours'), null, 'gone once their reports leave the window');
select is(tap.community('time:old'), '11.000000 21.000000 3', 'the table row stands, and is not read past its span');

-- The maintenance fold refreshes a row whose span ended (here: one that ends within the next two hours,
-- seen from two hours on); searches are right either way.
select is(private.community_places_refresh_stale(interval '-2 hours', 10), 2, 'the two rows due are refreshed');
select is(tap.searched(10.0, 20.0, now() + interval '2 hours'), array['time:late 10.000200 20.000200'],
          'and the answers two hours on are the same');

-- Across the antimeridian: the live search's box reaches the other side.
select tap.report_at('f0000000-0000-4000-8000-000000000002', 'time:date-line', 0.0, 179.9996) \g /dev/null
select tap.report_at(tap.reporter(n), 'time:date-line', 0.0, 179.9996) from generate_series(7, 8) n \g /dev/null
select is(tap.searched(0.0, -179.9996, now()), null, 'two counted at the date line: nothing now');
select is(tap.searched(0.0, -179.9996, now() + interval '2 hours'), array['time:date-line 0.000000 179.999600'],
          'two hours on, found from the other side of the antimeridian, about 90 m away');
select is(tap.searched(0.0, -179.9996, now() + interval '2 hours', 50), null, 'but not within 50 m');

------------------------------------------------------------------------------------------------------
-- Imported places ignore reported coordinates
------------------------------------------------------------------------------------------------------

insert into private.places (source, location_id, name, kind, geom)
values ('city', 'city:garage-1', 'City Garage', 'parking', extensions.st_setsrid(extensions.st_makepoint(-122.3500, 37.7500), 4326));
select tap.report_at(tap.reporter(n), 'city:garage-1', 37.7000, -122.2000) from generate_series(1, 4) n \g /dev/null
select is(tap.nearby(37.7000, -122.2000), null, 'reported coordinates do not place an imported id elsewhere');
select is(tap.nearby(37.7500, -122.3500), array['city:garage-1@city'], 'it is found once, where the import put it');
select ok((select exists (select from public.price_reports where location_id = 'city:garage-1' and lat = 37.7)),
          'its reports keep their coordinates (stored, not used)');
-- The import dropped: the community's place stands.
delete from private.places where location_id = 'city:garage-1';
select is(tap.nearby(37.7000, -122.2000), array['city:garage-1@community'], 'without the import, the community place is used');

------------------------------------------------------------------------------------------------------
-- Rebuild from scratch equals the incremental path; forget-user; the replay rule
------------------------------------------------------------------------------------------------------

create temp table incremental as select location_id, lat, lng, reporters from private.community_places;
select private.median_rebuild(null);
select set_eq($$select location_id, lat, lng, reporters from private.community_places$$,
              $$select * from incremental$$, 'a rebuild of everything gives the incremental answer');
select private.median_rebuild(array['mapkit:ferry', 'mapkit:pier']);
select set_eq($$select location_id, lat, lng, reporters from private.community_places$$,
              $$select * from incremental$$, 'a rebuild of two locations too');
select private.median_fold_stale(interval '0', 1000) \g /dev/null
select set_eq($$select location_id, lat, lng, reporters from private.community_places$$,
              $$select * from incremental$$, 'and the maintenance fold');
select set_eq($$select location_id, lat, lng, reporters from private.community_places where lat is not null$$,
              $$select p.location_id, percentile_cont(0.5) within group (order by p.lat) as lat,
                       percentile_cont(0.5) within group (order by p.lng) as lng, count(*)::int as reporters
                from private.counted_positions(array(select distinct location_id from public.price_reports), now()) p
                group by p.location_id having count(*) >= 3$$,
              'all equal the counted positions'' medians');

select is((select reports from auth.forget_user(tap.reporter(3))), 4::bigint, 'forget-user deletes reporter 3''s reports');
select is(tap.community('mapkit:young'), '37.810000 -122.410000 3', 'a location they never reported at keeps its place');
select is(tap.community('mapkit:pier'), '37.750000 -122.350000 4', 'where four remain, the median of the four');
select tap.report_at(tap.reporter(n), 'mapkit:duo', 37.82, -122.42) from generate_series(8, 10) n \g /dev/null
select is(tap.community('mapkit:duo'), '37.820000 -122.420000 3', 'three at mapkit:duo');
select auth.forget_user(tap.reporter(10)) \g /dev/null
select is(tap.community('mapkit:duo'), null, 'forget-user of one of the three: the place is gone');

select tap.use_token(tap.token_for(tap.bob())) \g /dev/null
set local role authenticated;
insert into public.price_reports (location_id, rate_kind, price_cents, client_report_id, lat, lng)
values ('own:2', 'hourly', 250, '6f1c1d8e-3b7a-4c52-9a55-0b9a1c2d3e4f', 37.79, -122.39);
select throws_ok($$insert into public.price_reports (location_id, rate_kind, price_cents, client_report_id, lat, lng)
                   values ('own:2', 'hourly', 250, '6f1c1d8e-3b7a-4c52-9a55-0b9a1c2d3e4f', 37.80, -122.39)$$,
                 '23505', null, 'a retry with other coordinates is a conflict, as with any other value');
reset role;

------------------------------------------------------------------------------------------------------
-- The plan: the community places' GiST index walked in distance order
------------------------------------------------------------------------------------------------------

insert into private.community_places (location_id, lat, lng, reporters, refreshed_at, valid_until,
                                      min_lat, max_lat, min_lng, max_lng)
select 'crowd:' || i, x.lat, x.lng, 3, now(), 'infinity', x.lat, x.lat, x.lng, x.lng
from generate_series(1, 20000) i
cross join lateral (select 37.77 + (i / 141) * 0.00006 as lat, -122.41 + (i % 141) * 0.00008 as lng) x;
-- And 20 000 imported places over the same area, so both scans are held at once.
insert into private.places (source, location_id, kind, geom)
select 'dense', 'dense:' || i, 'parking',
       extensions.st_setsrid(extensions.st_makepoint(-122.41 + (i % 141) * 0.00008 + 0.00004, 37.77 + (i / 141) * 0.00006), 4326)
from generate_series(1, 20000) i;
analyze private.community_places;
analyze private.places;
select matches(tap.plan_of($$select * from private.places_nearest(
                   extensions.st_setsrid(extensions.st_makepoint(-122.405, 37.774), 4326)::extensions.geography, 500, 20, now())$$),
               'Limit\n *->  Index Scan using places_geog on places p\n.*Index Cond: \(geog OPERATOR\(extensions\.&&\).*\n *Order By: \(geog OPERATOR\(extensions\.<->\).*'
               'Limit\n *->  Index Scan using community_places_geog on community_places c\n.*Index Cond: \(geog OPERATOR\(extensions\.&&\).*\n *Order By: \(geog OPERATOR\(extensions\.<->\).*\n *Filter: \(\(refreshed_at <= now\(\)\) AND \(valid_until > now\(\)\) AND \(\(SubPlan 1\) IS NOT TRUE\)\)\n *SubPlan 1\n *->  Limit\n *->  Index Only Scan using places_location_id on places i',
               '500 m over 20 000 community and 20 000 imported places: each GiST index walked in distance order, stopped by its limit (the import check one index probe per row)');
select matches(tap.plan_of($$select * from private.places_nearest(
                   extensions.st_setsrid(extensions.st_makepoint(-122.405, 37.774), 4326)::extensions.geography, 5000, 100, now())$$),
               'Limit\n *->  Index Scan using places_geog on places p\n.*Index Cond: \(geog OPERATOR\(extensions\.&&\).*\n *Order By: \(geog OPERATOR\(extensions\.<->\).*'
               'Limit\n *->  Index Scan using community_places_geog on community_places c\n.*Index Cond: \(geog OPERATOR\(extensions\.&&\).*\n *Order By: \(geog OPERATOR\(extensions\.<->\).*\n *Filter: \(\(refreshed_at <= now\(\)\) AND \(valid_until > now\(\)\) AND \(\(SubPlan 1\) IS NOT TRUE\)\)\n *SubPlan 1\n *->  Limit\n *->  Index Only Scan using places_location_id on places i',
               '5 km: still both KNN scans');
select is((select count(*)::int from public.places_nearby(37.774, -122.405, radius_m => 5000, max_results => 100)), 100,
          'the widest search over them answers its 100');

select * from finish();
rollback;
