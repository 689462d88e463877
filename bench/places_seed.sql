-- One-time seed for the places rows (bench/run.sh rows 16-18), run as the superuser after the median seed
-- (psql -v places= -v reported= -v marker=): :places points in a city-sized area (San Francisco's 14 km x
-- 13 km, about 5 500 a square kilometre), source bench-places; :reported of them (20 000 by default) are
-- the seeded locations bench:loc-00001.. and so carry the seed's community reports, spread among the
-- others at random, written in geohash order as the importer writes. A 500 m search holds about 4 300 places and returns its nearest 20. Rebuilt only
-- when the shape changed (bench.seeded holds the marker).
\set ON_ERROR_STOP 1
set client_min_messages = warning;
begin;
delete from private.places where source = 'bench-places';
-- In geohash order, as private.places_replace_source writes an imported source.
insert into private.places (source, location_id, name, kind, geom)
select 'bench-places', p.location_id, p.name, 'parking', p.geom
from (select case when g <= :reported then 'bench:loc-' || lpad(g::text, 5, '0') else 'bench-places:' || g end as location_id,
             'Garage ' || g as name,
             extensions.st_setsrid(extensions.st_makepoint(-122.52 + random() * 0.16, 37.70 + random() * 0.12), 4326) as geom
      from generate_series(1, :places) g) p
order by extensions.st_geohash(p.geom);
delete from bench.seeded where what like 'places:%';
insert into bench.seeded (what) values (:'marker');
commit;
vacuum (analyze) private.places;
