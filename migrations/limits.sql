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

-- Sets private.analyst_session_limits() (settings.sql) as role defaults on price_analyst and on every
-- login that is an analyst (a member of price_analyst, directly or not): a role default applies at
-- login, to the login role only, never through membership or SET ROLE. Returns the roles it changed.
-- An analyst may still lower or lift statement_timeout in a session (a user setting); temp_file_limit
-- only a superuser can change, which is also who must run this (policies.sql, on every migration that
-- applies it).
create or replace function private.limit_analyst_sessions() returns text[]
    language plpgsql volatile set search_path = ''
as $$
declare
    analyst record;
    setting pg_catalog.text;
    changed pg_catalog.text[] := '{}';
begin
    for analyst in select r.oid, r.rolname from pg_catalog.pg_roles r
                   where r.rolname = 'price_analyst'
                      or (r.rolcanlogin and not r.rolsuper and r.rolname <> 'authenticator'
                          and pg_catalog.pg_has_role(r.oid, 'price_analyst', 'member'))
                   order by r.rolname loop
        foreach setting in array private.analyst_session_limits() loop
            -- Altered only when it differs: roles are cluster-wide, shared with other databases' migrations.
            if not exists (select from pg_catalog.pg_db_role_setting s
                           where s.setrole = analyst.oid and s.setdatabase = 0
                             and setting = any (s.setconfig)) then
                execute pg_catalog.format('alter role %I set %s = %L', analyst.rolname,
                                          pg_catalog.split_part(setting, '=', 1), pg_catalog.split_part(setting, '=', 2));
                changed := changed || analyst.rolname::pg_catalog.text;
            end if;
        end loop;
    end loop;
    return array(select distinct c from pg_catalog.unnest(changed) c order by c);
end
$$;
revoke all on function private.limit_analyst_sessions() from public;
