#!/usr/bin/env bash
# Private PostgreSQL 15 cluster for development and tests.
#
#   scripts/dev/pg-cluster.sh start DIR    initdb DIR/data if missing, start it (socket in DIR, port 5432,
#                                          no TCP), create database "pricesvc"; prints PGHOST=DIR PGUSER=<su>
#   scripts/dev/pg-cluster.sh stop DIR     fast shutdown; idempotent
#   scripts/dev/pg-cluster.sh restart DIR  stop, then start (quiet)
#   scripts/dev/pg-cluster.sh destroy DIR  stop, then delete the cluster's data (a throwaway test cluster)
#   scripts/dev/pg-cluster.sh allow DIR ROLE...
#                                          let this OS user log in as ROLE too (a login role made after start)
#
# Prints nothing but errors, except the last line of `start`. When run as root the cluster runs as the
# `postgres` OS user, because initdb refuses to run as root.
#
# Private to its owner: DIR (the socket's directory), the data directory and the socket itself are mode
# 0700, owned by the OS user the server runs as, so no other local user can reach the socket; root reaches
# it anyway. Over the socket, authentication is `peer` with a map (pg_ident.conf, rewritten on every
# start): the OS user who runs this script and the server's owner may log in as the superuser,
# `authenticator` and `analyst` (make run's roles), and as the roles named with `allow`. Any other OS user,
# or any other role, is refused even with the socket in reach. PostgreSQL 15's pg_ident.conf names one
# role per line (16 adds `all`), hence the list. TCP, off unless a test adds it, needs scram-sha-256.
#
# PG_CLUSTER_THROWAWAY=1 on the first `start` (make test's own cluster only) makes a cluster that is fast and
# not crash-safe, for good (DIR/throwaway remembers it): no fsync, asynchronous commit, no full-page writes,
# initdb --no-sync. A clean stop still writes everything, but an OS crash loses the cluster, and a killed
# postmaster may lose commits already acknowledged: never for `make run`, nor for the drills that test
# durability (scripts/topology/cluster.sh, the backup and restore tests' clusters).
set -euo pipefail

PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PORT=5432

die() { echo "pg-cluster: $*" >&2; exit 1; }

usage() { die "usage: $0 start|stop|restart|destroy DIR | allow DIR ROLE..."; }

. "$(dirname "$0")/pg-extensions.sh"

