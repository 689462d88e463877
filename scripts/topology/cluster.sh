#!/usr/bin/env bash
# The replicated topology of docs/deployment.md on loopback, from Debian's packages:
# one etcd, two PostgreSQL 15 nodes managed by Patroni (a leader and a synchronous standby), HAProxy
# (database read-write and read-only ports, and HTTP with the per-address request limit), and two
# stateless pricesvc instances.
#
#   scripts/topology/cluster.sh up DIR        start whatever is not running (the first time: bootstrap, create
#                                             the database, migrate); prints one JSON line (see status)
#   scripts/topology/cluster.sh status DIR    {"url", "anon_key", "owner_url", "nodes": [{name, role,
#                                             patroni_pid, postmaster_pid}], "pricesvc_pids"} with current roles
#   scripts/topology/cluster.sh failover DIR  Patroni switchover to the synchronous standby; waits until the old
#                                             leader is back as the standby; prints the status line
#   scripts/topology/cluster.sh switchover DIR  the same, by the name Patroni gives it (planned maintenance)
#   scripts/topology/cluster.sh down DIR      stops everything it started; idempotent
#
# Backups (pgBackRest, through scripts/ops/pricesvc-backup, the installed tool; the leader archives every WAL
# segment to the repository, docs/operations.md):
#   scripts/topology/cluster.sh backup DIR [full|incr]   a backup of the leader (default incr; the first is full);
#                                             prints it as JSON (one element of `backups`)
#   scripts/topology/cluster.sh backups DIR   {"stanza", "repository", "archive": {"min", "max"}, "timelines":
#                                             [{"timeline", "parent", "branched_at_lsn", "started", "reason",
#                                             "last_commit", ...}], "backups": [{"label", "type", "timeline",
#                                             "start", "stop", "size_bytes", "stored_bytes", "wal_start", ...}]}
#   scripts/topology/cluster.sh restore DIR [--to TIME] [--timeline N|latest] [--plan] [--keep-old]
#                                             (pricesvc-backup's restore with this topology's steps)
#                                             archives the leader's current WAL, plans from the repository which
#                                             timeline and backup the target needs and refuses (nothing stopped)
#                                             unless it can succeed (docs/operations.md, "What restore does");
#                                             then stops Patroni on both nodes, sets their data directories aside,
#                                             restores the leader's from the repository, recovers to TIME or the
#                                             timeline's end, lets Patroni start on it as a new cluster, removes
#                                             the old directories once pricesvc serves, takes a full backup of the
#                                             new timeline and rebuilds the standby from it. HAProxy, etcd and
#                                             pricesvc keep running: the same URLs serve again. Prints {"target",
#                                             "restored_backup", "from_timeline", "timeline", "recovered_to_lsn",
#                                             "wal_replayed_bytes", "restore_seconds", "complete_seconds",
#                                             "backup_after_restore"}, then the status line (--plan: the plan only).
#
# Only 127.0.0.1 ports are bound, picked free on the first `up` and kept in DIR/cluster.env.
# As root, Patroni and PostgreSQL run as the `postgres` OS user (initdb refuses root); otherwise as
# the calling user. Settings: PRICESVC_BIN (default .build/release/pricesvc), PGBIN,
# CLUSTER_RATE_LIMIT_PER_MINUTE (120: per client address, enforced by HAProxy for all instances),
# CLUSTER_BACKUP_REPO (the pgBackRest repository, default DIR/nodes/repository; it belongs on another
# machine, see docs/operations.md; DIR/backup-repo.conf, when present, replaces the repo1-path line, e.g.
# with object storage settings), CLUSTER_ARCHIVE_TIMEOUT (60: seconds after which a partly filled WAL
# segment is archived anyway), CLUSTER_BACKUP_RETENTION_DAYS (14: every point of that many days stays
# restorable), and any PRICESVC_* variable, passed to both pricesvc instances.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd -P)
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
BIN=${PRICESVC_BIN:-$REPO/.build/release/pricesvc}
PY=/usr/bin/python3  # Debian's, which Patroni already needs; only the standard library is used

die() { echo "cluster: $*" >&2; exit 1; }
usage() { die "usage: $0 up|status|failover|switchover|down|backups DIR | backup DIR [full|incr] | restore DIR [--to TIME] [--timeline N|latest] [--plan] [--keep-old]"; }

. "$REPO/scripts/dev/pg-extensions.sh"

[ $# -ge 2 ] || usage
cmd=$1
mkdir -p -- "$2"
DIR=$(cd -- "$2" && pwd -P)
shift 2
case $cmd in
backup) [ $# -le 1 ] || usage ;;
restore) ;;  # parse_restore_args
*) [ $# -eq 0 ] || usage ;;
esac
exec 9>"$DIR/.cluster.lock"
# A restore's steps (_restore-stop, _restore-start) run from pricesvc-backup while `restore` holds the lock.
case $cmd in
_restore-*) [ -n "${CLUSTER_RESTORE_HOLDS_LOCK:-}" ] || die "$cmd is a step of restore" ;;
*) flock 9 ;;
esac

# Patroni and PostgreSQL must reach their folders. Under a private DIR (e.g. a 0700 temporary
# folder) as root they live in a folder of their own under /var/tmp, as scripts/dev/pg-cluster.sh does.
if [ "$(id -u)" -eq 0 ]; then
    id -u postgres >/dev/null 2>&1 || die "OS user 'postgres' is missing (apt-get install postgresql)"
    DB_USER=postgres
    AS_DB=(setpriv --reuid=postgres --regid=postgres --init-groups --)
    if runuser -u postgres -- test -x "$DIR" 2>/dev/null; then
        NODES=$DIR/nodes
    else
        NODES=/var/tmp/pricesvc-cluster-$(printf '%s' "$DIR" | sha256sum | cut -c1-16)
        ln -sfn -- "$NODES" "$DIR/nodes"
    fi
