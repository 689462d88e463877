#!/usr/bin/env bash
# Backup and restore of the bench database (bench/seed.sql: 1 M reports), and the recovery point
# objective under the archive settings. Not part of `make test`; docs/operations.md has its figures.
#
#   bench/backup.sh            prints one JSON object: full backup seconds and bytes, incremental after
#                              BENCH_INCR_REPORTS more reports, restore to the latest point (seconds,
#                              WAL replayed) over the live files (--delta) and into an empty data
#                              directory, and the RPO measured under a steady writer
#
# Settings: BENCH_REPORTS (1000000), BENCH_INCR_REPORTS (20000), BENCH_ARCHIVE_TIMEOUT (60: the
# archive_timeout of the measurement, read when the repository is first set up), BENCH_RPO_SECONDS
# (150: how long the writer runs; 0 skips the RPO),
# BENCH_WRITES_PER_SECOND (10). Its own PostgreSQL and repository under var/bench-backup (kept, so the
# seed happens once; delete the folder to start over).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd -P)
bin=$root/.build/release/pricesvc
state=$root/var/bench-backup
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
REPORTS=${BENCH_REPORTS:-1000000}
INCR_REPORTS=${BENCH_INCR_REPORTS:-20000}
ARCHIVE_TIMEOUT=${BENCH_ARCHIVE_TIMEOUT:-60}
RPO_SECONDS=${BENCH_RPO_SECONDS:-150}
WRITES_PER_SECOND=${BENCH_WRITES_PER_SECOND:-10}

note() { printf '%s bench/backup: %s\n' "$(date +%T)" "$*" >&2; }
die() { echo "bench/backup: $*" >&2; exit 1; }
[ -x "$bin" ] || die "no pricesvc at $bin (make build)"
mkdir -p "$state"

eval "$(scripts/dev/pg-cluster.sh start "$state/pg" | tail -n 1)"   # PGHOST, PGUSER
owner_url="postgresql:///pricesvc?host=$PGHOST&user=$PGUSER"
psql_su() { "$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$PGHOST" -U "$PGUSER" -d pricesvc "$@"; }
secret_file=$state/jwt-secret
[ -s "$secret_file" ] || (umask 077; head -c 48 /dev/urandom | base64 -w0 | tr '+/' '-_' >"$secret_file")
PRICESVC_JWT_SECRET_FILE=$secret_file "$bin" migrate --migration-database-url "$owner_url" >/dev/null
psql_su -f bench/setup.sql >/dev/null

marker="backup:$REPORTS"
if [ "$(psql_su -c "select count(*) from bench.seeded where what = '$marker'")" != 1 ]; then
  note "seeding $REPORTS reports (once)"
  psql_su -c "truncate bench.seeded" >/dev/null
  psql_su -v reports="$REPORTS" -v reporters=20000 -v locations=20000 -v popular_reports=$((REPORTS / 10)) \
    -v popular_reporters=20000 -v marker="$marker" -f bench/seed.sql >/dev/null
  psql_su -c "checkpoint" >/dev/null
fi
reports=$(psql_su -c "select count(*) from public.price_reports")
db_bytes=$(psql_su -c "select pg_database_size('pricesvc')")

backup_json() { BACKUP_ARCHIVE_TIMEOUT=$ARCHIVE_TIMEOUT scripts/dev/backup.sh backup "$state/pg" "$1"; }
field() { /usr/bin/python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

note "full backup of $reports reports ($db_bytes bytes)"
t0=$(date +%s%N); full=$(backup_json full); full_ms=$(( ($(date +%s%N) - t0) / 1000000 ))

note "$INCR_REPORTS more reports, then an incremental backup"
psql_su -c "set session_replication_role = replica" -c "insert into public.price_reports (reporter_id, location_id,
  rate_kind, price_cents, currency, created_at, reporter_matures_at)
  select md5('bench-seed-' || (1 + g % 20000))::uuid, 'bench:loc-' || lpad((1 + g % 20000)::text, 5, '0'), 'hourly',
         400 + g % 1600, 'USD', now(), now() - interval '100 days' from generate_series(1, $INCR_REPORTS) g" >/dev/null
t0=$(date +%s%N); incr=$(backup_json incr); incr_ms=$(( ($(date +%s%N) - t0) / 1000000 ))

