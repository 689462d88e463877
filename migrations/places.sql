-- Places, repeatable: where location ids are, and what parking costs near a point. The table
-- is in 0023_places.sql; its bounds (private.places_max_radius_m(), private.places_max_results()) in
-- settings.sql; who may call what in policies.sql. PostGIS and pg_trgm live in the extensions schema, so
-- every call, type and operator here is written extensions.* (operators as operator(extensions.<->)).
--
-- Distances are great-circle metres on PostGIS's mean-radius sphere (use_spheroid => false): the
-- distance the GiST index orders by (`<->` on geography), so "nearest first" and `distance_m` always
-- agree. Within 5 km they differ from the WGS 84 ellipsoid's by at most about 0.5 %.

-- The community places of at `at` that the table does not hold for that instant (a row made before or
-- after it: private.community_places, 0025), near enough to origin that one could lie within radius_m:
-- computed from private.counted_positions() at `at`, the rule itself, so a search never depends on when
-- the last refresh ran. They are found by the valid_until and refreshed_at indexes, then by the
-- location's box: a median of its reports' coordinates lies within the least and greatest lat and lng
-- they gave, so a location whose box misses every point within radius_m of origin has no place there.
-- The angle of radius_m on PostGIS's mean-radius sphere (6 371 008.8 m), widened by 0.01 % against
-- rounding, bounds the latitudes; the longitudes of a cap of angle d around latitude phi lie within
-- asin(sin d / cos phi) of its centre, and a cap over a pole takes every longitude. Few rows are stale
-- where the maintenance fold runs (median_fold_stale refreshes them), so this is usually one index probe.
create or replace function private.community_places_live(origin extensions.geography, radius_m double precision,
                                                         at timestamptz)
    returns table(location_id text, lat double precision, lng double precision, geog extensions.geography)
    language plpgsql stable set search_path = '' set timezone = 'UTC'
as $$
declare
    centre_lat constant double precision := extensions.st_y(community_places_live.origin::extensions.geometry);
    centre_lng constant double precision := extensions.st_x(community_places_live.origin::extensions.geometry);
    arc constant double precision := community_places_live.radius_m / 6371008.8 * 1.0001 + 1e-12;
    reach_lat constant double precision := pg_catalog.degrees(arc);
    reach_lng double precision := 360;
    stale pg_catalog.text[];
begin
    if pg_catalog.abs(centre_lat) + reach_lat < 90 and pg_catalog.sin(arc) < pg_catalog.cos(pg_catalog.radians(centre_lat)) then
        reach_lng := pg_catalog.degrees(pg_catalog.asin(pg_catalog.sin(arc) / pg_catalog.cos(pg_catalog.radians(centre_lat))));
    end if;
    stale := array(
        select c.location_id from private.community_places c
        where (c.valid_until <= community_places_live.at or c.refreshed_at > community_places_live.at)
          and c.max_lat >= centre_lat - reach_lat and c.min_lat <= centre_lat + reach_lat
          and (reach_lng >= 180
               or (c.max_lng >= centre_lng - reach_lng and c.min_lng <= centre_lng + reach_lng)
               -- A cap across the antimeridian reaches the other side's longitudes too.
               or (centre_lng - reach_lng < -180 and c.max_lng >= centre_lng - reach_lng + 360)
               or (centre_lng + reach_lng > 180 and c.min_lng <= centre_lng + reach_lng - 360))
          and (select true from private.places i where i.location_id = c.location_id limit 1) is not true);
    if pg_catalog.cardinality(stale) = 0 then
        return;
    end if;
    return query
    select m.location_id, m.lat, m.lng,
           extensions.st_setsrid(extensions.st_makepoint(m.lng, m.lat), 4326)::extensions.geography
    from private.community_positions_median(stale, community_places_live.at) m
    where m.lat is not null;
end
$$;
revoke all on function private.community_places_live(extensions.geography, double precision, timestamptz) from public;

