-- Per-IP rate limits, repeatable: the token buckets behind the sign-up and refresh limits, shared by
-- every pricesvc instance (auth.rate_limit_buckets, 0002_auth_schema.sql). The per-reporter cap on
-- price reports is decided by the insert trigger, in reports.sql.

-- Takes one token from an IP's bucket (capacity `capacity`, refilled at `per_second`), or raises PT429
-- with `refusal` as the message and the hint `Retry after N seconds` (whole seconds until a token is
-- there, at least 1). The error also rolls the bucket update back, so a refused request costs nothing.
create or replace function private.take_rate_limit_token(bucket text, ip_key bytea, capacity integer,
                                                         per_second double precision, refusal text)
    returns void
    language plpgsql volatile set search_path = ''
as $$
declare
    left_over double precision;
    wait_seconds integer;
begin
    if take_rate_limit_token.ip_key is null or capacity is null or capacity < 1
       or per_second is null or per_second <= 0 then
        raise exception using errcode = '22023', message = 'rate limit needs an ip_key and a positive capacity and rate';
    end if;
    insert into auth.rate_limit_buckets as b (bucket, ip_key, tokens, updated_at)
    values (take_rate_limit_token.bucket, take_rate_limit_token.ip_key, capacity - 1, pg_catalog.clock_timestamp())
    on conflict on constraint rate_limit_buckets_pkey do update
    set tokens = least(capacity::double precision,
                       b.tokens + greatest(0, pg_catalog.date_part('epoch',
                           pg_catalog.clock_timestamp() - b.updated_at)) * per_second)
                 - 1,
        updated_at = greatest(b.updated_at, pg_catalog.clock_timestamp())
    returning b.tokens into left_over;
    if left_over < 0 then
        wait_seconds := greatest(1, pg_catalog.ceil(-left_over / per_second))::integer;
        raise exception using errcode = 'PT429', message = refusal,
            hint = pg_catalog.format('Retry after %s seconds', wait_seconds);
    end if;
end
$$;
revoke all on function private.take_rate_limit_token(text, bytea, integer, double precision, text) from public;
