-- places_nearby: the places within a radius, nearest first then by location_id, each with what
-- price_medians returns for its id and, for a stay, what price_quotes returns as its published cost. Its
-- bounds, who may call it, and the plan that keeps a search cheap: the GiST index walked in distance
-- order (KNN), whatever the radius.
begin;
\ir _helpers.psql
select plan(55);
\ir _cds_helpers.psql

-- A place at a distance and bearing from a point, on PostGIS's sphere (what distance_m measures).
create function tap.place(id text, lat double precision, lng double precision, metres double precision default 0,
                          bearing_degrees double precision default 0, name text default null) returns void
    language sql as $$
        insert into private.places (source, location_id, name, kind, geom)
        values ('tap', id, coalesce(name, id), 'parking',
                extensions.st_project(extensions.st_setsrid(extensions.st_makepoint(lng, lat), 4326)::extensions.geography,
                                      metres, pg_catalog.radians(bearing_degrees))::extensions.geometry)
    $$;
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

------------------------------------------------------------------------------------------------------
-- The extensions: in their own schema, not public
------------------------------------------------------------------------------------------------------

select is((select extnamespace::regnamespace::text from pg_extension where extname = 'postgis'), 'extensions',
          'PostGIS lives in the extensions schema');
select is((select extnamespace::regnamespace::text from pg_extension where extname = 'pg_trgm'), 'extensions',
          'pg_trgm lives in the extensions schema');
select is((select count(*)::int from pg_proc where pronamespace = 'public'::regnamespace
           and proname ~* '^(st_|postgis|geometry|geography|similarity|show_trgm)'), 0,
          'no PostGIS or pg_trgm function is in public');
select has_index('private', 'places', 'places_geog', 'places has its GiST index on geog');
select is((select amname from pg_class c join pg_am a on a.oid = c.relam where c.oid = 'private.places_geog'::regclass),
          'gist', 'places_geog is a GiST index');

------------------------------------------------------------------------------------------------------
-- Who may call it
------------------------------------------------------------------------------------------------------

select function_privs_are('public', 'places_nearby',
                          array['double precision', 'double precision', 'integer', 'text', 'timestamptz', 'interval', 'integer'],
                          'authenticated', array['EXECUTE']);
select function_privs_are('public', 'places_nearby',
                          array['double precision', 'double precision', 'integer', 'text', 'timestamptz', 'interval', 'integer'],
                          'price_analyst', array['EXECUTE']);
select function_privs_are('public', 'places_nearby',
                          array['double precision', 'double precision', 'integer', 'text', 'timestamptz', 'interval', 'integer'],
                          'anon', array[]::text[]);
select table_privs_are('private', 'places', 'authenticated', array[]::text[], 'clients cannot read the places table');
select table_privs_are('private', 'places', 'price_analyst', array[]::text[], 'analysts search through places_nearby');

------------------------------------------------------------------------------------------------------
-- Bounds: 22023 naming the argument and its bound
------------------------------------------------------------------------------------------------------

select throws_ok($$select * from places_nearby(90.5, 0)$$, '22023', 'lat must be between -90 and 90', 'lat above 90');
select throws_ok($$select * from places_nearby(-91, 0)$$, '22023', 'lat must be between -90 and 90', 'lat below -90');
select throws_ok($$select * from places_nearby('NaN', 0)$$, '22023', 'lat must be between -90 and 90', 'lat NaN');
select throws_ok($$select * from places_nearby(null, 0)$$, '22023', 'lat must be between -90 and 90', 'lat null');
select throws_ok($$select * from places_nearby(0, 180.01)$$, '22023', 'lng must be between -180 and 180', 'lng above 180');
select throws_ok($$select * from places_nearby(0, '-Infinity')$$, '22023', 'lng must be between -180 and 180', 'lng -Infinity');
select throws_ok($$select * from places_nearby(0, 0, radius_m => 0)$$, '22023', 'radius_m must be between 1 and 5000', 'radius_m 0');
select throws_ok($$select * from places_nearby(0, 0, radius_m => 5001)$$, '22023', 'radius_m must be between 1 and 5000', 'radius_m 5001');
select throws_ok($$select * from places_nearby(0, 0, max_results => 0)$$, '22023', 'max_results must be between 1 and 100', 'max_results 0');
select throws_ok($$select * from places_nearby(0, 0, max_results => 101)$$, '22023', 'max_results must be between 1 and 100', 'max_results 101');
select throws_ok($$select * from places_nearby(0, 0, starts_at => now())$$, '22023',
                 'starts_at and duration go together: give both or neither', 'starts_at without duration');
