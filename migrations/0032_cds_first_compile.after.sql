-- The first compile of CDS sources imported before 0019_compiled_schedules.sql: every zone without a
-- schedule gets one (private.cds_compile_source(), cds_3_compile.sql), so every zone has its schedule after
-- `pricesvc migrate`. Afterwards each import compiles its own source.
--
-- Safe on a database that has them: until this step existed published_rates.sql ran the same block every
-- time it changed, and it compiles only sources with a zone whose schedule_id is null (none, where that
-- already ran). A source whose compiled tables an operator empties by hand is compiled again by its next
-- import (pricesvc import-rates), or by `select private.cds_compile_source('SOURCE')` as the owner.

do $$
declare
    stale pg_catalog.text;
begin
    for stale in select distinct z.source from cds.zones z where z.schedule_id is null order by 1 loop
        perform private.cds_compile_source(stale);
    end loop;
end
$$;
