-- Published rates (CDS), the loader: `pricesvc import-rates` validates the files (naming the file and
-- JSON path of any mistake) and sends one normalized document; private.cds_replace_source replaces the
-- source's data in one statement, compiles it (cds_3_compile.sql) and replaces its places (places.sql).
-- PL/pgSQL, resolved when called (file order: see cds_1_time.sql's header). It revokes EXECUTE from
-- PUBLIC as it is created and grants nothing.

-- The document: {"time_zone","currency","last_updated" (epoch ms),"author","license_url",
-- "zones":[…],"policies":[…],"rules":[…],"time_spans":[…],"rates":[…]}, one flat array per table, in
-- the tables' column names (absent keys take the CDS defaults), timestamps as epoch milliseconds. Its
-- checksum is that of its jsonb text (keys sorted), so the same data imported again is recognised
-- however the files were laid out.
-- Status 'unchanged' when the source's current data has that checksum: then nothing is written.
create or replace function private.cds_replace_source(p_source text, p_feed jsonb)
    returns table(status text, checksum text, zones integer, policies integer, rules integer,
                  time_spans integer, rates integer)
    language plpgsql volatile set search_path = ''
as $$
#variable_conflict use_column
declare
    feed_checksum pg_catalog.text := pg_catalog.encode(
        pg_catalog.sha256(pg_catalog.convert_to(p_feed::pg_catalog.text, 'UTF8')), 'hex');
    previous cds.sources;
    feed_time_zone pg_catalog.text := p_feed ->> 'time_zone';
    epoch constant pg_catalog.timestamptz := '1970-01-01 00:00:00+00';
    ms constant pg_catalog.interval := pg_catalog.make_interval(secs => 0.001);
begin
    if not exists (select from pg_catalog.pg_timezone_names z where z.name = feed_time_zone) then
        raise exception using errcode = '22023',
            message = pg_catalog.format('unknown IANA time zone %L', feed_time_zone);
    end if;

    -- Concurrent imports of one source take turns on its row; a new source's row is made first.
    insert into cds.sources as s (source, time_zone, currency, last_updated, checksum, imported_at)
    values (p_source, feed_time_zone, p_feed ->> 'currency', epoch, '', pg_catalog.clock_timestamp())
    on conflict (source) do nothing;
    select s.* into previous from cds.sources s where s.source = p_source for update;

    if previous.checksum = feed_checksum then
        return query
        select 'unchanged'::pg_catalog.text, i.checksum, i.zones, i.policies, i.rules, i.time_spans, i.rates
        from cds.imports i where i.source = p_source order by i.id desc limit 1;
        return;
    end if;

    delete from cds.zones z where z.source = p_source;
    delete from cds.policies p where p.source = p_source;

    update cds.sources s
    set time_zone = feed_time_zone, currency = p_feed ->> 'currency',
        last_updated = epoch + (p_feed ->> 'last_updated')::pg_catalog.int8 * ms,
        author = p_feed ->> 'author', license_url = p_feed ->> 'license_url',
        checksum = feed_checksum, imported_at = pg_catalog.clock_timestamp()
    where s.source = p_source;

    insert into cds.policies (source, curb_policy_id, priority, published_date, data_source_operator_ids)
    select p_source, x.curb_policy_id, x.priority, epoch + x.published_date * ms, x.data_source_operator_ids
    from pg_catalog.jsonb_to_recordset(p_feed -> 'policies')
         as x(curb_policy_id pg_catalog.uuid, priority integer, published_date pg_catalog.int8,
              data_source_operator_ids pg_catalog.uuid[]);

    insert into cds.rules (source, curb_policy_id, rule_index, activity, max_stay, max_stay_unit, no_return,
                           no_return_unit, user_classes)
    select p_source, x.curb_policy_id, x.rule_index, x.activity, x.max_stay, coalesce(x.max_stay_unit, 'minute'),
           x.no_return, coalesce(x.no_return_unit, 'minute'), x.user_classes
    from pg_catalog.jsonb_to_recordset(p_feed -> 'rules')
         as x(curb_policy_id pg_catalog.uuid, rule_index integer, activity pg_catalog.text, max_stay integer,
              max_stay_unit pg_catalog.text, no_return integer, no_return_unit pg_catalog.text,
              user_classes pg_catalog.text[]);

    insert into cds.rates (source, curb_policy_id, rule_index, rate_index, rate, rate_unit, rate_unit_period,
                           increment_duration, increment_amount, start_duration, end_duration, maximum_fee)
    select p_source, x.curb_policy_id, x.rule_index, x.rate_index, x.rate, x.rate_unit,
           coalesce(x.rate_unit_period, 'rolling'), x.increment_duration, x.increment_amount,
           coalesce(x.start_duration, 0), x.end_duration, x.maximum_fee
    from pg_catalog.jsonb_to_recordset(p_feed -> 'rates')
         as x(curb_policy_id pg_catalog.uuid, rule_index integer, rate_index integer, rate integer,
              rate_unit pg_catalog.text, rate_unit_period pg_catalog.text, increment_duration integer,
              increment_amount integer, start_duration integer, end_duration integer, maximum_fee integer);

    insert into cds.time_spans (source, curb_policy_id, span_index, days_of_week, days_of_month, months,
                                time_of_day_start, time_of_day_end, start_date, end_date, designated_period,
                                designated_period_except)
    select p_source, x.curb_policy_id, x.span_index, x.days_of_week, x.days_of_month, x.months,
           x.time_of_day_start::pg_catalog.time, x.time_of_day_end::pg_catalog.time,
           epoch + x.start_date * ms, epoch + x.end_date * ms, x.designated_period,
           coalesce(x.designated_period_except, false)
    from pg_catalog.jsonb_to_recordset(p_feed -> 'time_spans')
         as x(curb_policy_id pg_catalog.uuid, span_index integer, days_of_week pg_catalog.text[],
              days_of_month integer[], months integer[], time_of_day_start pg_catalog.text,
              time_of_day_end pg_catalog.text, start_date pg_catalog.int8, end_date pg_catalog.int8,
              designated_period pg_catalog.text, designated_period_except boolean);

    insert into cds.zones (source, curb_zone_id, location_id, user_zone_id, name, start_date, end_date,
                           published_date, last_updated_date)
    select p_source, x.curb_zone_id, x.location_id, x.user_zone_id, x.name, epoch + x.start_date * ms,
           epoch + x.end_date * ms, epoch + x.published_date * ms, epoch + x.last_updated_date * ms
    from pg_catalog.jsonb_to_recordset(p_feed -> 'zones')
         as x(curb_zone_id pg_catalog.uuid, location_id pg_catalog.text, user_zone_id pg_catalog.text,
              name pg_catalog.text, start_date pg_catalog.int8, end_date pg_catalog.int8,
              published_date pg_catalog.int8, last_updated_date pg_catalog.int8);

    -- Each location id's place: its zone's polygon (of the zone valid now, else the latest), replacing the
    -- source's places in this transaction (places.sql).
    perform private.places_replace_zones(p_source, p_feed -> 'zones');

    insert into cds.zone_policies (source, curb_zone_id, curb_policy_id)
    select distinct p_source, x.curb_zone_id, pg_catalog.unnest(x.curb_policy_ids)
    from pg_catalog.jsonb_to_recordset(p_feed -> 'zones')
         as x(curb_zone_id pg_catalog.uuid, curb_policy_ids pg_catalog.uuid[]);

    perform private.cds_compile_source(p_source);

    insert into cds.imports (source, imported_at, last_updated, author, license_url, checksum,
                             zones, policies, rules, time_spans, rates)
    select s.source, s.imported_at, s.last_updated, s.author, s.license_url, s.checksum,
           pg_catalog.jsonb_array_length(p_feed -> 'zones'), pg_catalog.jsonb_array_length(p_feed -> 'policies'),
           pg_catalog.jsonb_array_length(p_feed -> 'rules'), pg_catalog.jsonb_array_length(p_feed -> 'time_spans'),
           pg_catalog.jsonb_array_length(p_feed -> 'rates')
    from cds.sources s where s.source = p_source;

    return query
    select 'imported'::pg_catalog.text, i.checksum, i.zones, i.policies, i.rules, i.time_spans, i.rates
    from cds.imports i where i.source = p_source order by i.id desc limit 1;
end
$$;
revoke all on function private.cds_replace_source(text, jsonb) from public;