-- The rule for the given locations at `at`: per location with a counted position, the per-coordinate
-- median (percentile_cont(0.5), as the price median) of its counted reporters' latest coordinates
-- (private.counted_positions(), counted_reports.sql) and how many reporters gave them; lat and lng are
-- null while they are fewer than median_min_reporters(). The one place the rule is written: the refresh
-- stores it, and searches compute it for what the table does not hold.
create or replace function private.community_positions_median(locations text[], at timestamptz)
    returns table(location_id text, lat double precision, lng double precision, reporters integer)
    language sql stable set search_path = ''
    begin atomic
        select p.location_id,
               case when pg_catalog.count(*) >= private.median_min_reporters()
                    then pg_catalog.percentile_cont(0.5) within group (order by p.lat) end,
               case when pg_catalog.count(*) >= private.median_min_reporters()
                    then pg_catalog.percentile_cont(0.5) within group (order by p.lng) end,
               pg_catalog.count(*)::integer
        from private.counted_positions(community_positions_median.locations, community_positions_median.at) p
        group by p.location_id;
    end;
revoke all on function private.community_positions_median(text[], timestamptz) from public;

-- The places nearest to origin within radius_m, at most max_results of them, nearest first: the KNN form,
-- ORDER BY geog <-> origin LIMIT n, which walks the GiST index in distance order and stops after n rows,
-- then ST_DWithin on those n. Measured with 1 M places: 0.34 ms, where ordering by ST_Distance took 62 ms
-- (it computes and sorts every place in the radius). ST_DWithin is applied after the limit, not inside
-- it: inside, the planner weighs the radius by its statistics, and for 5 km over a dense city it chose a
-- bitmap scan of 400 000 places and a sort (1.1 s); after it, the result is the same (the n nearest
-- within the radius are the n nearest, less those outside it) and the plan is the index's whatever the
-- statistics say. A plain SQL function with no SET clause, so the planner inlines it into its caller's
-- query and pgTAP (67_places.sql) can hold its plan.
-- Before `at` was an argument (community places depend on the instant).
drop function if exists private.places_nearest(extensions.geography, double precision, integer);
drop function if exists private.places_within(extensions.geography, double precision);
create or replace function private.places_nearest(origin extensions.geography, radius_m double precision,
                                                  max_results integer, at timestamptz)
    returns table(source text, location_id text, name text, kind text, lat double precision,
                  lng double precision, distance double precision)
    language sql stable
as $$
    select k.source, k.location_id, k.name, k.kind, k.lat, k.lng,
           extensions.st_distance(k.geog, places_nearest.origin, false)
    from ((select p.source, p.location_id, p.name, p.kind, p.lat, p.lng, p.geog
           from private.places p
           where p.geog operator(extensions.&&) extensions._st_expand(places_nearest.origin, places_nearest.radius_m)
           order by p.geog operator(extensions.<->) places_nearest.origin
           limit places_nearest.max_results)
          union all
          -- The community's places that hold at `at` (community_places_refresh below), the same KNN walk
          -- of their own index, for the ids no import places: the n nearest of all three branches are
          -- among the n nearest of each.
          (select 'community', c.location_id, null, 'parking', c.lat, c.lng, c.geog
           from private.community_places c
           where c.geog operator(extensions.&&) extensions._st_expand(places_nearest.origin, places_nearest.radius_m)
             and c.refreshed_at <= places_nearest.at and c.valid_until > places_nearest.at
             -- One index probe per row, in the index's order. Written so the planner keeps the KNN walk:
             -- NOT EXISTS becomes an anti join, which over many places it hashes and then sorts every
             -- community place in the radius by distance; a scalar subquery with a limit is never hashed;
             -- and IS NOT TRUE is estimated to keep half the rows (IS NULL: 0.5 %, so the planner expected
             -- to read the whole index and chose a sequential scan and a sort for 5 km).
             and (select true from private.places i where i.location_id = c.location_id limit 1) is not true
           order by c.geog operator(extensions.<->) places_nearest.origin
           limit places_nearest.max_results)
          union all
          -- And the ones that do not hold at `at`, computed from the rule at that instant. Only if some row
          -- does not hold at `at` (one probe of each time index): that is usually none where the maintenance
          -- fold runs, and then the call (a PL/pgSQL frame that sets two settings) is not made at all.
          (select 'community', l.location_id, null, 'parking', l.lat, l.lng, l.geog
           from private.community_places_live(places_nearest.origin, places_nearest.radius_m, places_nearest.at) l
           where exists (select from private.community_places s where s.valid_until <= places_nearest.at)
              or exists (select from private.community_places s where s.refreshed_at > places_nearest.at)
           order by l.geog operator(extensions.<->) places_nearest.origin
           limit places_nearest.max_results)) k
    where extensions.st_dwithin(k.geog, places_nearest.origin, places_nearest.radius_m, false)