else
    DB_USER=$(id -un)
    AS_DB=()
    NODES=$DIR/nodes
fi

# ------------------------------------------------------------------ small helpers

# True when PID is alive and its command line contains PATTERN.
alive() {
    local pid=$1 pattern=$2
    [[ $pid =~ ^[0-9]+$ ]] && [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$pattern"
}

pid_of() { cat "$1" 2>/dev/null || true; }

# Runs COMMAND until it succeeds or SECONDS pass; fails with MESSAGE and LOG's tail.
wait_for() {
    local seconds=$1 message=$2 log=$3; shift 3
    local deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        if [ $SECONDS -ge $deadline ]; then
            echo "cluster: timed out after ${seconds}s waiting for $message" >&2
            [ -n "$log" ] && [ -f "$log" ] && { echo "--- tail of $log" >&2; tail -n 30 "$log" >&2; }
            return 1
        fi
        sleep 0.2
    done
}

http_ok() { curl -fsS -o /dev/null --max-time 2 "$1"; }

# N free loopback ports, one per line, below the kernel's ephemeral range. The cluster's ports are fixed
# for its life and free while a node restarts (failover, restore); a port from the ephemeral range could
# then be taken by any outgoing connection on the machine (make test's other suites make thousands), and
# the node would not bind it again.
free_ports() {
    "$PY" - "$1" <<'EOF'
import random, socket, sys
wanted = int(sys.argv[1])
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
candidates = list(range(10000, low))
random.shuffle(candidates)
chosen = []
for port in candidates:
    if len(chosen) == wanted:
        break
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", port))
        chosen.append(port)
    except OSError:
        pass
    finally:
        s.close()
while len(chosen) < wanted:  # no room below the ephemeral range: the kernel's choice
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    if s.getsockname()[1] not in chosen:
        chosen.append(s.getsockname()[1])
    s.close()
print("\n".join(map(str, chosen)))
EOF
}

# ------------------------------------------------------------------ configuration (first `up` only)

ENV_FILE=$DIR/cluster.env

make_configuration() {
    local ports
    mapfile -t ports < <(free_ports 13)
    rm -rf -- "$NODES/node1" "$NODES/node2"  # data of an earlier cluster under the same name
    # and its backups in the default repository (another system identifier: the stanza would not match)
    [ -n "${CLUSTER_BACKUP_REPO:-}" ] || rm -rf -- "$NODES/repository"
    umask 077
    mkdir -p "$DIR/secrets" "$DIR/etcd" "$DIR/haproxy" "$DIR/pricesvc"
    head -c 48 /dev/urandom | base64 -w0 | tr '+/' '-_' >"$DIR/secrets/jwt-secret"
    local superuser_password replication_password authenticator_password
    superuser_password=$(head -c 24 /dev/urandom | base64 -w0 | tr -d '+/=')
    replication_password=$(head -c 24 /dev/urandom | base64 -w0 | tr -d '+/=')
    authenticator_password=$(head -c 24 /dev/urandom | base64 -w0 | tr -d '+/=')
    # One passfile for everything run from here (psql, migrate, pricesvc); no password is in a URL.
    printf '127.0.0.1:*:*:postgres:%s\n127.0.0.1:*:*:authenticator:%s\n' \
        "$superuser_password" "$authenticator_password" >"$DIR/secrets/pgpass"
    cat >"$ENV_FILE" <<EOF
SCOPE=pricesvc-$(printf '%s' "$DIR" | sha256sum | cut -c1-8)
ETCD_CLIENT_PORT=${ports[0]}
ETCD_PEER_PORT=${ports[1]}
NODE1_PG_PORT=${ports[2]}
NODE1_API_PORT=${ports[3]}
NODE2_PG_PORT=${ports[4]}
NODE2_API_PORT=${ports[5]}
RW_PORT=${ports[6]}
RO_PORT=${ports[7]}
HTTP_PORT=${ports[8]}
PRICESVC1_PORT=${ports[9]}
PRICESVC2_PORT=${ports[10]}
PRICESVC1_ADMIN_PORT=${ports[11]}
PRICESVC2_ADMIN_PORT=${ports[12]}
SUPERUSER_PASSWORD=$superuser_password
REPLICATION_PASSWORD=$replication_password
AUTHENTICATOR_PASSWORD=$authenticator_password
BACKUP_REPO=${CLUSTER_BACKUP_REPO:-$NODES/repository}
ARCHIVE_TIMEOUT=${CLUSTER_ARCHIVE_TIMEOUT:-60}
BACKUP_RETENTION_DAYS=${CLUSTER_BACKUP_RETENTION_DAYS:-14}
EOF
    umask 022
}

load_configuration() {
    [ -f "$ENV_FILE" ] || return 1
    # shellcheck disable=SC1090
    . "$ENV_FILE"
    PGPASSFILE=$DIR/secrets/pgpass
    OWNER_URL="postgresql://postgres@127.0.0.1:$RW_PORT/pricesvc?passfile=$PGPASSFILE"
    SERVICE_URL="postgresql://authenticator@127.0.0.1:$RW_PORT/pricesvc?passfile=$PGPASSFILE"
    READ_URL="postgresql://authenticator@127.0.0.1:$RO_PORT/pricesvc?passfile=$PGPASSFILE"
    # A cluster.env from before backups: the defaults.
    BACKUP_REPO=${BACKUP_REPO:-$NODES/repository}
    ARCHIVE_TIMEOUT=${ARCHIVE_TIMEOUT:-60}
    BACKUP_RETENTION_DAYS=${BACKUP_RETENTION_DAYS:-14}
}

STANZA=pricesvc

# pgBackRest, one configuration per node (its data directory, socket and spool), one repository.
write_pgbackrest_config() {  # node number
    local n=$1 pg_port home repo_lines
    pg_port=$(eval echo "\$NODE${n}_PG_PORT")
    home=$NODES/node$n
    mkdir -p -- "$home/pgbackrest/log" "$home/pgbackrest/spool" "$home/pgbackrest/lock" "$BACKUP_REPO"
    if [ -f "$DIR/backup-repo.conf" ]; then
        repo_lines=$(cat "$DIR/backup-repo.conf")
    else
        repo_lines="repo1-path=$BACKUP_REPO"
    fi
    # One passphrase for the repository (encrypted: it holds signing keys and session ids), generated
    # once, outside the repository (docs/operations.md: keep a copy apart from the backups).
    local pass_file=${BACKUP_CIPHER_PASS_FILE:-$DIR/backup-cipher-pass}
    [ -s "$pass_file" ] || (umask 077 && head -c 48 /dev/urandom | base64 -w0 >"$pass_file")
    chmod 0600 "$pass_file"
    (umask 077 && : >"$home/pgbackrest.conf")
    cat >"$home/pgbackrest.conf" <<EOF
# Written by scripts/topology/cluster.sh; docs/operations.md explains each choice.
[global]
$repo_lines
repo1-cipher-type=aes-256-cbc
repo1-cipher-pass=$(cat -- "$pass_file")
# Time-based retention: every point of the last $BACKUP_RETENTION_DAYS days stays restorable.
repo1-retention-full-type=time
repo1-retention-full=$BACKUP_RETENTION_DAYS
compress-type=zst
start-fast=y
process-max=2
# archive_command returns once the segment is in the repository; the asynchronous queue only lets
# pgBackRest push several at once. (No archive-push-queue-max: dropping WAL would break restores.)
archive-async=y
spool-path=$home/pgbackrest/spool
lock-path=$home/pgbackrest/lock
log-path=$home/pgbackrest/log
log-level-console=warn
log-level-file=info

[$STANZA]
pg1-path=$home/data
pg1-socket-path=$home
pg1-port=$pg_port
pg1-user=postgres
EOF
    chmod 0600 "$home/pgbackrest.conf"
    if [ "$(id -u)" -eq 0 ]; then
        chown -R "$DB_USER:" "$home/pgbackrest" "$home/pgbackrest.conf"
        [ -f "$DIR/backup-repo.conf" ] || chown "$DB_USER:" "$BACKUP_REPO"
    fi
    return 0
}

write_patroni_config() {  # node number
    local n=$1 pg_port api_port home
    pg_port=$(eval echo "\$NODE${n}_PG_PORT")
    api_port=$(eval echo "\$NODE${n}_API_PORT")
    home=$NODES/node$n
    mkdir -p -- "$NODES"
    install -d -m 0700 "$home"
    [ "$(id -u)" -eq 0 ] && chown "$DB_USER:" "$NODES" "$home"
    cat >"$home/patroni.yml" <<EOF
# Written by scripts/topology/cluster.sh; docs/deployment.md explains each choice.
scope: $SCOPE
namespace: /pricesvc/
name: node$n
log:
  level: WARNING
restapi:
  listen: 127.0.0.1:$api_port
  connect_address: 127.0.0.1:$api_port
etcd3:
  hosts: 127.0.0.1:$ETCD_CLIENT_PORT
bootstrap:
  dcs:
    # A dead leader's key expires after ttl seconds; then the synchronous standby is promoted. Patroni
    # 3.2 and later raise a ttl below 20 to 20 and want loop_wait + 2 x retry_timeout <= ttl: these are
    # the fastest values valid there too (docs/deployment.md, "Failover time").
    ttl: 20
    loop_wait: 2
    retry_timeout: 9
    maximum_lag_on_failover: 1048576
    # Every commit waits for the synchronous standby; only it may be promoted automatically.
    synchronous_mode: true
    synchronous_mode_strict: false
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        # The per-reporter cap counts reports by commit time: required on every node.
        track_commit_timestamp: "on"
        # A 201 means the standby has applied the report: reads there see every acknowledged write.
        synchronous_commit: remote_apply
        wal_level: replica
        hot_standby: "on"
        hot_standby_feedback: "on"
        wal_log_hints: "on"
        max_connections: 100
        max_wal_senders: 10
        max_replication_slots: 10
        wal_keep_size: 256MB
  initdb:
    - encoding: UTF8
    - locale: C.UTF-8
    - data-checksums
postgresql:
  listen: 127.0.0.1:$pg_port
  connect_address: 127.0.0.1:$pg_port
  data_dir: $home/data
  bin_dir: $PGBIN
  pgpass: $home/pgpass
  authentication:
    superuser:
      username: postgres
      password: $SUPERUSER_PASSWORD
    replication:
      username: replicator
      password: $REPLICATION_PASSWORD
  parameters:
    unix_socket_directories: $home
    timezone: UTC
    log_min_messages: warning
    # Every WAL segment goes to the pgBackRest repository; a partly filled one after archive_timeout.
    archive_mode: "on"
    archive_command: pgbackrest --config=$home/pgbackrest.conf --stanza=$STANZA archive-push %p
    archive_timeout: $ARCHIVE_TIMEOUT
  # A new or rebuilt standby restores the newest backup from the repository and replays the archive,
  # then streams the rest; without a usable backup (a new cluster) it streams everything.
  create_replica_methods:
    - pgbackrest
    - basebackup
  pgbackrest:
    command: pgbackrest --config=$home/pgbackrest.conf --stanza=$STANZA --delta --type=standby restore
    keep_data: true
    no_params: true
  recovery_conf:
    restore_command: pgbackrest --config=$home/pgbackrest.conf --stanza=$STANZA archive-get %f "%p"
  # The socket: peer, and only the OS user the nodes run as may log in, as the superuser (pgBackRest, the
  # backup tool). Loopback TCP: a password; docs/deployment.md's samples (other machines) use hostssl.
  pg_ident:
    - pricesvc $DB_USER postgres
  pg_hba:
    - local all all peer map=pricesvc
    - host replication replicator 127.0.0.1/32 scram-sha-256
    - host all all 127.0.0.1/32 scram-sha-256
EOF
    chmod 0600 "$home/patroni.yml"
    [ "$(id -u)" -eq 0 ] && chown "$DB_USER:" "$home/patroni.yml"
    return 0
}

write_haproxy_config() {
    local limit=${CLUSTER_RATE_LIMIT_PER_MINUTE:-120}
    cat >"$DIR/haproxy/haproxy.cfg" <<EOF
# Written by scripts/topology/cluster.sh; docs/deployment.md explains each part.
global
    daemon
    pidfile $DIR/haproxy/haproxy.pid
    stats socket $DIR/haproxy/admin.sock mode 600 level admin
    maxconn 4096

defaults
    timeout connect 1s
    timeout client 60s
    timeout server 60s
    timeout check 1s
    retries 2

# PostgreSQL, read-write: whichever node Patroni's REST API calls the primary. Sessions to a node
# marked down are cut, so clients reconnect to the new leader instead of waiting on the old one.
listen postgres_rw
    bind 127.0.0.1:$RW_PORT
    mode tcp
    option httpchk OPTIONS /primary
    http-check expect status 200
    default-server inter 1s fastinter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
    server node1 127.0.0.1:$NODE1_PG_PORT check port $NODE1_API_PORT
    server node2 127.0.0.1:$NODE2_PG_PORT check port $NODE2_API_PORT

# PostgreSQL, read-only: the replicas. With none up the port refuses, and pricesvc reads from the primary.
listen postgres_ro
    bind 127.0.0.1:$RO_PORT
    mode tcp
    balance roundrobin
    option httpchk OPTIONS /replica
    http-check expect status 200
    default-server inter 1s fastinter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
    server node1 127.0.0.1:$NODE1_PG_PORT check port $NODE1_API_PORT
    server node2 127.0.0.1:$NODE2_PG_PORT check port $NODE2_API_PORT

# HTTP: the per-address request limit is kept here, once for all instances (each instance's own
# limiter only sees its share). Counted: requests let through on /rest and /auth, per IPv4 address
# or IPv6 /64, over a sliding minute.
frontend http
    bind 127.0.0.1:$HTTP_PORT
    mode http
    timeout http-request 10s
    stick-table type ipv6 size 1m expire 2m store gpc0_rate(60s)
    acl limited path_beg /rest/ /auth/
    acl auth path_beg /auth/
    http-request del-header X-Forwarded-For
    http-request track-sc0 src,ipmask(32,64) if limited
    http-request return status 429 content-type application/json hdr Retry-After 10 string '{"code":429,"error_code":"over_request_rate_limit","msg":"Request rate limit reached"}' if auth { sc0_gpc0_rate ge $limit }
    http-request return status 429 content-type application/json hdr Retry-After 10 string '{"code":"PGRST429","details":null,"hint":"Retry after 10 seconds","message":"Too many requests from this address"}' if limited { sc0_gpc0_rate ge $limit }
    http-request sc-inc-gpc0(0) if limited
    option forwardfor
    default_backend pricesvc

backend pricesvc
    mode http
    balance roundrobin
    option httpchk GET /healthz
    http-check expect status 200
    # A refused connection (instance gone) is retried on the other instance; a request already sent
    # to an instance that dies is not (it may have been executed).
    option redispatch 1
    default-server inter 500ms fall 2 rise 2
    server pricesvc1 127.0.0.1:$PRICESVC1_PORT check
    server pricesvc2 127.0.0.1:$PRICESVC2_PORT check
    errorfile 503 $DIR/haproxy/503.http
EOF
    printf 'HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n{"code":"PGRST003","details":null,"hint":null,"message":"No instance available, retry shortly"}\n' \
        >"$DIR/haproxy/503.http"
}

# ------------------------------------------------------------------ processes

start_etcd() {
    local pidfile=$DIR/etcd/etcd.pid
    alive "$(pid_of "$pidfile")" etcd && return 0
    setsid etcd --name etcd1 --data-dir "$DIR/etcd/data" \
        --listen-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_CLIENT_PORT" \
        --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
        --initial-cluster "etcd1=http://127.0.0.1:$ETCD_PEER_PORT" --initial-cluster-token "$SCOPE" \
        --initial-cluster-state new --log-level warn \
        </dev/null >>"$DIR/etcd/etcd.log" 2>&1 9>&- &
    echo $! >"$pidfile"
    wait_for 30 "etcd" "$DIR/etcd/etcd.log" http_ok "http://127.0.0.1:$ETCD_CLIENT_PORT/health"
}

start_node() {  # node number
    local n=$1 api_port home
    home=$NODES/node$n
    api_port=$(eval echo "\$NODE${n}_API_PORT")
    local pidfile=$DIR/patroni-node$n.pid
    alive "$(pid_of "$pidfile")" "$home/patroni.yml" && return 0
    # A postmaster left by a killed Patroni would keep the data directory; Patroni adopts a running one.
    ( cd "$home" || exit 1; "${AS_DB[@]}" env HOME="$home" PATH="$PATH" setsid patroni "$home/patroni.yml" \
        </dev/null >>"$home/patroni.log" 2>&1 9>&- & echo $! >"$pidfile" )
    wait_for 90 "node$n's Patroni REST API" "$home/patroni.log" http_ok "http://127.0.0.1:$api_port/liveness"
}

start_haproxy() {
    local pidfile=$DIR/haproxy/haproxy.pid
    alive "$(pid_of "$pidfile")" haproxy && return 0
    haproxy -c -q -f "$DIR/haproxy/haproxy.cfg" || die "haproxy.cfg is invalid"
    haproxy -f "$DIR/haproxy/haproxy.cfg" </dev/null >>"$DIR/haproxy/haproxy.log" 2>&1 9>&- ||
        die "haproxy did not start: $(tail -n 5 "$DIR/haproxy/haproxy.log")"
    wait_for 10 "haproxy" "$DIR/haproxy/haproxy.log" test -s "$pidfile"
}

start_pricesvc() {  # instance number
    local n=$1 port admin_port
    port=$(eval echo "\$PRICESVC${n}_PORT")
    admin_port=$(eval echo "\${PRICESVC${n}_ADMIN_PORT:-}")
    local pidfile=$DIR/pricesvc/pricesvc$n.pid
    alive "$(pid_of "$pidfile")" pricesvc && return 0
    : >"$DIR/pricesvc/pricesvc$n.stdout"
    (
        export PRICESVC_LISTEN=127.0.0.1:$port
        # /metrics is served on the admin listener only (a cluster.env from before it has no port for it).
        [ -n "$admin_port" ] && export PRICESVC_ADMIN_LISTEN=127.0.0.1:$admin_port
        export PRICESVC_DATABASE_URL=$SERVICE_URL PRICESVC_READ_DATABASE_URL=$READ_URL
        export PRICESVC_JWT_SECRET_FILE=$DIR/secrets/jwt-secret PRICESVC_TRUSTED_PROXIES=127.0.0.1
        export PRICESVC_MIGRATIONS_DIR=${PRICESVC_MIGRATIONS_DIR:-$REPO/migrations}
        export PRICESVC_ACCESS_LOG=${PRICESVC_ACCESS_LOG:-false}
        cd "$REPO" || exit 1
        setsid "$BIN" serve </dev/null >>"$DIR/pricesvc/pricesvc$n.stdout" \
            2>>"$DIR/pricesvc/pricesvc$n.stderr" 9>&- & echo $! >"$pidfile"
    )
    wait_for 60 "pricesvc $n" "$DIR/pricesvc/pricesvc$n.stderr" http_ok "http://127.0.0.1:$port/healthz"
}

api() { curl -fsS --max-time 3 "http://127.0.0.1:$1$2"; }

# Patroni's view of the cluster from any node that answers.
cluster_json() {
    local port
    for port in "$NODE1_API_PORT" "$NODE2_API_PORT"; do
        api "$port" /cluster 2>/dev/null && return 0
    done
    return 1
}

has_leader_and_sync_standby() {
    cluster_json | "$PY" -c '
import json, sys
roles = [m["role"] for m in json.load(sys.stdin)["members"] if m.get("state") in ("running", "streaming")]
sys.exit(0 if "leader" in roles and "sync_standby" in roles else 1)'
}

psql_owner() { psql -X -q -v ON_ERROR_STOP=1 "$OWNER_URL" "$@"; }
psql_admin() { psql -X -q -v ON_ERROR_STOP=1 "postgresql://postgres@127.0.0.1:$RW_PORT/postgres?passfile=$PGPASSFILE" "$@"; }

# HAProxy's view: "backend server STATUS" per line, from its admin socket.
haproxy_servers() {
    "$PY" - "$DIR/haproxy/admin.sock" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(2)
s.connect(sys.argv[1])
s.sendall(b"show stat\n")
data = b""
while chunk := s.recv(65536):
    data += chunk
for line in data.decode().splitlines():
    fields = line.split(",")
    if len(fields) > 17 and not line.startswith("#") and fields[1] not in ("FRONTEND", "BACKEND"):
        print(fields[0], fields[1], fields[17])
EOF
}

# HAProxy marks every server up until its first check; wait until its read-write port has only the leader.
rw_port_follows_leader() {
    local leader
    leader=$(cluster_json | "$PY" -c '
import json, sys
print(next(m["name"] for m in json.load(sys.stdin)["members"] if m["role"] == "leader" and m.get("state") == "running"))')
    [ "$(haproxy_servers | awk '$1 == "postgres_rw" && $3 == "UP" { print $2 }')" = "$leader" ]
}

prepare_database() {
    export PGCONNECT_TIMEOUT=3
    wait_for 30 "HAProxy's read-write port to follow the leader" "" rw_port_follows_leader
    if [ "$(psql_admin -tAc "select 1 from pg_database where datname = 'pricesvc'")" != 1 ]; then
        psql_admin -c 'create database pricesvc' >/dev/null
    fi
    PRICESVC_JWT_SECRET_FILE=$DIR/secrets/jwt-secret PRICESVC_MIGRATIONS_DIR=${PRICESVC_MIGRATIONS_DIR:-$REPO/migrations} \
        "$BIN" migrate --migration-database-url "$OWNER_URL" >"$DIR/migrate.log" 2>&1 ||
        die "pricesvc migrate failed: $(tail -n 5 "$DIR/migrate.log")"
    psql_owner -c "alter role authenticator password '$AUTHENTICATOR_PASSWORD'" >/dev/null
}

status_line() {
    local cluster anon_key
    cluster=$(cluster_json 2>/dev/null || echo '{"members": []}')
    anon_key=$(PRICESVC_JWT_SECRET_FILE=$DIR/secrets/jwt-secret "$BIN" keys)
    local pids=()
    for n in 1 2; do
        local pid
        pid=$(pid_of "$DIR/pricesvc/pricesvc$n.pid")
        alive "$pid" pricesvc && pids+=("$pid")
    done
    local nodes=()
    for n in 1 2; do
        local patroni_pid postmaster_pid
        patroni_pid=$(pid_of "$DIR/patroni-node$n.pid")
        alive "$patroni_pid" "$NODES/node$n/patroni.yml" || patroni_pid=null
        postmaster_pid=$(head -n 1 "$NODES/node$n/data/postmaster.pid" 2>/dev/null || true)
        alive "$postmaster_pid" postgres || postmaster_pid=null
        nodes+=("node$n:$patroni_pid:$postmaster_pid")
    done
    CLUSTER=$cluster "$PY" - "http://127.0.0.1:$HTTP_PORT" "$anon_key" "$OWNER_URL" "${pids[*]:-}" "${nodes[@]}" <<'EOF'
import json, os, sys
url, anon_key, owner_url, pids, *nodes = sys.argv[1:]
members = {m["name"]: m for m in json.loads(os.environ["CLUSTER"]).get("members", [])}
out = []
for node in nodes:
    name, patroni_pid, postmaster_pid = node.split(":")
    member = members.get(name, {})
    role = member.get("role", "down") if member.get("state") in ("running", "streaming") else "down"
    out.append({"name": name, "role": role, "patroni_pid": json.loads(patroni_pid),
                "postmaster_pid": json.loads(postmaster_pid)})
print(json.dumps({"url": url, "anon_key": anon_key, "owner_url": owner_url, "nodes": out,
                  "pricesvc_pids": [int(p) for p in pids.split()]}))
EOF
}

# ------------------------------------------------------------------ commands

up() {
    require_extensions
    command -v etcd >/dev/null && command -v patroni >/dev/null && command -v haproxy >/dev/null ||
        die "etcd, patroni and haproxy are needed (scripts/dev/install-deps.sh installs them)"
    [ -x "$BIN" ] || die "no pricesvc at $BIN (make build)"
    [ -f "$ENV_FILE" ] || make_configuration
    load_configuration
    write_patroni_config 1
    write_patroni_config 2
    write_pgbackrest_config 1
    write_pgbackrest_config 2
    write_haproxy_config
    start_etcd
    # The first node bootstraps; the second clones it (pg_basebackup) and becomes the synchronous standby.
    start_node 1
    wait_for 90 "a leader" "$NODES/node1/patroni.log" cluster_has_leader
    start_node 2
    start_haproxy
    prepare_database
    create_stanza
    start_pricesvc 1
    start_pricesvc 2
    wait_for 90 "a leader and a synchronous standby" "$NODES/node2/patroni.log" has_leader_and_sync_standby
    wait_for 30 "/readyz through HAProxy" "" http_ok "http://127.0.0.1:$HTTP_PORT/readyz"
    status_line
}

cluster_has_leader() {
    cluster_json | "$PY" -c '
import json, sys
sys.exit(0 if any(m["role"] == "leader" and m.get("state") == "running" for m in json.load(sys.stdin)["members"]) else 1)'
}

failover() {
    load_configuration || die "no cluster in $DIR"
    local leader standby port
    read -r leader standby < <(cluster_json | "$PY" -c '
import json, sys
members = json.load(sys.stdin)["members"]
role = lambda r: next((m["name"] for m in members if m["role"] == r), "")
print(role("leader"), role("sync_standby"))')
    [ -n "$leader" ] && [ -n "$standby" ] || die "a switchover needs a leader and a synchronous standby"
    port=$(eval echo "\$NODE${leader#node}_API_PORT")
    curl -fsS --max-time 30 -X POST -H 'Content-Type: application/json' \
        -d "{\"leader\": \"$leader\", \"candidate\": \"$standby\"}" "http://127.0.0.1:$port/switchover" >/dev/null ||
        die "Patroni refused the switchover"
    wait_for 60 "$standby to lead" "" new_leader_is "$standby"
    wait_for 60 "$leader back as the synchronous standby" "" has_leader_and_sync_standby
    status_line
}

new_leader_is() {
    cluster_json | "$PY" -c '
import json, sys
sys.exit(0 if any(m["name"] == sys.argv[1] and m["role"] == "leader" and m.get("state") == "running"
                  for m in json.load(sys.stdin)["members"]) else 1)' "$1"
}

# True while PID runs. A process that exited but is not reaped yet (a zombie: these are children of
# PID 1 after setsid, and a container's init may reap late) has gone.
running_pid() {
    local state
    state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$state" ] && [ "$state" != Z ]
}

# TERM, up to SECONDS for the processes to go, then KILL.
stop_pids() {
    local seconds=$1; shift
    local pids=("$@") pid deadline
    [ ${#pids[@]} -eq 0 ] && return 0
    kill -TERM "${pids[@]}" 2>/dev/null || true
    deadline=$((SECONDS + seconds))
    for pid in "${pids[@]}"; do
        while running_pid "$pid" && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    done
}

# PostgreSQL processes still working in a node's data directory (their cwd) once the postmaster is gone.
leftover_pids() {
    local pid cwd
    for pid in /proc/[0-9]*; do
        cwd=$(readlink "$pid/cwd" 2>/dev/null || true)
        case $cwd in
        "$NODES"/node[12]/data*) alive "${pid#/proc/}" postgres && echo "${pid#/proc/}" ;;
        esac
    done
    return 0
}

down() {
    [ -f "$ENV_FILE" ] || return 0
    load_configuration
    local pids=() n pid
    for n in 1 2; do
        pid=$(pid_of "$DIR/pricesvc/pricesvc$n.pid")
        alive "$pid" pricesvc && pids+=("$pid")
    done
    stop_pids 15 "${pids[@]}"
    pid=$(pid_of "$DIR/haproxy/haproxy.pid")
    alive "$pid" haproxy && stop_pids 10 "$pid"
    # Patroni stops its PostgreSQL on SIGTERM; a postmaster whose Patroni was killed is stopped directly.
    pids=()
    for n in 1 2; do
        pid=$(pid_of "$DIR/patroni-node$n.pid")
        alive "$pid" "$NODES/node$n/patroni.yml" && pids+=("$pid")
    done
    stop_pids 60 "${pids[@]}"
    pids=()
    for n in 1 2; do
        pid=$(head -n 1 "$NODES/node$n/data/postmaster.pid" 2>/dev/null || true)
        alive "$pid" postgres && pids+=("$pid")
    done
    stop_pids 30 "${pids[@]}"
    pid=$(pid_of "$DIR/etcd/etcd.pid")
    alive "$pid" etcd && stop_pids 10 "$pid"
    mapfile -t pids < <(leftover_pids)
    stop_pids 5 "${pids[@]}"
    return 0
}

# ------------------------------------------------------------------ backups

command -v pgbackrest >/dev/null || [ "$cmd" != up ] || die "pgbackrest is needed (scripts/dev/install-deps.sh)"
# shellcheck source=scripts/ops/backup-lib.sh
. "$REPO/scripts/ops/backup-lib.sh"
export BACKUP_INFO_CACHE=$DIR/backup-info-cache.json  # what archived WAL says, read once (backup-info.py)

# Backups and their listing are pricesvc-backup's (the installed tool: scripts/ops/pricesvc-backup), given
# the Patroni REST APIs and each node's pgBackRest configuration ("%m": the leader's).
backup_tool() {
    BACKUP_OS_USER=$DB_USER PGBIN=$PGBIN "$REPO/scripts/ops/pricesvc-backup" --stanza "$STANZA" "$@"
}

leader_name() {
    cluster_json | "$PY" -c '
import json, sys
print(next(m["name"] for m in json.load(sys.stdin)["members"] if m["role"] == "leader" and m.get("state") == "running"))'
}

# The repository's stanza, made (or checked) once the leader runs; archiving starts working with it.
# On a running cluster (`up` after an instance was lost) an archive-push may hold the stanza's lock at
# that moment: stanza-create then fails with error 50 ("unable to acquire lock"), so it is tried again
# for up to 30 s (seen once in CI, a second after the failover drill).
create_stanza() {
    PGBR_CONF=$NODES/$(leader_name)/pgbackrest.conf
    local attempt output
    for attempt in $(seq 30); do
        if output=$(pgbr stanza-create 2>&1); then
            return 0
        fi
        case $output in *"[050]"*) sleep 1 ;; *) break ;; esac
    done
    printf '%s\n' "$output" >&2
    die "pgbackrest stanza-create failed (see $NODES/node*/pgbackrest/log)"
}

backup() {
    load_configuration || die "no cluster in $DIR"
    [[ ${1:-incr} =~ ^(full|incr)$ ]] || usage
    backup_tool --patroni "http://127.0.0.1:$NODE1_API_PORT,http://127.0.0.1:$NODE2_API_PORT" \
        --config "$NODES/%m/pgbackrest.conf" backup "$@"
}

backups() {
    load_configuration || die "no cluster in $DIR"
    [ -f "$NODES/node1/pgbackrest.conf" ] || write_pgbackrest_config 1
    backup_tool --config "$NODES/node1/pgbackrest.conf" backups
}

# Deletes the cluster's keys in etcd (leader, members, initialize, config): Patroni then starts on the
# restored data directory as on a new cluster, and writes its configuration again from bootstrap.dcs.
forget_cluster_state() {
    "$PY" - "http://127.0.0.1:$ETCD_CLIENT_PORT/v3/kv/deleterange" "/pricesvc/$SCOPE/" <<'EOF'
import base64, json, sys, urllib.request
url, prefix = sys.argv[1:]
end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
b64 = lambda text: base64.b64encode(text.encode()).decode()
request = urllib.request.Request(url, data=json.dumps({"key": b64(prefix), "range_end": b64(end)}).encode(),
                                 headers={"Content-Type": "application/json"})
urllib.request.urlopen(request, timeout=5).read()
EOF
}

# Their data directories are about to be replaced: Patroni first (so it restarts nothing), then the
# postmasters and what is left of them, all killed rather than shut down.
kill_databases() {
    local pids=() n pid
    for n in 1 2; do
        pid=$(pid_of "$DIR/patroni-node$n.pid")
        alive "$pid" "$NODES/node$n/patroni.yml" && pids+=("$pid")
    done
    kill_pids "${pids[@]}"
    pids=()
    for n in 1 2; do
        pid=$(head -n 1 "$NODES/node$n/data/postmaster.pid" 2>/dev/null || true)
        alive "$pid" postgres && pids+=("$pid")
    done
    kill_pids "${pids[@]}"
    mapfile -t pids < <(leftover_pids)
    kill_pids "${pids[@]}"
    clear_socket_locks
}

# A killed postmaster's socket lock files (node*/.s.PGSQL.PORT.lock) name its PID. Until PID 1 reaps it,
# that PID is a zombie, which PostgreSQL takes for a live postmaster ("lock file ... already exists"), so
# a postmaster started at once on the same socket refuses to start. The postmaster is gone (running_pid),
# so its lock files and sockets are stale: removed here.
clear_socket_locks() {
    local lock pid
    for lock in "$NODES"/node[12]/.s.PGSQL.*.lock; do
        [ -e "$lock" ] || continue
        pid=$(head -n 1 "$lock" 2>/dev/null | tr -d ' ')
        if [ -n "$pid" ] && running_pid "$pid"; then continue; fi
        rm -f -- "$lock" "${lock%.lock}"
    done
}

kill_pids() {
    [ $# -eq 0 ] && return 0
    kill -KILL "$@" 2>/dev/null || true
    local pid deadline=$((SECONDS + 10))
    for pid in "$@"; do
        while running_pid "$pid" && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
    done
}

progress() { printf 'cluster: restore: %s (%ss)\n' "$1" "$(( ($(date +%s%N) - start_ns) / 100000000 ))" | sed 's/\([0-9]\)s)$/.\1s)/' >&2; }

# The restore is pricesvc-backup's (the installed tool: archive the leader's live WAL, plan, refuse or
# restore node1's data directory, recover outside Patroni, full backup), given this topology's two steps:
# _restore-stop (Patroni and PostgreSQL off on both nodes, the cluster's keys in etcd removed, node2's
# data directory set aside) and _restore-start (Patroni on node1, then HAProxy's port and pricesvc). Then
# node2 is rebuilt from the new full backup.
restore() {
    load_configuration || die "no cluster in $DIR"
    parse_restore_args "$@"
    start_ns=$(date +%s%N)
    write_patroni_config 1
    write_patroni_config 2
    write_pgbackrest_config 1
    write_pgbackrest_config 2
    export CLUSTER_RESTORE_START_NS=$start_ns BACKUP_ASIDE_SUFFIX=.before-restore-$(date -u +%Y%m%dT%H%M%S)
    local restored
    restored=$(CLUSTER_RESTORE_HOLDS_LOCK=1 BACKUP_RECOVERY_TIMEOUT=${CLUSTER_RECOVERY_TIMEOUT:-3600} \
        BACKUP_STOP_COMMAND="$(printf '%q _restore-stop %q' "$REPO/scripts/topology/cluster.sh" "$DIR")" \
        BACKUP_START_COMMAND="$(printf '%q _restore-start %q' "$REPO/scripts/topology/cluster.sh" "$DIR")" \
        backup_tool --patroni "http://127.0.0.1:$NODE1_API_PORT,http://127.0.0.1:$NODE2_API_PORT" \
        --config "$NODES/%m/pgbackrest.conf" --member node1 restore "$@" 9>&-) || exit 1
    if $RESTORE_PLAN_ONLY; then
        printf '%s\n' "$restored"
        return 0
    fi
    local aside=$NODES/node2/data$BACKUP_ASIDE_SUFFIX
    if [ -e "$aside" ]; then
        if $RESTORE_KEEP_OLD; then progress "node2's old data directory kept: $aside"; else rm -rf -- "$aside"; fi
    fi
    start_node 2
    wait_for 300 "a leader and a synchronous standby" "$NODES/node2/patroni.log" has_leader_and_sync_standby
    local complete_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
    "$PY" -c 'import json, sys
restored = json.loads(sys.argv[1])
restored["complete_seconds"] = round(int(sys.argv[2]) / 1000, 1)
print(json.dumps(restored))' "$restored" "$complete_ms"
    status_line
}

# restore's first step: nothing may run on either data directory (Patroni first, so it restarts nothing,
# then the postmasters, killed rather than shut down), and Patroni must start on node1 as on a new cluster.
restore_stop() {
    load_configuration || die "no cluster in $DIR"
    start_ns=${CLUSTER_RESTORE_START_NS:-$(date +%s%N)}
    start_etcd
    start_haproxy
    kill_databases
    progress "Patroni and PostgreSQL stopped on both nodes"
    forget_cluster_state || die "could not clear the cluster's state in etcd"
    if [ -e "$NODES/node2/data" ]; then
        mv -- "$NODES/node2/data" "$NODES/node2/data$BACKUP_ASIDE_SUFFIX"
        progress "node2's data directory set aside as node2/data$BACKUP_ASIDE_SUFFIX"
    fi
}

# restore's last step: Patroni adopts node1's recovered directory (the same system identifier), and the
# same URLs serve again.
restore_start() {
    load_configuration || die "no cluster in $DIR"
    start_ns=${CLUSTER_RESTORE_START_NS:-$(date +%s%N)}
    start_node 1
    wait_for 90 "node1 to lead" "$NODES/node1/patroni.log" new_leader_is node1
    progress "Patroni leads on node1"
    wait_for 30 "HAProxy's read-write port to follow the leader" "" rw_port_follows_leader
    start_pricesvc 1
    start_pricesvc 2
    wait_for 60 "/readyz through HAProxy" "" http_ok "http://127.0.0.1:$HTTP_PORT/readyz"
    progress "pricesvc ready through HAProxy"
}

case $cmd in
up) up ;;
status) load_configuration || die "no cluster in $DIR"; status_line ;;
failover | switchover) failover ;;
down) down ;;
backup) backup "$@" ;;
backups) backups ;;
restore) restore "$@" ;;
_restore-stop) restore_stop ;;
_restore-start) restore_start ;;
*) usage ;;
esac
