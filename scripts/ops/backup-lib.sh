# pgBackRest steps of pricesvc-backup (scripts/ops/pricesvc-backup, installed with this file in
# PREFIX/lib/pricesvc), also sourced by scripts/dev/backup.sh (its first-backup setup) and scripts/topology/cluster.sh
# (the loopback cluster's restore). The caller defines: AS_DB (array: runs a command as the database's OS
# user, empty when that is the caller), PGBR_CONF (its pgbackrest.conf), STANZA, die() and usage().

BACKUP_INFO=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)/backup-info.py

# pgBackRest runs as the database's OS user, from a folder it can read.
pgbr() { ( cd / && "${AS_DB[@]}" pgbackrest --config="$PGBR_CONF" --stanza="$STANZA" "$@" ); }

# The pgbackrest command line scripts/ops/backup-info.py runs (as the database's OS user, from /).
pgbr_argv() { PGBR_ARGV=("${AS_DB[@]}" pgbackrest --config="$PGBR_CONF" --stanza="$STANZA"); }

# The repository as JSON, timelines included (scripts/ops/backup-info.py list).
pgbr_backups_json() {  # repository path (shown as is)
    pgbr_argv
    /usr/bin/python3 "$BACKUP_INFO" list "$1" -- "${PGBR_ARGV[@]}"
}

# The newest backup, as one element of `backups`.
pgbr_last_backup_json() {
    pgbr_argv
    /usr/bin/python3 "$BACKUP_INFO" last -- "${PGBR_ARGV[@]}"
}

# Where a backup began in the WAL (its start LSN): the restore's replayed bytes are counted from there.
pgbr_backup_start_lsn() {  # backup label
    pgbr info --output=json --set="$1" | /usr/bin/python3 -c '
import json, sys
print(json.load(sys.stdin)[0]["backup"][0]["lsn"]["start"])'
}

# `restore DIR [--to TIME] [--timeline N|latest] [--plan] [--keep-old]`: sets RESTORE_TIME,
# RESTORE_TIMELINE (empty: not given), RESTORE_PLAN_ONLY and RESTORE_KEEP_OLD (true|false).
parse_restore_args() {
    RESTORE_TIME="" RESTORE_TIMELINE="" RESTORE_PLAN_ONLY=false RESTORE_KEEP_OLD=false
    while [ $# -gt 0 ]; do
        case $1 in
        --to) [ $# -ge 2 ] && [ -n "$2" ] || usage; RESTORE_TIME=$2; shift 2 ;;
        --timeline) [ $# -ge 2 ] && [[ $2 =~ ^([0-9]+|latest)$ ]] || usage; RESTORE_TIMELINE=$2; shift 2 ;;
        --plan) RESTORE_PLAN_ONLY=true; shift ;;
        --keep-old) RESTORE_KEEP_OLD=true; shift ;;
        *) usage ;;
        esac
    done
}

# Which timeline and backup a restore uses, decided from the repository alone before anything is
# stopped (scripts/ops/backup-info.py plan: the rules, and every refusal with its reason). Sets RESTORE_PLAN
# (its JSON), RESTORE_SET (the backup it starts from), RESTORE_FROM_TIMELINE and RESTORE_ARGS
# (pgBackRest's restore options). Exits when the restore could not succeed.
pgbr_restore_plan() {
    local args=() epoch
    if [ -n "$RESTORE_TIME" ]; then
        epoch=$(date -d "$RESTORE_TIME" +%s.%N 2>/dev/null) ||
            die "not a time: $RESTORE_TIME (give it as PostgreSQL prints now())"
        args+=(--to "$RESTORE_TIME" "$epoch")
    fi
    [ -n "$RESTORE_TIMELINE" ] && args+=(--timeline "$RESTORE_TIMELINE")
    pgbr_argv
    RESTORE_PLAN=$(/usr/bin/python3 "$BACKUP_INFO" plan "${args[@]}" -- "${PGBR_ARGV[@]}") ||
        die "refused, nothing was stopped or changed"
    RESTORE_SET=$(plan_field restored_backup)
    RESTORE_FROM_TIMELINE=$(plan_field timeline)
    mapfile -t RESTORE_ARGS < <(/usr/bin/python3 -c 'import json, sys; print("\n".join(json.loads(sys.argv[1])["pgbackrest_options"]))' "$RESTORE_PLAN")
}

plan_field() { /usr/bin/python3 -c 'import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$RESTORE_PLAN" "$1"; }

# From a live database the archive must hold everything up to now before a plan is made: a commit
# after any target in the past (PostgreSQL stops at a time target only on a transaction end after it),
# then `pgbackrest check`, which switches the WAL segment and waits until the repository has it.
archive_now() {  # psql command (array) reaching the primary as superuser
    # A transactional message, so the commit is recognisable as this mark (scripts/ops/backup-info.py
    # does not count it as data when it compares timelines).
    "$@" -c "set synchronous_commit = local; select pg_logical_emit_message(true, 'pricesvc-restore', 'end of archive')" >/dev/null ||
        die "could not write to the database to mark the end of the archive; nothing was stopped"
    pgbr check >/dev/null 2>&1 ||
        die "could not archive the current WAL (pgbackrest check failed): a restore now would lose what is not archived; nothing was stopped"
}

# Bytes as a number from an LSN (X/Y, hexadecimal).
lsn_bytes() { local hi=${1%/*} lo=${1#*/}; echo $(( (16#$hi << 32) + 16#$lo )); }

# After a promotion, where recovery ended: the switch point of the newest timeline's history file in
# DATA/pg_wal. Prints "TIMELINE SWITCHPOINT".
recovery_end() {  # data directory
    local history
    history=$("${AS_DB[@]}" find "$1/pg_wal" -maxdepth 1 -name '*.history' -printf '%f\n' | sort | tail -n 1)
    [ -n "$history" ] || die "no timeline history in $1/pg_wal after the recovery"
    printf '%d %s\n' "$((16#${history%.history}))" \
        "$("${AS_DB[@]}" awk -F'\t' '/^[0-9]/ { lsn = $2 } END { print lsn }' "$1/pg_wal/$history")"
}

# pgBackRest's recovery settings stay in postgresql.auto.conf after the promotion; a later standby
# start or restart must not pick them up again.
RESET_RECOVERY_SQL="alter system reset restore_command; alter system reset recovery_target_time;
alter system reset recovery_target_action; alter system reset recovery_target_timeline;
alter system reset recovery_target; alter system reset recovery_target_lsn; alter system reset recovery_target_xid;
alter system reset recovery_target_name; alter system reset recovery_target_inclusive; select pg_reload_conf();"
