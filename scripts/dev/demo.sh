#!/usr/bin/env bash
# `make demo`: fills make run's database with a few car parks around San Francisco's Ferry Building
# (scripts/dev/demo-places.geojson, through `pricesvc import-places`) and a few reporters and their reports
# (scripts/dev/demo.py), so the README's median and nearby examples answer with rows. Needs `make run`
# serving, in another terminal.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd -P)
bin=$root/.build/release/pricesvc
state=${RUN_STATE_DIR:-$root/var/dev}
die() { echo "demo: $*" >&2; exit 1; }

[ -s "$state/jwt-secret" ] || die "no development database yet: start 'make run' first and leave it running"
eval "$(scripts/dev/pg-cluster.sh start "$state/pg" | tail -n 1)"   # sets PGHOST, PGUSER; a no-op when running
url=http://$(scripts/dev/listen-url.sh "${PRICESVC_LISTEN:-127.0.0.1:8080}")
curl -fsS --max-time 5 -o /dev/null "$url/readyz" ||
  die "no ready pricesvc at $url: start 'make run' first (with the same PRICESVC_LISTEN)"
"$bin" import-places --source sfmta --migration-database-url "postgresql:///pricesvc?host=$PGHOST&user=$PGUSER" \
  scripts/dev/demo-places.geojson | sed 's/^import-places/demo: import-places/'
exec python3 scripts/dev/demo.py --url "$url" --key "$("$bin" keys --jwt-secret-file "$state/jwt-secret")" \
  --pghost "$PGHOST" --pguser "$PGUSER"