select throws_ok($$select * from places_nearby(0, 0, duration => '1 hour')$$, '22023',
                 'starts_at and duration go together: give both or neither', 'duration without starts_at');
select throws_ok($$select * from places_nearby(0, 0, rate_kind => 'weekly')$$, '22023', 'unknown rate_kind ''weekly''',
                 'an unknown rate kind, as price_medians says it');
select throws_ok($$select * from places_nearby(0, 0, starts_at => now(), duration => '400 days')$$, '22023', null,
                 'the longest stay is price_quotes''');
select lives_ok($$select * from places_nearby(-90, 180, radius_m => 5000, max_results => 100)$$, 'the bounds themselves are accepted');

------------------------------------------------------------------------------------------------------
-- Order and distance
------------------------------------------------------------------------------------------------------

-- Around the Ferry Building (37.7955, -122.3937): places 100, 250 and 600 m away, two at exactly 300 m
-- (ids ordered against their insertion), and a polygon around the point itself.
select tap.place('tap:100', 37.7955, -122.3937, 100, 90);
select tap.place('tap:250', 37.7955, -122.3937, 250, 200);
select tap.place('tap:600', 37.7955, -122.3937, 600, 10);
select tap.place('tap:300-b', 37.7955, -122.3937, 300, 45);
select tap.place('tap:300-a', 37.7955, -122.3937, 300, 300);
insert into private.places (source, location_id, name, kind, geom)
values ('tap', 'tap:around', 'Around', 'parking',
        extensions.st_geomfromtext('POLYGON((-122.3947 37.7950,-122.3927 37.7950,-122.3927 37.7960,-122.3947 37.7960,-122.3947 37.7950))', 4326));

select results_eq($$select location_id, distance_m from places_nearby(37.7955, -122.3937)$$,
                  $$values ('tap:around', 0), ('tap:100', 100), ('tap:250', 250), ('tap:300-a', 300), ('tap:300-b', 300)$$,
                  'nearest first, equal distances by location_id, 0 inside a polygon, nothing past 500 m');
select results_eq($$select location_id from places_nearby(37.7955, -122.3937, max_results => 4)$$,
                  $$values ('tap:around'), ('tap:100'), ('tap:250'), ('tap:300-a')$$,
                  'max_results cuts a tie by location_id, not by the index''s order');