$$;
revoke all on function private.places_nearest(extensions.geography, double precision, integer, timestamptz) from public;

-- Every place within radius_m of origin (the community's included, as in places_nearest), unordered: after places_nearest found how far its n-th place
-- is, the places that tie with it on whole metres (the order is by distance_m, then location_id, and
-- which of several equally distant places make the cut is decided by location_id, not by the index).
create or replace function private.places_within(origin extensions.geography, radius_m double precision,
                                                 at timestamptz)
    returns table(source text, location_id text, name text, kind text, lat double precision,
                  lng double precision, distance double precision)
    language sql stable
as $$
    select p.source, p.location_id, p.name, p.kind, p.lat, p.lng,
           extensions.st_distance(p.geog, places_within.origin, false)
    from private.places p
    where extensions.st_dwithin(p.geog, places_within.origin, places_within.radius_m, false)
    union all
    select 'community', c.location_id, null, 'parking', c.lat, c.lng,
           extensions.st_distance(c.geog, places_within.origin, false)
    from private.community_places c
    where extensions.st_dwithin(c.geog, places_within.origin, places_within.radius_m, false)
      and c.refreshed_at <= places_within.at and c.valid_until > places_within.at
      -- One index probe per place found (as in places_nearest: never an anti join hashed over every place).
      and (select true from private.places i where i.location_id = c.location_id limit 1) is not true
    union all
    select 'community', l.location_id, null, 'parking', l.lat, l.lng,
           extensions.st_distance(l.geog, places_within.origin, false)
    from private.community_places_live(places_within.origin, places_within.radius_m, places_within.at) l
    where extensions.st_dwithin(l.geog, places_within.origin, places_within.radius_m, false)
$$;
revoke all on function private.places_within(extensions.geography, double precision, timestamptz) from public;

-- 22023 naming the argument and its bound.
create or replace function private.places_check_range(argument text, value double precision, low double precision,
                                                      high double precision)
    returns void
    language plpgsql immutable set search_path = ''
as $$
begin
    -- NaN is outside every range (it compares greater than every number), a null is not in one either.
    if value is null or not (value >= low and value <= high) then
        raise exception using errcode = '22023',
            message = pg_catalog.format('%s must be between %s and %s', argument, low, high),
            detail = pg_catalog.format('Got %s', coalesce(value::pg_catalog.text, 'null'));
    end if;
end
$$;
revoke all on function private.places_check_range(text, double precision, double precision, double precision)
    from public;

-- The places within radius_m metres of (lat, lng), nearest first (distance_m, then location_id), at most
-- max_results, each with what price_medians returns for its id and rate kind (null below the threshold)
-- and, for a stay (starts_at and duration, both or neither), what price_quotes returns as its published
-- cost. The medians are private.report_medians' rows, the function price_medians reads (called in groups
-- of max_median_locations(), its bound per call); where a location has medians in more than one
-- currency, the one price_quotes would pick: the published currency when there is published data, else
-- the most reporters, then the currency's code. The published columns are private.cds_published_cost's,
-- which price_quotes reads, for the places with a CDS zone, under the same location-days bound.
-- Its statements keep one generic plan per session, as report_medians' do: planned anew each call (a
-- custom plan of the inlined KNN scans, the tie search and the medians' probes), planning cost more than
-- running them (measured over 1 M places: 2.3 ms of backend CPU per call with custom plans, 1.2 ms with
-- generic ones). None of those plans depends on the point, the radius or the ids: the KNN scans are the
-- indexes' whatever the values (places_nearest). A plan kept for the session must not depend on the
-- statistics of the moment either (a median_queue that was empty when it was made: medians.sql), so no
-- sequential scans here; cds_published_cost sets its own.
-- Every statement a call runs costs it more than its rows do (bench row 16: the executor's start of each
-- plan, and each function in it, is a fixed cost per call), so a search is as few statements as its answer
-- needs: the KNN scan sorted once into the answer's rows; the probe of the median store; and a query
-- adding medians and published costs only when a place has some or there is a stay. Backend CPU per call
-- (500 m, 20 results, no stay, over 1 M places, in a loop): 0.49 ms before this layout, 0.36 ms with it,
-- of which the KNN scan itself is 0.17 ms and the store's probe (two index probes per place) 0.07 ms.
create or replace function public.places_nearby(lat double precision, lng double precision, radius_m integer default 500,
                                                rate_kind text default 'hourly', starts_at timestamptz default null,
                                                duration interval default null, max_results integer default 20)
    returns setof private.nearby_place
    language plpgsql stable security definer set search_path = '' set jit = off
    set plan_cache_mode = force_generic_plan set enable_seqscan = off
