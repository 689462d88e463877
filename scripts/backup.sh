#!/usr/bin/env bash
# Backups of the single-node database of scripts/pg-cluster.sh (`make run`'s var/dev/pg) with pgBackRest:
# continuous WAL archiving, full and incremental backups, restore to the latest point or to a time.
#
#   scripts/backup.sh backup DIR [full|incr]   a backup (default incr; the first one is full). The first
#                                              call sets up archiving, which restarts PostgreSQL once.
#                                              Prints the backup as JSON (see backups).
#   scripts/backup.sh restore DIR [--to TIME] [--timeline N|latest] [--plan] [--keep-old]
#                                              archive the live WAL, plan which timeline and backup the
#                                              target needs and refuse (nothing stopped) unless it can
#                                              succeed (docs/operations.md, "What restore does"); stop
#                                              PostgreSQL, set the data directory aside, restore, replay
#                                              the archived WAL to TIME or the timeline's end, promote,
#                                              start, remove the old directory; then a full backup of
#                                              the new timeline. Prints {"target", "restored_backup",
#                                              "from_timeline", "timeline", "recovered_to_lsn",
#                                              "wal_replayed_bytes", "restore_seconds", "backup_after_restore"}.
#   scripts/backup.sh backups DIR              {"stanza", "repository", "archive": {"min", "max"},
#                                              "timelines": [...], "backups": [{"label", "type",
#                                              "timeline", "start", "stop", "size_bytes",
#                                              "stored_bytes", "wal_start", "wal_stop", ...}]}
#
# DIR is the directory given to scripts/pg-cluster.sh. Settings, read by the first backup and kept in
# DIR/pgbackrest/pgbackrest.conf: BACKUP_REPO (the repository; default DIR/backups, which is on the
# database's own disk: in production a volume of another machine, or object storage, see
# docs/operations.md), BACKUP_RETENTION_DAYS (every point of
# the last 14 days stays restorable), BACKUP_ARCHIVE_TIMEOUT (seconds
# after which a partly filled WAL segment is archived anyway: the recovery point objective, 60),
# BACKUP_CIPHER_PASS_FILE (the repository's encryption passphrase; default DIR/pgbackrest/repo-cipher-pass,
# generated on the first backup, mode 0600, never inside the repository: keep a copy apart from the
# backups, since without it they cannot be restored; docs/operations.md).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd -P)
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PORT=5432
STANZA=pricesvc

die() { echo "backup: $*" >&2; exit 1; }
usage() { die "usage: $0 backup DIR [full|incr] | restore DIR [--to TIME] [--timeline N|latest] [--plan] [--keep-old] | backups DIR"; }

