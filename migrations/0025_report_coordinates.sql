-- Community places (issue 34, "From the community"): a report may carry the place's coordinates as the
-- app knows it (lat and lng, WGS 84 degrees, both or neither). An expand step: nullable columns with no
-- default (no rewrite; older releases insert without them), and their rules as CHECK constraints added
-- NOT VALID, so adding them reads no row while this file holds the table's ACCESS EXCLUSIVE lock;
-- 0026_validate_report_coordinates.sql validates them in its own transaction, under a lock that lets
-- inserts through. New rows are checked from this commit on either way.
alter table public.price_reports
    add column lat double precision,
    add column lng double precision;
alter table public.price_reports
    add constraint price_reports_coordinates_together check ((lat is null) = (lng is null)) not valid,
    -- NaN compares greater than every number in PostgreSQL, so it is outside both ranges (as are the
    -- infinities).
    add constraint price_reports_lat_range check (lat >= -90 and lat <= 90) not valid,
    add constraint price_reports_lng_range check (lng >= -180 and lng <= 180) not valid;

-- Where the community puts a location id: per location, the per-coordinate median (percentile_cont 0.5)
-- of its counted reporters' latest coordinates (private.counted_positions(), counted_reports.sql),
-- stored only once at least median_min_reporters() distinct counted reporters gave coordinates. Derived
-- from price_reports alone, like the median store, and kept by its hooks (median_store.sql,
-- maintenance.sql: private.community_places_refresh() in places.sql); searches read it through its
-- GiST index (places_nearest, places.sql), and only for ids no import places. The owner's only: a
-- report's coordinates are never returned, and a stored median of fewer than the threshold does not exist.
create table private.community_places (
    location_id text primary key,
    lat double precision not null,
    lng double precision not null,
    reporters integer not null,
    geog extensions.geography generated always as
        (extensions.st_setsrid(extensions.st_makepoint(lng, lat), 4326)::extensions.geography) stored,
    refreshed_at timestamptz not null,
    constraint community_places_lat_range check (lat >= -90 and lat <= 90),
    constraint community_places_lng_range check (lng >= -180 and lng <= 180)
);
create index community_places_geog on private.community_places using gist (geog);

-- Which locations have any report with coordinates: one probe each, so refreshing a location's community
-- place (places.sql) costs nothing where no report gave coordinates. Building it reads every report while
-- inserts wait (a SHARE lock); on a large live table build it first, outside migrate, with
-- `create index concurrently price_reports_positions_idx on public.price_reports (location_id) where lat
-- is not null` (docs/upgrading.md, "Expand and contract"), and this statement finds it there.
create index if not exists price_reports_positions_idx on public.price_reports (location_id) where lat is not null;
