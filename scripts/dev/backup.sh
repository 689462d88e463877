#!/usr/bin/env bash
# Backups of the single-node database of scripts/dev/pg-cluster.sh (`make run`'s var/dev/pg) with pgBackRest:
# continuous WAL archiving, full and incremental backups, restore to the latest point or to a time.
# The first backup writes this directory's pgBackRest configuration and turns archiving on; everything
# else is scripts/ops/pricesvc-backup (installed as pricesvc-backup), given that configuration.
#
#   scripts/dev/backup.sh backup DIR [full|incr]   a backup (default incr; the first one is full). The first
#                                                  call sets up archiving, which restarts PostgreSQL once.
#                                                  Prints the backup as JSON (see backups).
#   scripts/dev/backup.sh restore DIR [--to TIME] [--timeline N|latest] [--plan] [--keep-old]
#                                                  archive the live WAL, plan which timeline and backup the
#                                                  target needs and refuse (nothing stopped) unless it can
#                                                  succeed (docs/operations.md, "What restore does"); stop
#                                                  PostgreSQL, set the data directory aside, restore, replay
#                                                  the archived WAL to TIME or the timeline's end, promote,
#                                                  start, remove the old directory; then a full backup of
#                                                  the new timeline. Prints {"target", "restored_backup",
#                                                  "from_timeline", "timeline", "recovered_to_lsn",
#                                                  "wal_replayed_bytes", "restore_seconds", "backup_after_restore"}.
#   scripts/dev/backup.sh backups DIR              {"stanza", "repository", "archive": {"min", "max"},
#                                                  "timelines": [...], "backups": [{"label", "type",
#                                                  "timeline", "start", "stop", "size_bytes",
#                                                  "stored_bytes", "wal_start", "wal_stop", ...}]}
#
# DIR is the directory given to scripts/dev/pg-cluster.sh. Settings, read by the first backup and kept in
# DIR/pgbackrest/pgbackrest.conf: BACKUP_REPO (the repository; default DIR/backups, which is on the
# database's own disk: in production a volume of another machine, or object storage, see
# docs/operations.md), BACKUP_RETENTION_DAYS (every point of
# the last 14 days stays restorable), BACKUP_ARCHIVE_TIMEOUT (seconds
# after which a partly filled WAL segment is archived anyway: the recovery point objective, 60),
# BACKUP_CIPHER_PASS_FILE (the repository's encryption passphrase; default DIR/pgbackrest/repo-cipher-pass,
# generated on the first backup, mode 0600, never inside the repository: keep a copy apart from the
# backups, since without it they cannot be restored; docs/operations.md).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd -P)
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PORT=5432
STANZA=pricesvc

die() { echo "backup: $*" >&2; exit 1; }
usage() { die "usage: $0 backup DIR [full|incr] | restore DIR [--to TIME] [--timeline N|latest] [--plan] [--keep-old] | backups DIR"; }

[ $# -ge 2 ] || usage
cmd=$1
[ -d "$2" ] || die "no database directory $2 (scripts/dev/pg-cluster.sh start $2)"
GIVEN=$(cd -- "$2" && pwd -P)
shift 2
# As scripts/dev/pg-cluster.sh: as root a DIR the postgres user cannot reach has its cluster under /var/tmp.
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
# shellcheck source=scripts/ops/backup-lib.sh
. "$ROOT/scripts/ops/backup-lib.sh"
export BACKUP_INFO_CACHE=$GIVEN/backup-info-cache.json  # what archived WAL says, read once (backup-info.py)
command -v pgbackrest >/dev/null || die "pgbackrest is not installed (scripts/dev/install-deps.sh)"

psql_su() { "$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 -h "$DIR" -p "$PORT" -U "$SUPERUSER" -d postgres "$@"; }

running() { psql_su -c 'select 1' >/dev/null 2>&1; }

# First backup: the pgBackRest configuration, the archive settings scripts/dev/pg-cluster.sh includes, a
# restart (archive_mode needs one), the stanza, and a check that a WAL segment reaches the repository.
setup() {
    [ -f "$PGBR_CONF" ] && return 0
    [ -f "$DATA/PG_VERSION" ] || die "no database in $DATA (scripts/dev/pg-cluster.sh start $GIVEN)"
    local repo=${BACKUP_REPO:-$DIR/backups}
    mkdir -p -- "$repo" "$CONF_DIR"/{log,spool,lock}
    [ "$(id -u)" -eq 0 ] && chown postgres: "$repo" "$CONF_DIR" "$CONF_DIR"/{log,spool,lock}
    chmod 0750 "$repo" "$CONF_DIR"
    # The repository is encrypted (aes-256-cbc): it holds the signing keys and session ids in every backup
    # and in the WAL archive, so a reader of it could otherwise mint any identity. The passphrase is
    # generated once, into a file of its own outside the repository.
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
# Written by scripts/dev/backup.sh on the first backup; docs/operations.md explains each choice.
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
# Written by scripts/dev/backup.sh; included by the pricesvc.conf of scripts/dev/pg-cluster.sh.
archive_mode = on
archive_command = 'pgbackrest --config=$PGBR_CONF --stanza=$STANZA archive-push %p'
archive_timeout = ${BACKUP_ARCHIVE_TIMEOUT:-60}
EOF
    chmod 0600 "$PGBR_CONF.new"
    mv "$PGBR_CONF.new" "$PGBR_CONF"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$PGBR_CONF" "$CONF_DIR/archive.conf" "$pass_file"
    "$ROOT/scripts/dev/pg-cluster.sh" restart "$GIVEN"
    [ "$(psql_su -c 'show archive_mode')" = on ] || die "archive_mode did not come on"
    pgbr stanza-create
    pgbr check
}

# The rest is pricesvc-backup's (the installed tool, one implementation), told how this directory's
# PostgreSQL starts and stops.
tool() {
    BACKUP_STOP_COMMAND="$(printf '%q stop %q' "$ROOT/scripts/dev/pg-cluster.sh" "$GIVEN")" \
    BACKUP_START_COMMAND="$(printf '%q start %q' "$ROOT/scripts/dev/pg-cluster.sh" "$GIVEN")" \
    BACKUP_OS_USER=postgres PGBIN=$PGBIN \
        "$ROOT/scripts/ops/pricesvc-backup" --config "$PGBR_CONF" --stanza "$STANZA" "$@"
}

backup() {
    [[ ${1:-incr} =~ ^(full|incr)$ ]] || usage
    running || die "PostgreSQL is not running in $DIR (scripts/dev/pg-cluster.sh start $GIVEN)"
    setup
    tool backup "$@"
}

backups() {
    if [ ! -f "$PGBR_CONF" ]; then
        echo '{"stanza": null, "repository": null, "archive": {"min": null, "max": null}, "status": "not set up", "backups": []}'
        return 0
    fi
    tool backups
}

restore() {
    [ -f "$PGBR_CONF" ] || die "no backups of $DIR (scripts/dev/backup.sh backup $GIVEN full)"
    tool restore "$@"
}

case $cmd in
backup) [ $# -le 1 ] || usage; backup "$@" ;;
restore) restore "$@" ;;
backups) [ $# -eq 0 ] || usage; backups ;;
*) usage ;;
esac
