# pgBackRest steps shared by scripts/backup.sh (one node) and scripts/cluster.sh (Patroni). Sourced.
# The caller defines: AS_DB (array: runs a command as the database's OS user, empty when that is the
# caller), PGBR_CONF (its pgbackrest.conf), STANZA, and die().

BACKUP_INFO=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)/backup-info.py

pgbr() { "${AS_DB[@]}" pgbackrest --config="$PGBR_CONF" --stanza="$STANZA" "$@"; }

# The repository as JSON (scripts/backup-info.py list).
pgbr_backups_json() {  # repository path (shown as is)
    pgbr info --output=json | /usr/bin/python3 "$BACKUP_INFO" list "$1"
}

# pgBackRest's restore options for a target: the latest point (every archived WAL, then promote), or
# TIME (as PostgreSQL prints now()): the newest backup that finished before it, WAL up to it, promote.
# Sets RESTORE_ARGS and RESTORE_SET (the backup the restore starts from).
pgbr_restore_plan() {  # [TIME]
    local time=${1:-} epoch
    if [ -z "$time" ]; then
        RESTORE_SET=$(pgbr info --output=json | /usr/bin/python3 "$BACKUP_INFO" last | /usr/bin/python3 -c \
            'import json, sys; print(json.load(sys.stdin)["label"])') || die "the repository has no backup"
        RESTORE_ARGS=(--type=default "--set=$RESTORE_SET")
        return 0
    fi
    epoch=$(date -d "$time" +%s.%N 2>/dev/null) || die "not a time: $time (give it as PostgreSQL prints now())"
    RESTORE_SET=$(pgbr info --output=json | /usr/bin/python3 "$BACKUP_INFO" before "$epoch") ||
        die "no backup finished before $time"
    RESTORE_ARGS=(--type=time "--target=$time" --target-action=promote "--set=$RESTORE_SET")
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
