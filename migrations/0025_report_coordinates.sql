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

-- Where the community puts a location id: one row per location with any report carrying coordinates,
-- written by private.community_places_refresh() (places.sql) from price_reports alone, like the median
-- store, and kept by its hooks (median_store.sql, maintenance.sql). A row is the rule's answer (the
-- per-coordinate median, percentile_cont 0.5, of the counted reporters' latest coordinates:
-- private.counted_positions(), counted_reports.sql; lat and lng null while fewer than
-- median_min_reporters() gave them) for every instant in [refreshed_at, valid_until): valid_until is the
-- first instant at which time alone could change it (a report maturing, or one leaving the window).
-- Searches (places_nearest, places.sql) read a row inside that span through the GiST index, and compute
-- the others from the counted positions at their own instant, found by the valid_until index and the
-- location's box (the least and greatest lat and lng any of its reports gave, which holds every median
-- those reports can make). The owner's only: a report's coordinates are never returned.
create table private.community_places (
    location_id text primary key,
    lat double precision,
    lng double precision,
    reporters integer not null,
    geog extensions.geography generated always as
        (extensions.st_setsrid(extensions.st_makepoint(lng, lat), 4326)::extensions.geography) stored,
    refreshed_at timestamptz not null,
    valid_until timestamptz not null,
    min_lat double precision not null,
    max_lat double precision not null,
    min_lng double precision not null,
    max_lng double precision not null,
    constraint community_places_placed_together check ((lat is null) = (lng is null)),
    constraint community_places_lat_range check (lat >= -90 and lat <= 90),
    constraint community_places_lng_range check (lng >= -180 and lng <= 180),
    constraint community_places_valid_span check (valid_until > refreshed_at)
);
create index community_places_geog on private.community_places using gist (geog);
create index community_places_valid_until on private.community_places (valid_until);
create index community_places_refreshed_at on private.community_places (refreshed_at);

-- Which locations have any report with coordinates: one probe each, so refreshing a location's community
-- place (places.sql) costs nothing where no report gave coordinates. Building it reads every report while
-- inserts wait (a SHARE lock); on a large live table build it first, outside migrate, with
-- `create index concurrently price_reports_positions_idx on public.price_reports (location_id) where lat
-- is not null` (docs/upgrading.md, "Expand and contract"), and this statement finds it there.
create index if not exists price_reports_positions_idx on public.price_reports (location_id) where lat is not null;
