#!/usr/bin/env bash
# The hourly cap is exact under concurrency: 50 inserts from one reporter on 50 separate connections,
# released at the same instant, admit exactly 10 rows; the other 40 get PT429.
#
#   integration/concurrency/parallel_inserts.sh ['postgresql:///pricesvc?host=DIR&user=<superuser>']
#
# The clients connect as authenticator and switch identity exactly like the service (set role +
# signed token). The token is signed in SQL with the installed current key (a temporary key is
# installed, and removed afterwards, only when none is). Rows written by the test are deleted at the end.
# Prints TAP; exits non-zero when an assertion fails.
set -uo pipefail

owner_url=${1:-"postgresql:///${PGDATABASE:-pricesvc}?host=${PGHOST:?set PGHOST or pass a URL}&user=${PGUSER:-$(id -un)}"}
if [[ $owner_url == *user=* ]]; then
    service_url=$(sed -E 's/([?&])user=[^&]*/\1user=authenticator/' <<<"$owner_url")
elif [[ $owner_url == *\?* ]]; then
    service_url="$owner_url&user=authenticator"
else
    service_url="$owner_url?user=authenticator"
fi
CLIENTS=50

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
owner() { psql -X -q -A -t -v ON_ERROR_STOP=1 "$owner_url" "$@"; }

reporter=$(owner -c "select gen_random_uuid()") || { echo "Bail out! cannot reach the database as owner"; exit 1; }
# A user with a live session, as sign-up leaves it: auth.jwt() refuses tokens of unknown sessions.
session=$(owner -v reporter="$reporter" <<'SQL'
insert into auth.users (id) values (:'reporter');
insert into auth.sessions (user_id) values (:'reporter') returning id;
SQL
) || { echo "Bail out! cannot create the reporter's session"; exit 1; }
temporary_key=$(owner -c "select not exists (select from auth.signing_keys where slot = 'current')")
if [ "$temporary_key" = t ]; then
    owner -c "select auth.install_signing_keys(extensions.gen_random_bytes(32))" >/dev/null
fi
token=$(owner -v reporter="$reporter" -v session="$session" <<'SQL'
with parts as (
    select private.base64url_encode(convert_to('{"alg":"HS256","typ":"JWT"}', 'UTF8')) as header,
           private.base64url_encode(convert_to(json_build_object(
               'sub', :'reporter', 'session_id', :'session', 'role', 'authenticated', 'aud', 'authenticated',
               'exp', floor(extract(epoch from now() + interval '10 minutes')))::text, 'UTF8')) as payload
)
select p.header || '.' || p.payload || '.' ||
       private.base64url_encode(extensions.hmac(convert_to(p.header || '.' || p.payload, 'UTF8'), k.secret, 'sha256'))
from parts p, auth.signing_keys k where k.slot = 'current';
SQL
)

cleanup() {
    owner -v reporter="$reporter" <<<"delete from public.price_reports where reporter_id = :'reporter'; delete from auth.users where id = :'reporter'" >/dev/null
    owner -c "drop table if exists public.concurrency_gate" >/dev/null
    [ "$temporary_key" = t ] && owner -c "delete from auth.signing_keys" >/dev/null
}

# The gate: the owner holds an exclusive lock on a one-off table until all clients are connected and
# queued on it. (Not an advisory lock: only the owner may take those, and the clients are authenticator.)
owner -c "create table public.concurrency_gate (); grant select on public.concurrency_gate to authenticator" ||
    { echo "Bail out! cannot create the gate table"; exit 1; }
# psql variables are not visible inside DO bodies; the gate gets its numbers as settings.
GATE_LOCKED="$work/locked" PGOPTIONS="-c gate.clients=$CLIENTS" \
    owner >"$work/gate.out" 2>&1 <<'SQL' &
begin;
lock table public.concurrency_gate in access exclusive mode;
\! touch "$GATE_LOCKED"
do $$
declare
    deadline timestamptz := clock_timestamp() + interval '60 seconds';
begin
    while (select count(*) from pg_locks where locktype = 'relation' and not granted
           and relation = 'public.concurrency_gate'::regclass) < current_setting('gate.clients')::int loop
        if clock_timestamp() > deadline then
            raise exception 'only % clients arrived', (select count(*) from pg_locks where locktype = 'relation'
                                                       and not granted and relation = 'public.concurrency_gate'::regclass);
        end if;
        perform pg_sleep(0.02);
    end loop;
end
$$;
commit;
SQL
gate=$!
# Clients start only once the gate is closed, so none slips through early.
# Within 5 s, or the test fails here: clients sent past an open gate would prove nothing.
for _ in $(seq 1 500); do [ -e "$work/locked" ] && break; sleep 0.01; done
[ -e "$work/locked" ] || { echo "Bail out! the gate was not closed within 5 s:"; sed 's/^/# /' "$work/gate.out"; exit 1; }

for i in $(seq 1 $CLIENTS); do
    psql -X -q -A -t -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -v token="$token" -v i="$i" \
        "$service_url" >"$work/$i.out" 2>"$work/$i.err" <<'SQL' &
\set VERBOSITY verbose
select count(*) from public.concurrency_gate;
begin;
select set_config('role', 'authenticated', true), set_config('request.jwt', :'token', true);
insert into public.price_reports (location_id, rate_kind, price_cents) values ('concurrency:garage-' || :i, 'hourly', 100 + :i);
commit;
SQL
done

failed=0
n=0
check() { # check DESCRIPTION CONDITION...
    local description=$1; shift
    n=$((n + 1))
    if "$@"; then echo "ok $n - $description"; else echo "not ok $n - $description"; failed=$((failed + 1)); fi
}

echo "1..5"
wait "$gate"; gate_status=$?
check "all $CLIENTS clients were connected and queued before the release" test "$gate_status" -eq 0
[ "$gate_status" -eq 0 ] || sed 's/^/# /' "$work/gate.out"
wait
rows=$(owner -v reporter="$reporter" <<<"select count(*) from public.price_reports where reporter_id = :'reporter'")
limited=$(grep -l 'PT429' "$work"/*.err 2>/dev/null | wc -l)
other_errors=$(grep -L 'PT429' "$work"/*.err | xargs -r grep -l 'ERROR' | wc -l)
check "exactly 10 of $CLIENTS parallel inserts were stored (got $rows)" test "$rows" -eq 10
check "exactly 40 were refused with PT429 (got $limited)" test "$limited" -eq 40
check "no other errors (got $other_errors)" test "$other_errors" -eq 0
if [ "$other_errors" -ne 0 ]; then grep -h ERROR "$work"/*.err | sort | uniq -c | head -5 | sed 's/^/# /'; fi

# Outside READ COMMITTED the lock could not make the count exact, so the trigger refuses.
rr=$(psql -X -q -A -t -v VERBOSITY=verbose -v token="$token" "$service_url" 2>&1 <<'SQL'
\set VERBOSITY verbose
begin isolation level repeatable read;
select set_config('role', 'authenticated', true), set_config('request.jwt', :'token', true);
insert into public.price_reports (location_id, rate_kind, price_cents) values ('concurrency:rr', 'hourly', 100);
rollback;
SQL
)
check "an insert in a REPEATABLE READ transaction is refused (0A000)" grep -q '0A000' <<<"$rr"

cleanup
echo "# $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