# RPO: a steady writer; every half second, how far behind the archive is. At a moment t the archive
# holds every commit up to the end of its last segment; the RPO at t is the age of the newest commit
# that is not yet there (0 when everything is).
rpo='{"rpo_max_seconds": null, "rpo_median_seconds": null, "samples": 0}'
if [ "$RPO_SECONDS" -gt 0 ]; then
note "RPO under archive_timeout = $(psql_su -c 'show archive_timeout'), $WRITES_PER_SECOND writes/s, ${RPO_SECONDS}s"
psql_su -c "create table if not exists bench.rpo_probe (at timestamptz default clock_timestamp(), filler text)" >/dev/null
samples=$state/rpo-samples.txt
: >"$samples"
(
  n=$((RPO_SECONDS * WRITES_PER_SECOND))
  pause=$(/usr/bin/python3 -c "print(1 / $WRITES_PER_SECOND)")
  for _ in $(seq "$n"); do
    echo "insert into bench.rpo_probe (filler) values (repeat('x', 200)); select pg_sleep($pause);"
  done | psql_su >/dev/null
) &
writer=$!
deadline=$((SECONDS + RPO_SECONDS))
while [ $SECONDS -lt $deadline ]; do
  psql_su -F ' ' -c "select extract(epoch from clock_timestamp()), pg_current_wal_insert_lsn() - '0/0',
    coalesce((('x' || substr(last_archived_wal, 9, 8))::bit(32)::bigint * 4294967296
              + (('x' || substr(last_archived_wal, 17, 8))::bit(32)::bigint + 1) * 16777216), 0)
    from pg_stat_archiver" >>"$samples"
  sleep 0.5
done
wait "$writer"
rpo=$(/usr/bin/python3 - "$samples" <<'EOF'
import sys
rows = [tuple(float(x) for x in line.split()) for line in open(sys.argv[1]) if line.strip()]
lags = []
for t, _, archived in rows:
    # The newest sample whose insert position was already archived at t; the commits after it are not.
    covered = [s for s, lsn, _ in rows if s <= t and lsn <= archived]
    newest = max(covered) if covered else rows[0][0]
    lags.append(t - newest)
lags.sort()
print(f'{{"rpo_max_seconds": {lags[-1]:.1f}, "rpo_median_seconds": {lags[len(lags) // 2]:.1f}, "samples": {len(lags)}}}')
EOF
)
fi

note "restore to the latest point, over the running database's files (--delta)"
restore=$(scripts/dev/backup.sh restore "$state/pg")
after=$(psql_su -c "select count(*) from public.price_reports")
[ "$after" -ge "$((reports + INCR_REPORTS))" ] || die "restore lost reports: $after < $((reports + INCR_REPORTS))"
note "restore to the latest point into an empty data directory (the disk lost)"
data=$(psql_su -c "show data_directory")
scripts/dev/pg-cluster.sh stop "$state/pg"
rm -rf -- "$data"
restore_empty=$(scripts/dev/backup.sh restore "$state/pg")
after=$(psql_su -c "select count(*) from public.price_reports")
[ "$after" -ge "$((reports + INCR_REPORTS))" ] || die "restore lost reports: $after < $((reports + INCR_REPORTS))"

/usr/bin/python3 - "$reports" "$db_bytes" "$full" "$full_ms" "$incr" "$incr_ms" "$rpo" "$restore" "$restore_empty" \
  "$ARCHIVE_TIMEOUT" <<'EOF'
import json, sys
reports, db_bytes, full, full_ms, incr, incr_ms, rpo, restore, restore_empty, archive_timeout = sys.argv[1:]
full, incr, rpo, restore, restore_empty = map(json.loads, (full, incr, rpo, restore, restore_empty))
print(json.dumps({
    "reports": int(reports), "database_bytes": int(db_bytes),
    "full_backup_seconds": round(int(full_ms) / 1000, 1), "full_backup_bytes": full["size_bytes"],
    "full_backup_stored_bytes": full["stored_bytes"],
    "incremental_backup_seconds": round(int(incr_ms) / 1000, 1), "incremental_backup_stored_bytes": incr["stored_bytes"],
    "restore_delta_seconds": restore["restore_seconds"], "wal_replayed_bytes": restore["wal_replayed_bytes"],
    "restore_empty_seconds": restore_empty["restore_seconds"],
    "archive_timeout_seconds": int(archive_timeout), **rpo,
}))
EOF
