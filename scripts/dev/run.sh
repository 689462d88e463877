#!/usr/bin/env bash
# `make run`: private PostgreSQL under var/dev, migrations, then pricesvc in the foreground.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd -P)
bin=$root/.build/release/pricesvc
# RUN_STATE_DIR lets the end-to-end test run this script beside a developer's own var/dev.
state=${RUN_STATE_DIR:-$root/var/dev}
mkdir -p "$state"

# The JWT secret is made once and kept (0600); it is what makes tokens and the anon key valid.
secret_file=$state/jwt-secret
if [ ! -s "$secret_file" ]; then
  (umask 077; head -c 48 /dev/urandom | base64 -w0 | tr '+/' '-_' > "$secret_file")
fi
export PRICESVC_JWT_SECRET_FILE=$secret_file

eval "$(scripts/dev/pg-cluster.sh start "$state/pg" | tail -n 1)"   # sets PGHOST, PGUSER
owner_url="postgresql:///pricesvc?host=$PGHOST&user=$PGUSER"
export PRICESVC_DATABASE_URL="postgresql:///pricesvc?host=$PGHOST&user=authenticator"
export PRICESVC_LISTEN=${PRICESVC_LISTEN:-127.0.0.1:8080}

"$bin" migrate --migration-database-url "$owner_url"

# A login role in price_analyst, as README "Analysts" describes: it can read medians and nothing else.
# The cluster's socket takes peer authentication (its map names analyst), so it needs no password here.
psql -X -q -v ON_ERROR_STOP=1 "$owner_url" -c "do \$\$ begin
  if not exists (select from pg_catalog.pg_roles where rolname = 'analyst') then
    create role analyst login in role price_analyst;
  end if; end \$\$" -c "select private.limit_analyst_sessions()" >/dev/null

cat <<INFO

  pricesvc is starting at  http://$(scripts/dev/listen-url.sh "$PRICESVC_LISTEN")
  anon key (apikey):       $("$bin" keys)
  analyst's psql:          psql "postgresql:///pricesvc?host=$PGHOST&user=analyst" -c "select * from public.price_median_overview()"
  superuser's psql:        psql "postgresql:///pricesvc?host=$PGHOST&user=$PGUSER"
  demo data:               make demo   (in another terminal, once this serves: medians to look at)

  Another port: PRICESVC_LISTEN=127.0.0.1:9000 make run (and the same for make demo).
  Stop with Ctrl-C. The database keeps running in $state/pg; 'make stop' stops it.

INFO
exec "$bin" serve