as $$
declare
    -- The instant the community's places are taken at (places_nearest), as report_medians takes its own.
    at constant pg_catalog.timestamptz := pg_catalog.clock_timestamp();
    origin extensions.geography;
    wanted private.rate_kind;
    near private.nearby_place[];
    place private.nearby_place;
    reported pg_catalog.text[];
    found integer;
    edge integer;
    chunk constant integer := private.max_median_locations();
    zoned pg_catalog.text[];
    stay boolean := places_nearby.starts_at is not null;
    -- How many more than n + 1 places each KNN scan reads, to settle ties at the cut without a second search.
    -- Each spare row costs every search a KNN step, a distance and a radius check; more than 4 places tied
    -- with the n-th beyond it were 1 search in 1 000 for 20 results over the bench's city, 1 in 100 for 100.
    spare constant integer := 4;
    fetched integer;
begin
    -- The bounds, in one expression (the checker raises only for the first one missed).
    if not (places_nearby.lat >= -90 and places_nearby.lat <= 90 and places_nearby.lng >= -180 and places_nearby.lng <= 180
            and places_nearby.radius_m between 1 and private.places_max_radius_m()
            and places_nearby.max_results between 1 and private.places_max_results()) is true then
        perform private.places_check_range('lat', places_nearby.lat, -90, 90);
        perform private.places_check_range('lng', places_nearby.lng, -180, 180);
        perform private.places_check_range('radius_m', places_nearby.radius_m, 1, private.places_max_radius_m());
        perform private.places_check_range('max_results', places_nearby.max_results, 1, private.places_max_results());
    end if;
    if (places_nearby.starts_at is null) <> (places_nearby.duration is null) then
        raise exception using errcode = '22023',
            message = 'starts_at and duration go together: give both or neither',
            detail = pg_catalog.format('Got only %s', case when stay then 'starts_at' else 'duration' end);
    end if;
    if stay then
        -- The stay's own checks (22023), before anything is searched.
        perform from private.cds_published_cost('{}'::pg_catalog.text[], places_nearby.starts_at, places_nearby.duration);
    end if;
    wanted := private.rate_kind_argument(coalesce(places_nearby.rate_kind, ''));
    origin := extensions.st_setsrid(extensions.st_makepoint(places_nearby.lng, places_nearby.lat), 4326)::extensions.geography;
    fetched := places_nearby.max_results + 1 + spare;

    -- The nearest n + 1 + spare of each kind (the KNN scans: imported places, the community's held and
    -- computed), merged: the nearest `fetched` of them are the nearest `fetched` of all places, so every
    -- place nearer than the fetched-th is among them. The answer is the first n ordered by whole metres,
    -- then location_id, then source, among every place within as many whole metres as the n-th nearest
    -- (`edge`): when the fetched-th is beyond that, they are all here, and the first n by that order are
    -- the answer. Ties on whole metres at the cut are common where places are dense (about two in five
    -- searches over the bench's city), and the spare rows settle them in this one scan; only more than
    -- `spare` extra places within the n-th's metre need the search below.
    -- One sort, by the answer's order: rounding keeps the order of distances, so the k-th place in it is
    -- as many whole metres away as the k-th nearest, and the n-th and the fetched-th are read from it
    -- (a ranking by exact distance, and an ordered aggregate per column, cost a third of the search).
    near := array(select row(n.location_id, n.name, n.source, n.kind, n.lat, n.lng, n.distance_m,
                             null, null, null, null, null, null, null)::private.nearby_place
                  -- (OFFSET 0: each distance computed once, not once for the sort and once for the row.)
                  from (select n.*, pg_catalog.round(n.distance)::integer as distance_m
                        from private.places_nearest(origin, places_nearby.radius_m, fetched, at) n offset 0) n
                  order by n.distance_m, n.location_id, n.source);
    found := pg_catalog.cardinality(near);
    if found = 0 then
        return;
    end if;
    edge := (near[least(found, places_nearby.max_results)]).distance_m;

    if found >= fetched and (near[fetched]).distance_m <= edge then
        -- The fetched-th nearest is within the n-th's whole metres, so places there may be missing: every
        -- place within that many whole metres (the ties included), in order, the first n.
        near := array(select row(w.location_id, w.name, w.source, w.kind, w.lat, w.lng,
                                 pg_catalog.round(w.distance)::integer, null, null, null, null, null, null, null)::private.nearby_place
                      from private.places_within(origin, least(places_nearby.radius_m::double precision, edge + 0.5), at) w
                      where pg_catalog.round(w.distance) <= edge and w.distance <= places_nearby.radius_m
                      order by pg_catalog.round(w.distance), w.location_id, w.source
                      limit places_nearby.max_results);
    elsif found > places_nearby.max_results then
        near := near[1:places_nearby.max_results];
    end if;
    -- The medians are read for the ids the median store holds anything for (a group or a queued report):
    -- report_medians' own list of every location with data (its overview), so the others, which
    -- price_medians answers nothing for, cost no exact computation each. One probe of each key per id (a
    -- scalar subquery with a limit is never a hashed scan, which a plan kept from while the queue was
    -- small would be: medians.sql), the queue's only where there is no group.
    reported := array(select distinct c.location_id from pg_catalog.unnest(near) c
                      where (select 1 from private.median_groups g
                             where g.location_id = c.location_id and g.rate_kind = wanted::pg_catalog.text limit 1) is not null
                         or (select 1 from private.median_queue q
                             where q.location_id = c.location_id and q.rate_kind = wanted::pg_catalog.text limit 1) is not null);
    if not stay and pg_catalog.cardinality(reported) = 0 then
        -- Nothing to add to the places (most searches: most places have no reports): they are the answer.
        foreach place in array near loop
            return next place;
        end loop;
        return;
    end if;
    if stay then
        zoned := array(select distinct z.location_id from cds.zones z
                       where z.location_id = any (array(select c.location_id from pg_catalog.unnest(near) c)));
        perform private.cds_check_location_days(zoned, places_nearby.duration);
    end if;

    return query
    with chosen as (
        select c.*
        from pg_catalog.unnest(near) with ordinality
             c(location_id, name, source, kind, lat, lng, distance_m, median_cents, reporters, currency,
               last_reported_at, published_cents, published_allowed, published_reason, o)
    ),
    medians as materialized (
        select m.*
        from pg_catalog.generate_series(1, pg_catalog.cardinality(reported), chunk) g(first)
        cross join lateral private.report_medians(reported[g.first:g.first + chunk - 1], wanted, null) m
    ),
    published as materialized (
        -- Called only for a stay, and then even when no place has a zone: it checks the stay (22023).
        select p.*
        from (select where stay) s
        cross join lateral private.cds_published_cost(coalesce(zoned, '{}'::pg_catalog.text[]),
                                                      places_nearby.starts_at, places_nearby.duration) p
    )
    select c.location_id, c.name, c.source, c.kind, c.lat, c.lng, c.distance_m,
           m.median_cents, m.reporters, m.currency, m.last_reported_at,
           p.cost_cents, p.allowed, p.reason
    from chosen c
    left join published p on p.location_id = c.location_id
    left join lateral (
        select m.* from medians m
        where m.location_id = c.location_id and (p.currency is null or m.currency = p.currency)
        order by m.reporters desc, m.currency
        limit 1) m on true
    order by c.o;
end
$$;
revoke all on function public.places_nearby(double precision, double precision, integer, text, timestamptz, interval,
                                            integer) from public;

------------------------------------------------------------------------------------------------------
-- Loaders: `pricesvc import-rates` (a CDS feed's zones) and `pricesvc import-places` (a GeoJSON file),
-- both checked by the importer first (PublishedRates), each replacing one source's places in the
-- caller's transaction.
------------------------------------------------------------------------------------------------------

-- The places of a CDS source: each location id's zone polygon. A location id may have zones one after
-- another; its place is the zone valid now, else the one that starts last. Called by
-- private.cds_replace_source in its own transaction, so rates and places change together.
create or replace function private.places_replace_zones(p_source text, p_zones jsonb)
    returns integer
    language plpgsql volatile set search_path = ''
as $$
declare
    now_ms constant pg_catalog.int8 := (extract(epoch from pg_catalog.clock_timestamp()) * 1000)::pg_catalog.int8;
    stored integer;
begin
    delete from private.places p where p.source = p_source and p.kind = 'curb_zone';
    insert into private.places as p (source, location_id, name, kind, geom)
    select distinct on (z.location_id) p_source, z.location_id, z.name, 'curb_zone',
           extensions.st_setsrid(extensions.st_geomfromgeojson(z.geometry::pg_catalog.text), 4326)
    from pg_catalog.jsonb_to_recordset(p_zones)
         as z(location_id pg_catalog.text, name pg_catalog.text, geometry jsonb, start_date pg_catalog.int8,
              end_date pg_catalog.int8)
    where z.geometry is not null
    order by z.location_id,
             (z.start_date <= now_ms and (z.end_date is null or z.end_date > now_ms)) desc,
             z.start_date desc
    -- A zone is the place of its location id: it replaces a GeoJSON place of the same source and id.
    on conflict (source, location_id) do update set name = excluded.name, kind = excluded.kind, geom = excluded.geom;
    get diagnostics stored = row_count;
    return stored;
end
$$;
revoke all on function private.places_replace_zones(text, jsonb) from public;

-- The places of a GeoJSON source (`pricesvc import-places --source NAME FILE`): {"places": [{"location_id",
-- "name", "geometry"}]}, each location id once. Replaces the source's GeoJSON places in one statement's
-- transaction; a source that is also a CDS feed keeps its zones, and a feature whose id is one of them is
-- refused (a zone is the place of its location id). Returns how many places the source had before and
-- has now (zones not counted).
create or replace function private.places_replace_source(p_source text, p_document jsonb)
    returns table(previous integer, stored integer)
    language plpgsql volatile set search_path = ''
as $$
declare
    zone_id pg_catalog.text;
begin
    -- Concurrent imports of one source take turns.
    perform pg_catalog.pg_advisory_xact_lock(private.places_lock_namespace(), pg_catalog.hashtext(p_source));
    select z.location_id into zone_id
    from pg_catalog.jsonb_to_recordset(p_document -> 'places') as x(location_id pg_catalog.text)
    join private.places z on z.source = p_source and z.location_id = x.location_id and z.kind = 'curb_zone'
    order by 1 limit 1;
    if zone_id is not null then
        raise exception using errcode = '22023',
            message = pg_catalog.format('location id %L is a zone of source %L (import-rates): a zone is the place of its location id',
                                        zone_id, p_source);
    end if;
    delete from private.places p where p.source = p_source and p.kind = 'parking';
    get diagnostics previous = row_count;
    -- Written in geohash order, so places near one another share pages: a search reads the n nearest
    -- from a few pages instead of n scattered ones (bench row 16: a third less PostgreSQL time per search
    -- over a million places than in random order).
    insert into private.places (source, location_id, name, kind, geom)
    select p_source, x.location_id, x.name, 'parking', x.geom
    from (select y.location_id, y.name,
                 extensions.st_setsrid(extensions.st_geomfromgeojson(y.geometry::pg_catalog.text), 4326) as geom
          from pg_catalog.jsonb_to_recordset(p_document -> 'places')
               as y(location_id pg_catalog.text, name pg_catalog.text, geometry jsonb)) x
    order by extensions.st_geohash(x.geom);
    get diagnostics stored = row_count;
    return next;
end
$$;
revoke all on function private.places_replace_source(text, jsonb) from public;

------------------------------------------------------------------------------------------------------
-- Matching an app's own candidate (a MapKit point of interest, say) to the id everyone reports under
------------------------------------------------------------------------------------------------------

-- A name as places_match compares it: lower case, every run of characters that are not letters or digits
-- one space, trimmed. "Ferry-Building Garage" and "ferry building  garage" are the same name.
create or replace function private.places_normalised_name(name text) returns text
    language sql immutable parallel safe
    return pg_catalog.btrim(pg_catalog.regexp_replace(pg_catalog.lower(name), '[^[:alnum:]]+', ' ', 'g'));
revoke all on function private.places_normalised_name(text) from public;

-- Up to places_match_results() places within radius_m of (lat, lng), best first: by the trigram
-- similarity of the normalised names (pg_trgm's similarity(), 0 to 1; 0 for a place without a name), then
-- the nearer, then by location_id. Every place in the radius is a candidate, however unlike its name, so an
-- app sees what is there; it decides what similarity is enough (docs/api.md).
create or replace function public.places_match(name text, lat double precision, lng double precision,
                                               radius_m integer default 150)
    returns setof private.place_match
    language plpgsql stable security definer set search_path = '' set jit = off
as $$
declare
    origin extensions.geography;
    wanted pg_catalog.text;
begin
    if places_match.name is null or pg_catalog.char_length(places_match.name) > private.places_max_name_length() then
        raise exception using errcode = '22023',
            message = pg_catalog.format('name must be 1 to %s characters', private.places_max_name_length());
    end if;
    wanted := private.places_normalised_name(places_match.name);
    if wanted = '' then
        raise exception using errcode = '22023', message = 'name must contain a letter or a digit';
    end if;
    perform private.places_check_range('lat', places_match.lat, -90, 90);
    perform private.places_check_range('lng', places_match.lng, -180, 180);
    perform private.places_check_range('radius_m', places_match.radius_m, 1, private.places_max_match_radius_m());
    origin := extensions.st_setsrid(extensions.st_makepoint(places_match.lng, places_match.lat), 4326)::extensions.geography;
    return query
    select w.location_id, w.name, pg_catalog.round(w.distance)::integer,
           coalesce(extensions.similarity(private.places_normalised_name(w.name), wanted), 0)::real as similarity
    from private.places_within(origin, places_match.radius_m, pg_catalog.clock_timestamp()) w
    order by 4 desc, 3, w.location_id
    limit private.places_match_results();
end
$$;
revoke all on function public.places_match(text, double precision, double precision, integer) from public;

------------------------------------------------------------------------------------------------------
-- The community's places: where reporters say a location id is
------------------------------------------------------------------------------------------------------

-- Recomputes the community places of the given locations (null: of every location) from the rule
-- (community_positions_median above): one row per location with any report carrying coordinates, with
-- the instant it was made at, until when time alone leaves it true (valid_until: the first of its
-- reports' maturing, or of its reports in the window leaving it), and its reports' box (0025). So no
-- client, nor any two, can make a place visible, and while the honest reporters are more than half, no
-- minority can move a coordinate outside the range the honest ones gave. A location with no report
-- carrying coordinates is one probe of price_reports_positions_idx (0025) and costs nothing more.
--
-- Called by the median store's hooks (median_store.sql: an insert of a report with coordinates, every
-- fold, every rebuild; maintenance.sql: forget-user and the maintenance fold), so a row is what a rebuild
-- from scratch would make of price_reports at its refreshed_at, and stays the rule's answer until its
-- valid_until; searches compute the rest (community_places_live above).
-- Per location under a waited advisory lock (places_lock_namespace(), 'community/' || id), so two
-- inserts at one location take turns and the later one sees the earlier one's report; a rebuild of
-- everything holds the median queue's EXCLUSIVE lock instead, which every insert waits for.
create or replace function private.community_places_refresh(locations text[])
    returns void
    language plpgsql volatile set search_path = '' set timezone = 'UTC'
as $$
declare
    at pg_catalog.timestamptz;
    window_start pg_catalog.timestamptz;
    window_length constant interval := private.elapsed(private.report_window());
    wanted pg_catalog.text[];
begin
    if community_places_refresh.locations is null then
        truncate private.community_places;
        wanted := array(select distinct r.location_id from public.price_reports r where r.lat is not null);
    else
        -- Only locations with something to change take the lock (a report with coordinates, or a place):
        -- a fold where nobody gave coordinates costs one probe of each index and waits for nobody.
        wanted := array(select distinct x.id from pg_catalog.unnest(community_places_refresh.locations) x(id)
                        where exists (select from public.price_reports r where r.location_id = x.id and r.lat is not null)
                           or exists (select from private.community_places c where c.location_id = x.id)
                        order by x.id);
        if pg_catalog.cardinality(wanted) = 0 then
            return;
        end if;
        perform pg_catalog.pg_advisory_xact_lock(private.places_lock_namespace(), pg_catalog.hashtext('community/' || l.id))
        from pg_catalog.unnest(wanted) l(id);
        -- After the lock, with a new snapshot: every report of a transaction that held it is seen.
        delete from private.community_places c where c.location_id = any (wanted);
    end if;
    if pg_catalog.cardinality(wanted) = 0 then
        return;
    end if;
    -- The instant is taken after the lock: what the row says holds from here.
    at := pg_catalog.clock_timestamp();
    window_start := private.report_window_start(at);
    insert into private.community_places (location_id, lat, lng, reporters, refreshed_at, valid_until,
                                          min_lat, max_lat, min_lng, max_lng)
    select b.location_id, m.lat, m.lng, coalesce(m.reporters, 0), at, coalesce(h.valid_until, 'infinity'),
           b.min_lat, b.max_lat, b.min_lng, b.max_lng
    from (select r.location_id, pg_catalog.min(r.lat) as min_lat, pg_catalog.max(r.lat) as max_lat,
                 pg_catalog.min(r.lng) as min_lng, pg_catalog.max(r.lng) as max_lng
          from public.price_reports r
          where r.location_id = any (wanted) and r.lat is not null
          group by r.location_id) b
    left join private.community_positions_median(wanted, at) m on m.location_id = b.location_id
    -- What time alone changes: a report in the window maturing (one maturing after it leaves never counts,
    -- but an earlier refresh costs nothing wrong), or leaving the window (counted or not, as above).
    left join (select r.location_id,
                      least(pg_catalog.min(r.created_at + window_length),
                            pg_catalog.min(r.reporter_matures_at) filter (where r.reporter_matures_at > at)) as valid_until
               from public.price_reports r
               where r.location_id = any (wanted) and r.lat is not null and r.created_at > window_start
               group by r.location_id) h on h.location_id = b.location_id;
end
$$;
revoke all on function private.community_places_refresh(text[]) from public;

-- Refreshes up to max_rows community places whose span has ended (valid_until at least older_than ago),
-- oldest first, for the maintenance fold: searches are right without it (community_places_live), and
-- cheaper with it. Returns how many it refreshed.
create or replace function private.community_places_refresh_stale(older_than interval, max_rows integer)
    returns integer
    language plpgsql volatile set search_path = '' set timezone = 'UTC'
as $$
declare
    due pg_catalog.text[];
begin
    due := array(select c.location_id from private.community_places c
                 where c.valid_until <= pg_catalog.clock_timestamp() - community_places_refresh_stale.older_than
                 order by c.valid_until, c.location_id
                 limit community_places_refresh_stale.max_rows);
    if pg_catalog.cardinality(due) > 0 then
        perform private.community_places_refresh(due);
    end if;
    return pg_catalog.cardinality(due);
end
$$;
revoke all on function private.community_places_refresh_stale(interval, integer) from public;