-- Ties at the cut by whole metres, settled in the KNN scan's spare rows or, when more tie than it has
-- spares, by the search of everything within those metres: either way the first n by metres and id.
-- Fifteen places 200 m away (201.4 m on the ellipsoid is still 200 m here: the sphere's metres), inserted
-- against their ids' order, and one 50 m away.
select tap.place('tie:near', 40.0, -75.0, 50, 10);
select tap.place('tie:' || lpad(i::text, 2, '0'), 40.0, -75.0, 200 + (i % 3) * 0.1, i * 23) from generate_series(15, 1, -1) i;
select is((select array_agg(distinct distance_m) from places_nearby(40.0, -75.0) where location_id <> 'tie:near'), array[200],
          'the fifteen are all 200 whole metres away');
select results_eq($$select location_id from places_nearby(40.0, -75.0, max_results => 3)$$,
                  $$values ('tie:near'), ('tie:01'), ('tie:02')$$,
                  'more tied at the cut than the scan has spare rows: the first n by id');
select results_eq($$select location_id from places_nearby(40.0, -75.0, max_results => 10)$$,
                  $$select 'tie:near' union all (select 'tie:' || lpad(i::text, 2, '0') from generate_series(1, 9) i)$$,
                  'every tied place within the spare rows: the first n by id as well');
select results_eq($$select location_id from places_nearby(37.7955, -122.3937, radius_m => 1000)$$,
                  $$values ('tap:around'), ('tap:100'), ('tap:250'), ('tap:300-a'), ('tap:300-b'), ('tap:600')$$,
                  'a wider radius reaches the 600 m place');
select is((select array_agg(location_id) from places_nearby(37.7955, -122.3937, radius_m => 99)), array['tap:around'],
          'radius_m bounds the search');
select ok((select bool_and(n.kind = 'parking' and n.source = 'tap'
                           and extensions.st_intersects(p.geom, extensions.st_setsrid(extensions.st_makepoint(n.lng, n.lat), 4326))
                           and (p.location_id <> 'tap:100' or (n.lat, n.lng) = (extensions.st_y(p.geom), extensions.st_x(p.geom))))
           from places_nearby(37.7955, -122.3937) n join private.places p using (location_id)),
          'lat and lng are a point on the place (a point''s own, one inside a polygon); kind and source as stored');
select is_empty($$select * from places_nearby(-37.7955, 122.3937)$$, 'nothing on the other side of the world');

------------------------------------------------------------------------------------------------------
-- Medians: exactly price_medians'; published costs: exactly price_quotes'
------------------------------------------------------------------------------------------------------

select tap.seed(r, 'tap:100', c) from (values (tap.alice(), 300), (tap.bob(), 400), (tap.carol(), 500)) v(r, c) \g /dev/null
select tap.seed(r, 'tap:250', 900) from unnest(array[tap.alice(), tap.bob()]) r \g /dev/null
select tap.seed(r, 'tap:100', 2500, 'daily') from unnest(array[tap.alice(), tap.bob(), tap.carol()]) r \g /dev/null

select results_eq(
    $$select n.location_id, n.median_cents, n.reporters, n.currency, n.last_reported_at
      from places_nearby(37.7955, -122.3937) n join price_medians(array['tap:100']) m using (location_id)$$,
    $$select location_id, median_cents, reporters, currency, last_reported_at from price_medians(array['tap:100'])$$,
    'the median columns are price_medians''');
select is((select median_cents from places_nearby(37.7955, -122.3937) where location_id = 'tap:100'), 400,
          'the hourly median of three reporters');
select ok((select median_cents is null and reporters is null and currency is null and last_reported_at is null
           from places_nearby(37.7955, -122.3937) where location_id = 'tap:250'),
          'two reporters: no median, as price_medians');
select is((select median_cents from places_nearby(37.7955, -122.3937, rate_kind => 'daily') where location_id = 'tap:100'), 2500,
          'rate_kind picks the median''s kind');
select ok((select bool_and(published_cents is null and published_allowed is null and published_reason is null)
           from places_nearby(37.7955, -122.3937)), 'without a stay the published columns are null');

-- A CDS zone at tap:300-a's id: 100 an hour.
update private.places set location_id = 'nearby:z' where location_id = 'tap:300-a';
select tap.zone('nearby', 'America/Los_Angeles', $$[{"rules": [{"activity": "parking", "rate": [{"rate": 100, "rate_unit": "hour"}]}]}]$$) \g /dev/null
select results_eq(
    $$select n.published_cents, n.published_allowed, n.published_reason
      from places_nearby(37.7955, -122.3937, starts_at => '2026-03-03 10:00-08', duration => '2 hours') n
      where n.location_id in ('nearby:z', 'tap:100') order by n.location_id$$,
    $$select q.published_cents, q.published_allowed, q.published_reason
      from price_quotes(array['nearby:z', 'tap:100'], 'hourly', '2026-03-03 10:00-08', '2 hours') q order by q.location_id$$,
    'with a stay, the published columns are price_quotes''');
select is((select published_cents from places_nearby(37.7955, -122.3937, starts_at => '2026-03-03 10:00-08', duration => '2 hours')
           where location_id = 'nearby:z'), 200::bigint, 'two hours at 100 an hour');

------------------------------------------------------------------------------------------------------
-- Loaders: a source's places replaced whole, in the caller's transaction
------------------------------------------------------------------------------------------------------

select results_eq($$select * from private.places_replace_source('tapfile', '{"places": [
    {"location_id": "tapfile:1", "name": "One", "geometry": {"type": "Point", "coordinates": [-122.3937, 37.7960]}},
    {"location_id": "tapfile:2", "name": null, "geometry": {"type": "Polygon", "coordinates": [[[-122.3940, 37.7950], [-122.3930, 37.7950], [-122.3930, 37.7952], [-122.3940, 37.7950]]]}}]}')$$,
                  $$values (0, 2)$$, 'a GeoJSON source''s first import stores its places');
select results_eq($$select * from private.places_replace_source('tapfile', '{"places": [
    {"location_id": "tapfile:3", "name": "Three", "geometry": {"type": "MultiPolygon", "coordinates": [[[[-122.3940, 37.7950], [-122.3930, 37.7950], [-122.3930, 37.7952], [-122.3940, 37.7950]]]]}}]}')$$,
                  $$values (2, 1)$$, 'a re-import replaces them');
select is((select array_agg(location_id || ' ' || kind) from private.places where source = 'tapfile'), array['tapfile:3 parking'],
          'only the new file''s places are left');
select throws_ok($$select * from private.places_replace_source('tapfile', '{"places": [
    {"location_id": "tapfile:4", "geometry": {"type": "Point", "coordinates": [-122.39, 37.79]}},
    {"location_id": "tapfile:5", "geometry": {"type": "Point"}}]}')$$,
                 'XX000', null, 'a document PostGIS cannot read fails (the importer checks every geometry first)');
