-- Places (issue 34): where each location id is, so an app can ask "what does parking cost near here?"
-- by position instead of by id. PostGIS and pg_trgm (Debian's postgresql-15-postgis-3 and
-- postgresql-contrib) live in the extensions schema beside pgcrypto, never in public; the functions that
-- use them (places.sql) name every object as extensions.*.
create extension if not exists postgis with schema extensions;
create extension if not exists pg_trgm with schema extensions;

-- One row per place a source gives a location id: a CDS feed's zone polygon (`pricesvc import-rates`),
-- a GeoJSON feature (`pricesvc import-places`). A re-import replaces the source's rows in one
-- transaction. The geometry is WGS 84 (SRID 4326) as the file gave it, a point, polygon or multipolygon;
-- geog is the same shape on the sphere, which the GiST index orders by distance (`<->`), and lat/lng a
-- point on the place (its point, or a point inside its polygon), which is what searches return.
create table private.places (
    source text not null,
    location_id text not null,
    name text,
    kind text not null,
    geom extensions.geometry(Geometry, 4326) not null,
    geog extensions.geography generated always as (geom::extensions.geography) stored,
    lat double precision generated always as (extensions.st_y(extensions.st_pointonsurface(geom))) stored,
    lng double precision generated always as (extensions.st_x(extensions.st_pointonsurface(geom))) stored,
    imported_at timestamptz not null default now(),
    primary key (source, location_id),
    constraint places_kind_known check (kind in ('curb_zone', 'parking')),
    constraint places_geometry_type check (extensions.geometrytype(geom) in ('POINT', 'POLYGON', 'MULTIPOLYGON')),
    constraint places_geometry_valid check (not extensions.st_isempty(geom))
);
create index places_geog on private.places using gist (geog);
create index places_location_id on private.places (location_id);

-- One row of public.places_nearby: a type, since its arguments lat and lng are also its columns (a
-- function's parameters, RETURNS TABLE's columns among them, need distinct names).
create type private.nearby_place as (
    location_id text,
    name text,
    source text,
    kind text,
    lat double precision,
    lng double precision,
    distance_m integer,
    median_cents integer,
    reporters integer,
    currency text,
    last_reported_at timestamptz,
    published_cents bigint,
    published_allowed boolean,
    published_reason text
);
