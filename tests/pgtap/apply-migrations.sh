#!/usr/bin/env bash
# Development helper: applies migrations/*.sql in filename order (policies.sql last), each in its own
# transaction, as the superuser, recording them like `pricesvc migrate` does. The real runner is Swift.
#   tests/pgtap/apply-migrations.sh 'postgresql:///pricesvc?host=DIR&user=postgres'
set -euo pipefail
url=${1:?usage: $0 CONNINFO}
root=$(cd "$(dirname "$0")/../.." && pwd)
psql_run() { psql -X -q -v ON_ERROR_STOP=1 --no-psqlrc "$url" "$@"; }
files=()
for f in "$root"/migrations/[0-9]*.sql; do files+=("$f"); done
files+=("$root/migrations/policies.sql")
for f in "${files[@]}"; do
    name=$(basename "$f")
    sum=$(sha256sum "$f" | cut -d' ' -f1)
    if [ "$name" != policies.sql ] && [ "$(psql_run -tAc "select 1 from pricesvc_meta.schema_migrations where name = '$name'" 2>/dev/null)" = 1 ]; then
        continue
    fi
    { echo 'begin;'; cat "$f"; echo;
      echo "insert into pricesvc_meta.schema_migrations (name, checksum) values ('$name', '$sum')
            on conflict (name) do update set checksum = excluded.checksum, applied_at = now();";
      echo 'commit;'; } | psql_run -o /dev/null
done
