#!/usr/bin/python3
"""`pgbackrest info --output=json` on stdin, turned into what scripts/backup.sh and scripts/cluster.sh print.

  backup-info.py list REPO          {"stanza", "repository", "archive": {"min", "max"}, "backups": [...]}
  backup-info.py last REPO          the newest backup, as one element of "backups"
  backup-info.py before TIME REPO   label of the newest backup that finished before TIME (seconds since
                                    the epoch); exit 1 when none did

Each backup: {"label", "type", "prior", "start", "stop" (as PostgreSQL prints a UTC timestamptz),
"size_bytes" (the database as backed up), "delta_bytes" (what changed since the prior backup),
"stored_bytes" (what this backup added to the repository, compressed), "wal_start", "wal_stop" (the WAL
segments it needs), "lsn_start", "lsn_stop"}. Standard library only (Debian's python3, as Patroni's).
"""

import json
import sys
from datetime import datetime, timezone


def stamp(epoch):
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M:%S+00")


def backups(stanza):
    out = []
    for b in stanza.get("backup", []):
        out.append({
            "label": b["label"],
            "type": b["type"],
            "prior": b.get("prior"),
            "start": stamp(b["timestamp"]["start"]),
            "stop": stamp(b["timestamp"]["stop"]),
            "stop_epoch": b["timestamp"]["stop"],
            "size_bytes": b["info"]["size"],
            "delta_bytes": b["info"]["delta"],
            "stored_bytes": b["info"]["repository"]["delta"],
            "wal_start": (b.get("archive") or {}).get("start"),
            "wal_stop": (b.get("archive") or {}).get("stop"),
            "lsn_start": (b.get("lsn") or {}).get("start"),
            "lsn_stop": (b.get("lsn") or {}).get("stop"),
        })
    return out


def main():
    command, args = sys.argv[1], sys.argv[2:]
    info = json.load(sys.stdin)
    stanza = info[0] if info else {}
    found = backups(stanza)
    if command == "before":
        limit = float(args[0])
        # pgBackRest keeps whole seconds: a backup that stopped in the same second as TIME may have
        # finished after it, so it must have stopped a full second earlier.
        labels = [b["label"] for b in found if b["stop_epoch"] + 1 <= limit]
        if not labels:
            sys.exit(1)
        print(labels[-1])
        return
    for b in found:
        del b["stop_epoch"]
    if command == "last":
        if not found:
            sys.exit(1)
        print(json.dumps(found[-1]))
        return
    archive = {"min": None, "max": None}
    for a in stanza.get("archive", []):
        archive["min"] = archive["min"] or a.get("min")
        archive["max"] = a.get("max") or archive["max"]
    print(json.dumps({"stanza": stanza.get("name"), "repository": args[0], "archive": archive,
                      "status": (stanza.get("status") or {}).get("message"), "backups": found}))


if __name__ == "__main__":
    main()