[ $# -ge 2 ] || usage
cmd=$1
[ -d "$2" ] || die "no database directory $2 (scripts/pg-cluster.sh start $2)"
GIVEN=$(cd -- "$2" && pwd -P)
shift 2
# As scripts/pg-cluster.sh: as root a DIR the postgres user cannot reach has its cluster under /var/tmp.
DIR=$GIVEN
if [ "$(id -u)" -eq 0 ]; then
    id -u postgres >/dev/null 2>&1 || die "OS user 'postgres' is missing"
    runuser -u postgres -- test -x "$DIR" 2>/dev/null ||
        DIR=/var/tmp/pricesvc-pg-$(printf '%s' "$GIVEN" | sha256sum | cut -c1-16)
    SUPERUSER=postgres
    AS_DB=(runuser -u postgres --)
else
    SUPERUSER=$(id -un)
    AS_DB=()
fi
DATA=$DIR/data
CONF_DIR=$DIR/pgbackrest
PGBR_CONF=$CONF_DIR/pgbackrest.conf
# shellcheck source=scripts/backup-lib.sh
. "$ROOT/scripts/backup-lib.sh"
export BACKUP_INFO_CACHE=$GIVEN/backup-info-cache.json  # what archived WAL says, read once (backup-info.py)
command -v pgbackrest >/dev/null || die "pgbackrest is not installed (scripts/install-deps.sh)"

psql_su() { "$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$DIR" -p "$PORT" -U "$SUPERUSER" -d postgres "$@"; }

running() { psql_su -c 'select 1' >/dev/null 2>&1; }

repository() { sed -n 's/^repo1-path=//p' "$PGBR_CONF"; }

# First backup: the pgBackRest configuration, the archive settings scripts/pg-cluster.sh includes, a
# restart (archive_mode needs one), the stanza, and a check that a WAL segment reaches the repository.
setup() {
    [ -f "$PGBR_CONF" ] && return 0
    [ -f "$DATA/PG_VERSION" ] || die "no database in $DATA (scripts/pg-cluster.sh start $GIVEN)"
    local repo=${BACKUP_REPO:-$DIR/backups}
    mkdir -p -- "$repo" "$CONF_DIR"/{log,spool,lock}
    [ "$(id -u)" -eq 0 ] && chown postgres: "$repo" "$CONF_DIR" "$CONF_DIR"/{log,spool,lock}
    chmod 0750 "$repo" "$CONF_DIR"
    # The repository is encrypted (aes-256-cbc): it holds the signing keys and session ids in every
    # backup and in the WAL archive, so a reader of it could otherwise mint any identity (issue 32,
    # reproduction 4). The passphrase is generated once, into a file of its own outside the repository.
    local pass_file=${BACKUP_CIPHER_PASS_FILE:-$CONF_DIR/repo-cipher-pass}
    if [ ! -s "$pass_file" ]; then
        (umask 077 && head -c 48 /dev/urandom | base64 -w0 >"$pass_file")
    fi
    chmod 0600 "$pass_file"
    case $(cd -- "$(dirname -- "$pass_file")" && pwd -P)/ in
    "$(cd -- "$repo" && pwd -P)"/*) die "BACKUP_CIPHER_PASS_FILE must not be inside the repository it unlocks" ;;
    esac
    (umask 077 && : >"$PGBR_CONF.new")
    cat >"$PGBR_CONF.new" <<EOF
# Written by scripts/backup.sh on the first backup; docs/operations.md explains each choice.
[global]
repo1-path=$(cd -- "$repo" && pwd -P)
# Encrypted with the passphrase in $pass_file (copied here: pgBackRest reads no passphrase file).
repo1-cipher-type=aes-256-cbc
repo1-cipher-pass=$(cat -- "$pass_file")
# Time-based retention: every point of the last BACKUP_RETENTION_DAYS days stays restorable.
repo1-retention-full-type=time
repo1-retention-full=${BACKUP_RETENTION_DAYS:-14}
compress-type=zst
start-fast=y
process-max=2
# archive_command returns once pgBackRest has the segment in the repository; the asynchronous queue
# only lets it push several at once. (No archive-push-queue-max: dropping WAL would break restores.)
archive-async=y
spool-path=$CONF_DIR/spool
lock-path=$CONF_DIR/lock
log-path=$CONF_DIR/log
log-level-console=warn
log-level-file=info

[$STANZA]
pg1-path=$DATA
pg1-socket-path=$DIR
pg1-port=$PORT
pg1-user=$SUPERUSER
EOF
    cat >"$CONF_DIR/archive.conf" <<EOF
# Written by scripts/backup.sh; included by the pricesvc.conf of scripts/pg-cluster.sh.
archive_mode = on
archive_command = 'pgbackrest --config=$PGBR_CONF --stanza=$STANZA archive-push %p'
archive_timeout = ${BACKUP_ARCHIVE_TIMEOUT:-60}
EOF
    chmod 0600 "$PGBR_CONF.new"
    mv "$PGBR_CONF.new" "$PGBR_CONF"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$PGBR_CONF" "$CONF_DIR/archive.conf" "$pass_file"
    "$ROOT/scripts/pg-cluster.sh" restart "$GIVEN"
    [ "$(psql_su -c 'show archive_mode')" = on ] || die "archive_mode did not come on"
    pgbr stanza-create
    pgbr check
}

backup() {
    local type=${1:-incr}
    [[ $type =~ ^(full|incr)$ ]] || usage
    running || die "PostgreSQL is not running in $DIR (scripts/pg-cluster.sh start $GIVEN)"
    setup
    pgbr backup --type="$type"
    pgbr_last_backup_json
}

backups() {
    if [ ! -f "$PGBR_CONF" ]; then
        echo '{"stanza": null, "repository": null, "archive": {"min": null, "max": null}, "status": "not set up", "backups": []}'
        return 0
    fi
    pgbr_backups_json "$(repository)"
}

restore() {
    parse_restore_args "$@"
    [ -f "$PGBR_CONF" ] || die "no backups of $DIR (scripts/backup.sh backup $GIVEN full)"
    local start_ns
    start_ns=$(date +%s%N)
    # Nothing is stopped until the plan says the restore can succeed. A live database first archives
    # everything up to now, so the plan sees every acknowledged commit.
    running && archive_now psql_su
    pgbr_restore_plan
    if $RESTORE_PLAN_ONLY; then
        printf '%s\n' "$RESTORE_PLAN"
        return 0
    fi
    "$ROOT/scripts/pg-cluster.sh" stop "$GIVEN"
    # The old data directory stays until the restored database serves (and with --keep-old, after).
    local aside=""
    if [ -e "$DATA" ]; then
        aside=$DIR/data.before-restore-$(date -u +%Y%m%dT%H%M%S)
        mv -- "$DATA" "$aside"
    fi
    "${AS_DB[@]}" mkdir -p -m 0700 -- "$DATA"
    pgbr restore "${RESTORE_ARGS[@]}" || die "pgbackrest restore failed${aside:+; the old data directory is $aside}"
    # Recovery: pg-cluster.sh's start returns once the database is consistent (hot standby); then the
    # WAL is replayed up to the target, and the server promotes itself to a new timeline.
    "$ROOT/scripts/pg-cluster.sh" start "$GIVEN" >/dev/null
    local deadline=$((SECONDS + ${BACKUP_RECOVERY_TIMEOUT:-3600}))
    until [ "$(psql_su -c 'select pg_is_in_recovery()' 2>/dev/null)" = f ]; do
        running || die "recovery stopped: $(tail -n 5 "$DIR/postgres.log")${aside:+; the old data directory is $aside}"
        [ $SECONDS -lt $deadline ] || die "recovery did not finish in ${BACKUP_RECOVERY_TIMEOUT:-3600}s"
        sleep 0.2
    done
    psql_su <<<"$RESET_RECOVERY_SQL" >/dev/null
    if [ -n "$aside" ]; then
        if $RESTORE_KEEP_OLD; then echo "backup: the old data directory is kept in $aside" >&2; else rm -rf -- "$aside"; fi
    fi
    local timeline switchpoint seconds
    read -r timeline switchpoint < <(recovery_end "$DATA")
    seconds=$(( ($(date +%s%N) - start_ns) / 1000000 ))
    local start_lsn
    start_lsn=$(pgbr info --output=json --set="$RESTORE_SET" | /usr/bin/python3 -c '
import json, sys
print(json.load(sys.stdin)[0]["backup"][0]["lsn"]["start"])')
    # The restored history is a new timeline: its own full backup is the base of every later one.
    pgbr backup --type=full
    local after
    after=$(pgbr_last_backup_json | /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)["label"])')
    /usr/bin/python3 -c 'import json, sys
target, restored, from_timeline, timeline, lsn, replayed, seconds, after = sys.argv[1:]
print(json.dumps({"target": target or "latest", "restored_backup": restored,
                  "from_timeline": int(from_timeline), "timeline": int(timeline),
                  "recovered_to_lsn": lsn, "wal_replayed_bytes": int(replayed),
                  "restore_seconds": round(int(seconds) / 1000, 1), "backup_after_restore": after}))' \
        "$RESTORE_TIME" "$RESTORE_SET" "$RESTORE_FROM_TIMELINE" "$timeline" "$switchpoint" \
        "$(( $(lsn_bytes "$switchpoint") - $(lsn_bytes "$start_lsn") ))" "$seconds" "$after"
}

case $cmd in
backup) [ $# -le 1 ] || usage; backup "$@" ;;
restore) restore "$@" ;;
backups) [ $# -eq 0 ] || usage; backups ;;
*) usage ;;
esac
