-- places_match: an app's own candidate (a MapKit point of interest) mapped to the place everyone
-- else reports under: the places within a radius, by trigram similarity of normalised names, then nearer,
-- then by location_id, at most 5. Its bounds and who may call it.
begin;
\ir _helpers.psql
select plan(16);

create function tap.place(id text, name text, north_m double precision, east_m double precision) returns void
    language sql as $$
        insert into private.places (source, location_id, name, kind, geom)
        values ('tapmatch', id, name, 'parking',
                extensions.st_setsrid(extensions.st_makepoint(-122.3937 + east_m / (111195.0 * cos(radians(37.7955))),
                                                              37.7955 + north_m / 111195.0), 4326))
    $$;
select tap.place('tapmatch:ferry', 'Ferry Building Garage', 40, 0);
select tap.place('tapmatch:ferry-far', 'Ferry Building Garage', 120, 0);
select tap.place('tapmatch:embarcadero', 'Embarcadero Center Parking', 60, 30);
select tap.place('tapmatch:nameless', null, 10, 0);
select tap.place('tapmatch:other', 'Pier 1 Lot', 80, -20);
select tap.place('tapmatch:a', 'Lot', 100, 10);
select tap.place('tapmatch:b', 'Lot', 100, -10);
select tap.place('tapmatch:outside', 'Ferry Building Garage', 400, 0);

select is(private.places_normalised_name('  Ferry-Building   GARAGE!! '), 'ferry building garage',
          'normalised: lower case, punctuation and runs of spaces one space, trimmed');
select results_eq($$select location_id, distance_m from places_match('ferry building garage', 37.7955, -122.3937)$$,
                  $$values ('tapmatch:ferry', 40), ('tapmatch:ferry-far', 120), ('tapmatch:embarcadero', 67),
                           ('tapmatch:nameless', 10), ('tapmatch:other', 82)$$,
                  'best first: the same name, nearer first; then by similarity; then the nearer; at most 5; nothing past 150 m');
select is((select similarity from places_match('FERRY building, garage', 37.7955, -122.3937) limit 1), 1::real,
          'the same name, however written, is similarity 1');
select ok((select bool_and(similarity >= 0 and similarity <= 1) from places_match('ferry', 37.7955, -122.3937)),
          'similarity is from 0 to 1');
select results_eq($$select location_id from places_match('Lot', 37.7955, -122.3937) limit 2$$,
                  $$values ('tapmatch:a'), ('tapmatch:b')$$, 'equal similarity and distance: by location_id');
select is((select similarity from places_match('anything', 37.7955, -122.3937, 15)), 0::real,
          'a place without a name is a candidate with similarity 0');
select is((select location_id from places_match('ferry building garage', 37.7955, -122.3937, 1000) offset 2 limit 1),
          'tapmatch:outside', 'a wider radius reaches farther places');

select throws_ok($$select * from places_match(null, 0, 0)$$, '22023', 'name must be 1 to 200 characters', 'a null name');
select throws_ok($$select * from places_match(repeat('x', 201), 0, 0)$$, '22023', 'name must be 1 to 200 characters', 'a long name');
select throws_ok($$select * from places_match('--', 0, 0)$$, '22023', 'name must contain a letter or a digit', 'a name of punctuation');
select throws_ok($$select * from places_match('x', 91, 0)$$, '22023', 'lat must be between -90 and 90', 'lat');
select throws_ok($$select * from places_match('x', 0, 181)$$, '22023', 'lng must be between -180 and 180', 'lng');
select throws_ok($$select * from places_match('x', 0, 0, 1001)$$, '22023', 'radius_m must be between 1 and 1000', 'radius_m');
select function_privs_are('public', 'places_match', array['text', 'double precision', 'double precision', 'integer'],
                          'authenticated', array['EXECUTE']);
select function_privs_are('public', 'places_match', array['text', 'double precision', 'double precision', 'integer'],
                          'price_analyst', array['EXECUTE']);
select function_privs_are('public', 'places_match', array['text', 'double precision', 'double precision', 'integer'],
                          'anon', array[]::text[]);

select * from finish();
rollback;
