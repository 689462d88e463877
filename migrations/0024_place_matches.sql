-- One row of public.places_match (issue 34): a type, since its argument `name` is also a column.
create type private.place_match as (
    location_id text,
    name text,
    distance_m integer,
    similarity real
);