select is((select array_agg(location_id) from private.places where source = 'tapfile'), array['tapfile:3'],
          'and changes nothing');
-- A source that is both: its zones (import-rates) and its GeoJSON places side by side.
select private.places_replace_source('both', '{"places": [{"location_id": "both:1", "geometry": {"type": "Point", "coordinates": [1, 1]}},
                                                         {"location_id": "both:2", "geometry": {"type": "Point", "coordinates": [1, 1]}}]}') \g /dev/null
select is(private.places_replace_zones('both', '[{"location_id": "both:2", "name": "Zone", "start_date": 0,
    "geometry": {"type": "Polygon", "coordinates": [[[1, 1], [1, 1.001], [1.001, 1.001], [1, 1]]]}}]'), 1,
          'a zone replaces the GeoJSON place of its location id');
select is((select array_agg(location_id || ' ' || kind order by location_id) from private.places where source = 'both'),
          array['both:1 parking', 'both:2 curb_zone'], 'and leaves the others');
select throws_ok($$select * from private.places_replace_source('both', '{"places": [
    {"location_id": "both:2", "geometry": {"type": "Point", "coordinates": [0, 0]}}]}')$$, '22023',
                 'location id ''both:2'' is a zone of source ''both'' (import-rates): a zone is the place of its location id',
                 'a feature whose id is one of the source''s zones is refused');
select results_eq($$select * from private.places_replace_source('both', '{"places": []}')$$, $$values (1, 0)$$,
                  'a GeoJSON re-import replaces only the GeoJSON places');
select is((select array_agg(location_id) from private.places where source = 'both'), array['both:2'], 'the zone stays');

------------------------------------------------------------------------------------------------------
-- The plan: the KNN index scan, for a small radius and for the widest, over a dense city
------------------------------------------------------------------------------------------------------

-- 20 000 places in about 1 km x 1 km, then statistics that say so.
insert into private.places (source, location_id, kind, geom)
select 'dense', 'dense:' || i, 'parking',
       extensions.st_setsrid(extensions.st_makepoint(-122.41 + (i % 141) * 0.00008, 37.77 + (i / 141) * 0.00006), 4326)
from generate_series(1, 20000) i;
analyze private.places;

select matches(tap.plan_of($$select * from private.places_nearest(
                   extensions.st_setsrid(extensions.st_makepoint(-122.405, 37.774), 4326)::extensions.geography, 500, 20, now())$$),
               'Limit\n *->  Index Scan using places_geog on places p\n.*Index Cond: \(geog OPERATOR\(extensions\.&&\).*\n *Order By: \(geog OPERATOR\(extensions\.<->\)',
               '500 m, 20 results: the GiST index walked in distance order, stopped by the limit');
select matches(tap.plan_of($$select * from private.places_nearest(
                   extensions.st_setsrid(extensions.st_makepoint(-122.405, 37.774), 4326)::extensions.geography, 5000, 100, now())$$),
               'Limit\n *->  Index Scan using places_geog on places p\n.*Index Cond: \(geog OPERATOR\(extensions\.&&\).*\n *Order By: \(geog OPERATOR\(extensions\.<->\)',
               '5 km around 20 000 places: still the KNN scan, not a bitmap scan and a sort');
-- places_nearby keeps generic plans (force_generic_plan): planned for no point, radius or count at all,
-- the scan is still the KNN walk.
prepare nearest_generic(extensions.geography, double precision, integer, timestamptz) as
    select * from private.places_nearest($1, $2, $3, $4);
set local plan_cache_mode = force_generic_plan;
set local enable_seqscan = off;
select matches(tap.plan_of($$execute nearest_generic(
                   extensions.st_setsrid(extensions.st_makepoint(-122.405, 37.774), 4326)::extensions.geography, 5000, 100, now())$$),
               'Limit\n *->  Index Scan using places_geog on places p\n.*Index Cond: \(geog OPERATOR\(extensions\.&&\) extensions._st_expand\(\$1, \$2\)\).*\n *Order By: \(geog OPERATOR\(extensions\.<->\) \$1\)',
               'a generic plan (as places_nearby keeps): the KNN walk, its bounds parameters');
reset plan_cache_mode;
reset enable_seqscan;
select is((select count(*)::int from places_nearby(37.774, -122.405, radius_m => 5000, max_results => 100)), 100,
          'the widest search over the dense city answers its 100');

select * from finish();
rollback;