[ $# -ge 2 ] || usage
cmd=$1
[ "$cmd" = allow ] || [ $# -eq 2 ] || usage
mkdir -p -- "$2"
DIR=$(cd -- "$2" && pwd -P)
# As root the server runs as `postgres`, which must reach DIR. A checkout under a private home
# (e.g. /root, mode 0700) is not reachable: then the cluster lives in a folder of its own under
# /var/tmp, named after DIR so start, stop and restart find the same one, and DIR/cluster points there.
if [ "$(id -u)" -eq 0 ] && ! runuser -u postgres -- test -x "$DIR" 2>/dev/null; then
    real=/var/tmp/pricesvc-pg-$(printf '%s' "$DIR" | sha256sum | cut -c1-16)
    # Never world-reachable, not even for the moment before the chmod below.
    (umask 077 && mkdir -p -- "$real")
    ln -sfn -- "$real" "$DIR/cluster"
    DIR=$real
fi
DATA=$DIR/data
LOG=$DIR/postgres.log

CALLER=$(id -un)
if [ "$(id -u)" -eq 0 ]; then
    SUPERUSER=postgres
    id -u postgres >/dev/null 2>&1 || die "OS user 'postgres' is missing (apt-get install postgresql)"
    as_owner() { runuser -u postgres -- "$@"; }
    chown postgres: "$DIR"
else
    SUPERUSER=$CALLER
    as_owner() { "$@"; }
fi
chmod 0700 "$DIR"

# Serialise concurrent invocations on the same DIR (two `make` targets starting the same cluster).
exec 9>"$DIR/.pg-cluster.lock"
flock 9

# Runs a command quietly; on failure shows its output and the server log tail.
quiet() {
    local out
    if ! out=$("$@" 2>&1 9>&-); then
        printf '%s\n' "$out" >&2
        [ -f "$LOG" ] && { echo "--- tail of $LOG" >&2; tail -n 20 "$LOG" >&2; }
        return 1
    fi
}

# True when a postmaster serving DATA is alive. A postmaster.pid left by a killed run may name a pid
# that is gone or now belongs to some other process (common in containers), so check the process itself.
postmaster_running() {
    [ -f "$DATA/postmaster.pid" ] || return 1
    local pid
    pid=$(head -n 1 "$DATA/postmaster.pid" 2>/dev/null || true)
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    [ -r "/proc/$pid/cmdline" ] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "postgres" || return 1
    [ "$(readlink "/proc/$pid/cwd" 2>/dev/null || true)" = "$DATA" ] && return 0
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$DATA"
}

remove_stale_lock_files() {
    rm -f -- "$DATA/postmaster.pid" "$DIR/.s.PGSQL.$PORT" "$DIR/.s.PGSQL.$PORT.lock"
}

throwaway() { [ -f "$DIR/throwaway" ]; }

write_config() {
    # Rewritten on every start so that a moved project directory still gets the right socket path.
    local durability="fsync = on
synchronous_commit = on
full_page_writes = on"
    throwaway && durability="# PG_CLUSTER_THROWAWAY=1: a test cluster, fast and not crash-safe.
fsync = off
synchronous_commit = off
full_page_writes = off"
    as_owner tee "$DATA/pricesvc.conf" >/dev/null <<EOF
# Written by scripts/dev/pg-cluster.sh; edits are overwritten on the next start.
listen_addresses = ''
port = $PORT
unix_socket_directories = '$DIR'
unix_socket_permissions = 0700
max_connections = 200
shared_buffers = 256MB
work_mem = 16MB
maintenance_work_mem = 128MB
$durability
max_wal_size = 2GB
log_min_messages = warning
log_min_error_statement = panic
log_line_prefix = '%m [%p] %q%u@%d '
timezone = 'UTC'
# The per-reporter cap counts reports by commit time (pg_xact_commit_timestamp), so a transaction held
# open cannot slip rows into the past of the sliding window. Needs a restart to change.
track_commit_timestamp = on
# WAL archiving to pgBackRest, once scripts/dev/backup.sh has set it up (it writes that file).
include_if_exists = '$DIR/pgbackrest/archive.conf'
# A test's own settings (integration/e2e/test_tls.py: ssl, a TCP address), kept across restarts.
include_if_exists = '$DIR/local.conf'
EOF
    grep -q "^include_if_exists = 'pricesvc.conf'" "$DATA/postgresql.conf" ||
        echo "include_if_exists = 'pricesvc.conf'" | as_owner tee -a "$DATA/postgresql.conf" >/dev/null
}

# Roles named by `allow`, one per line, kept across restarts.
ALLOWED=$DIR/allowed-roles

write_authentication() {
    # pg_hba.conf once, at initdb or on the first start of a cluster made before peer (a test may then
    # replace it: integration/e2e/test_tls.py); the map on every start.
    if [ ! -f "$DATA/pg_hba.by-pg-cluster" ]; then
        as_owner tee "$DATA/pg_hba.conf" >/dev/null <<EOF
# Written by scripts/dev/pg-cluster.sh. The socket: peer, through the map in pg_ident.conf.
# TCP (off unless listen_addresses is set): a password, scram-sha-256.
local all all peer map=pricesvc
host all all 127.0.0.1/32 scram-sha-256
host all all ::1/128 scram-sha-256
EOF
        as_owner touch "$DATA/pg_hba.by-pg-cluster"
    fi
    local roles os_users os_user role
    roles=$( { printf '%s\n' "$SUPERUSER" authenticator analyst; cat -- "$ALLOWED" 2>/dev/null || true; } | sort -u)
    os_users=$(printf '%s\n' "$CALLER" "$(as_owner id -un)" | sort -u)
    {
        echo "# Written by scripts/dev/pg-cluster.sh on every start and by its allow command; edits are overwritten."
        echo "# MAPNAME SYSTEM-USERNAME PG-USERNAME"
        for os_user in $os_users; do
            for role in $roles; do printf 'pricesvc %s %s\n' "$os_user" "$role"; done
        done
    } | as_owner tee "$DATA/pg_ident.conf" >/dev/null
}

# True once the server's map lets this OS user in as $1 (the role may not exist yet: that is a later error).
map_admits() {
    local out
    out=$("$PGBIN/psql" -X -h "$DIR" -p "$PORT" -U "$1" -d postgres -c 'select' 2>&1 9>&-) && return 0
    ! grep -q 'Peer authentication failed' <<<"$out"
}

allow() {
    local role
    for role in "$@"; do
        [[ $role =~ ^[a-z_][a-z0-9_]{0,62}$ ]] || die "allow: '$role' is not a plain role name"
        grep -qxF -- "$role" "$ALLOWED" 2>/dev/null || echo "$role" >>"$ALLOWED"
    done
    [ -f "$DATA/PG_VERSION" ] || return 0
    write_authentication
    postmaster_running || return 0
    psql_su -d postgres -tAc 'select pg_reload_conf()' >/dev/null
    # The postmaster reads the map again when it handles the signal: wait until it has.
    local deadline=$((SECONDS + 10))
    until map_admits "$1"; do
        [ $SECONDS -lt $deadline ] || die "allow: the server did not take the new map within 10 s"
        sleep 0.1
    done
}

psql_su() {
    "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$DIR" -p "$PORT" -U "$SUPERUSER" "$@"
}

start() {
    require_extensions
    if [ ! -f "$DATA/PG_VERSION" ]; then
        [ "${PG_CLUSTER_THROWAWAY:-0}" = 1 ] && : >"$DIR/throwaway"
        rm -rf -- "$DATA"
        install -d -m 0700 "$DATA"
        [ "$(id -u)" -eq 0 ] && chown postgres: "$DATA"
        quiet as_owner "$PGBIN/initdb" -D "$DATA" -U "$SUPERUSER" --auth-local=peer --auth-host=scram-sha-256 \
            --encoding=UTF8 --locale=C.UTF-8 --no-instructions $(throwaway && echo --no-sync) ||
            die "initdb failed"
    fi
    write_config
    write_authentication
    if postmaster_running &&
        [ "$(psql_su -d postgres -tAc 'show track_commit_timestamp' 2>/dev/null)" = off ]; then
        # A cluster started by an older version of this script: restart it so the setting above applies.
        quiet as_owner "$PGBIN/pg_ctl" -D "$DATA" -m fast -w -t 60 stop || die "could not restart the cluster in $DATA"
    fi
    if ! postmaster_running; then
        remove_stale_lock_files
        quiet as_owner "$PGBIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 start || die "could not start the cluster in $DATA"
    else
        # Already serving: it takes the files written above now.
        quiet as_owner "$PGBIN/pg_ctl" -D "$DATA" reload || die "could not reload the cluster in $DATA"
    fi
    local exists
    exists=$(psql_su -d postgres -tAc "select 1 from pg_database where datname = 'pricesvc'")
    if [ "$exists" != 1 ]; then
        quiet psql_su -d postgres -c 'create database pricesvc' ||
            # Another starter may have created it in the meantime.
            [ "$(psql_su -d postgres -tAc "select 1 from pg_database where datname = 'pricesvc'")" = 1 ] ||
            die "could not create database pricesvc"
    fi
    echo "PGHOST=$DIR PGUSER=$SUPERUSER"
}

stop() {
    [ -f "$DATA/PG_VERSION" ] || return 0
    if postmaster_running; then
        quiet as_owner "$PGBIN/pg_ctl" -D "$DATA" -m fast -w -t 60 stop || die "could not stop the cluster in $DATA"
    else
        remove_stale_lock_files
    fi
}

case $cmd in
start) start ;;
stop) stop ;;
destroy) stop; rm -rf -- "$DATA" "$LOG" "$DIR/throwaway" ;;
restart) stop; start >/dev/null ;;
allow) shift 2; allow "$@" ;;
*) usage ;;
esac
