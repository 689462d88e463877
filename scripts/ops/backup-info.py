#!/usr/bin/python3
"""The pgBackRest repository as an operator sees it, for scripts/dev/backup.sh and scripts/topology/cluster.sh.

  backup-info.py list REPO -- PGBACKREST...     {"stanza", "repository", "archive": {"min", "max"},
                                                "timelines": [...], "backups": [...]}
  backup-info.py last -- PGBACKREST...          the newest backup, as one element of "backups"
  backup-info.py plan [--to TIME EPOCH] [--timeline N|latest] -- PGBACKREST...
                                                what a restore would do, as JSON (see plan()); exit 3
                                                with the reason on stderr when it cannot succeed

PGBACKREST... is the pgbackrest command with its --config and --stanza (and whatever runs it as the
database's OS user); this script runs its info, repo-ls and repo-get. Standard library only (Debian's
python3, as Patroni's), plus pg_waldump and zstd to read archived WAL.

Each backup: {"label", "type", "prior", "timeline", "start", "stop" (as PostgreSQL prints a UTC
timestamptz), "size_bytes" (the database as backed up), "delta_bytes" (what changed since the prior
backup), "stored_bytes" (what this backup added to the repository, compressed), "wal_start", "wal_stop"
(the WAL segments it needs), "lsn_start", "lsn_stop"}.

Each timeline (every one whose WAL is in the archive): {"timeline", "parent", "branched_at_lsn" (where
it left its parent), "started" (when its history file reached the repository, within a second of the
promotion that began it), "reason" (PostgreSQL's: "no recovery target specified" after a failover or
a restore to the end, "before TIME" after a point-in-time restore), "last_commit", "last_commit_lsn"
(the newest transaction end archived on it), "last_data", "last_data_lsn" (the same, not counting the
marks a restore commits to close the archive), "segments": [first, last]}.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from datetime import datetime, timezone

PGBIN = os.environ.get("PGBIN", "/usr/lib/postgresql/15/bin")
# Archived segments read backwards from a timeline's end to find its last commit.
SEGMENTS_SCANNED = 4


class Refusal(Exception):
    """A restore that cannot succeed, and why."""


def stamp(epoch):
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M:%S+00")


def stamp_precise(epoch):
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f+00")


def lsn_value(lsn):
    high, low = lsn.split("/")
    return (int(high, 16) << 32) + int(low, 16)


class Repository:
    def __init__(self, pgbackrest, cache_path=None):
        self.pgbackrest = pgbackrest
        self.scratch = None
        # What archived files say, by repository path: a segment's name carries its checksum and a
        # history file never changes, so an answer once read holds for good.
        self.cache_path = cache_path
        self.cache = {}
        if cache_path:
            try:
                with open(cache_path) as f:
                    self.cache = json.load(f)
            except (OSError, ValueError):
                self.cache = {}
        info = json.loads(self.run("info", "--output=json"))
        self.stanza = info[0] if info else {}
        self.name = self.stanza.get("name")
        archives = self.stanza.get("archive") or []
        self.archive_id = archives[-1]["id"] if archives else None
        self._timelines = None

    def run(self, *args, binary=False):
        result = subprocess.run([*self.pgbackrest, *args], capture_output=True, cwd="/")
        if result.returncode != 0:
            raise Refusal(f"pgbackrest {args[0]} failed: {result.stderr.decode(errors='replace').strip()}")
        return result.stdout if binary else result.stdout.decode()

    # ---------------------------------------------------------------- backups

    def backups(self):
        out = []
        for b in self.stanza.get("backup", []):
            archive = b.get("archive") or {}
            lsn = b.get("lsn") or {}
            out.append({
                "label": b["label"],
                "type": b["type"],
                "prior": b.get("prior"),
                "timeline": int(archive["start"][:8], 16) if archive.get("start") else None,
                "start": stamp(b["timestamp"]["start"]),
                "stop": stamp(b["timestamp"]["stop"]),
                "stop_epoch": b["timestamp"]["stop"],
                "size_bytes": b["info"]["size"],
                "delta_bytes": b["info"]["delta"],
                "stored_bytes": b["info"]["repository"]["delta"],
                "wal_start": archive.get("start"),
                "wal_stop": archive.get("stop"),
                "lsn_start": lsn.get("start"),
                "lsn_stop": lsn.get("stop"),
            })
        return out

    # ---------------------------------------------------------------- timelines

    def timelines(self):
        """Every timeline with WAL in the archive, oldest first (see the module's docstring)."""
        if self._timelines is not None:
            return self._timelines
        self._timelines = []
        if not self.archive_id:
            return self._timelines
        root = f"archive/{self.name}/{self.archive_id}"
        listing = json.loads(self.run("repo-ls", root, "--recurse", "--output=json"))
        segments, histories = {}, {}
        for path, entry in listing.items():
            name = path.rsplit("/", 1)[-1]
            if entry.get("type") != "file":
                continue
            if m := re.fullmatch(r"([0-9A-F]{8})\.history", name):
                histories[int(m[1], 16)] = (path, entry.get("time"))
            elif m := re.fullmatch(r"([0-9A-F]{24})(\.partial)?-[0-9a-f]{40}(\.\w+)?", name):
                timeline = int(m[1][:8], 16)
                # A complete segment wins over the .partial one the promoted standby archived.
                key = m[1]
                if key not in segments.get(timeline, {}) or not m[2]:
                    segments.setdefault(timeline, {})[key] = f"{root}/{path}"
        for number in sorted(set(segments) | set(histories)):
            parents = []  # (timeline, switchpoint, reason), oldest first
            started = None
            if number in histories:
                path, started = histories[number]
                key = f"{root}/{path}"
                if key not in self.cache:
                    self.cache[key] = self.run("repo-get", key)
                for line in self.cache[key].splitlines():
                    fields = line.split("\t")
                    if len(fields) >= 2 and fields[0].strip().isdigit():
                        parents.append((int(fields[0]), fields[1].strip(), fields[2].strip() if len(fields) > 2 else ""))
            own = sorted(segments.get(number, {}).items())
            timeline = {
                "timeline": number,
                "parent": parents[-1][0] if parents else None,
                "branched_at_lsn": parents[-1][1] if parents else None,
                "started": stamp(started),
                "started_epoch": started,
                "reason": parents[-1][2] if parents else None,
                "last_commit": None, "last_commit_epoch": None, "last_commit_lsn": None,
                "last_data": None, "last_data_lsn": None,
                "segments": [own[0][0], own[-1][0]] if own else [],
                "history": parents,
            }
            begins = lsn_value(timeline["branched_at_lsn"]) if parents else 0
            # "last_commit": the newest transaction end (a time target needs one after it); "last_data":
            # the newest that is not a restore's mark (what tells whether a timeline holds data).
            for _, path in reversed(own[-SEGMENTS_SCANNED:]):
                key = f"{path}@{begins}"
                if key not in self.cache:
                    self.cache[key] = self.last_transaction_end(path, begins)
                newest, data = self.cache[key]
                if newest and timeline["last_commit"] is None:
                    timeline["last_commit_lsn"], timeline["last_commit_epoch"] = newest
                    timeline["last_commit"] = stamp_precise(newest[1])
                if data:
                    timeline["last_data_lsn"], timeline["last_data"] = data[0], stamp_precise(data[1])
                    break
            self._timelines.append(timeline)
        return self._timelines

    def last_transaction_end(self, path, begins):
        """(LSN, epoch) of the newest commit or abort in an archived segment at or after `begins`, and
        of the newest that is not a restore's end-of-archive mark (scripts/ops/backup-lib.sh archive_now)."""
        if self.scratch is None:
            self.scratch = tempfile.mkdtemp(prefix="pricesvc-wal-")
        name = path.rsplit("/", 1)[-1][:24]
        target = os.path.join(self.scratch, name)
        data = self.run("repo-get", path, binary=True)
        if path.endswith(".zst"):
            data = subprocess.run(["zstd", "-dcq"], input=data, capture_output=True, check=True).stdout
        elif path.endswith(".gz"):
            import gzip
            data = gzip.decompress(data)
        elif path.endswith((".lz4", ".bz2")):
            raise Refusal(f"cannot read {path}: only zst and gz compression are supported here")
        with open(target, "wb") as f:
            f.write(data)
        # A segment that ends inside a record makes pg_waldump complain at the end; what it printed holds.
        dump = subprocess.run([f"{PGBIN}/pg_waldump", target], capture_output=True, text=True)
        os.unlink(target)
        newest = data = None
        marks = set(re.findall(r"tx: +(\d+), lsn: \S+ prev \S+ desc: MESSAGE transactional, prefix \"pricesvc-restore\"",
                               dump.stdout))
        for m in re.finditer(r"tx: +(\d+), lsn: ([0-9A-F]+/[0-9A-F]+),.*desc: (?:COMMIT|ABORT) "
                             r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) UTC", dump.stdout):
            if lsn_value(m[2]) >= begins:
                when = datetime.strptime(m[3] + ("" if "." in m[3] else ".0"), "%Y-%m-%d %H:%M:%S.%f")
                newest = (m[2], when.replace(tzinfo=timezone.utc).timestamp())
                if m[1] not in marks:
                    data = newest
        return newest, data

    def close(self):
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)
        if self.cache_path:
            try:
                with open(self.cache_path + ".new", "w") as f:
                    json.dump(self.cache, f)
                os.replace(self.cache_path + ".new", self.cache_path)
            except OSError:
                pass  # a cache that cannot be written costs time, not answers


def public_timeline(t):
    return {k: v for k, v in t.items() if not k.endswith("_epoch") and k != "history"}


def describe(t):
    if t["parent"] is None:
        origin = "the original"
    else:
        origin = f"from {t['parent']} at {t['branched_at_lsn']} ({t['reason']}), started {t['started']}"
    end = f"last commit {t['last_data']}" if t["last_data"] else "no data committed"
    return f"timeline {t['timeline']}: {origin}; {end}"


# ---------------------------------------------------------------- restore plans

def plan(repo, time_text, time_epoch, timeline_choice):
    """Which timeline and backup a restore uses, and pgBackRest's restore options for it.

    --to TIME: the timeline given, or else the one in use at TIME (the newest that had started by then);
    the newest backup on that timeline's history that finished at least a second before TIME; WAL up to
    TIME. Refused when the archive holds no transaction end after TIME on that timeline (PostgreSQL
    could not tell it reached TIME) or TIME is before the timeline began.
    No TIME: the end of the timeline given, or of the newest one. Without --timeline it is refused when
    another timeline holds commits the newest one does not have (after a point-in-time restore, the
    history after the point): the operator picks, and is told what each holds."""
    timelines = {t["timeline"]: t for t in repo.timelines()}
    backups = repo.backups()
    if not backups:
        raise Refusal("the repository has no backup")
    if not timelines:
        raise Refusal("the repository's archive is empty")
    newest = max(timelines)
    listing = "".join("\n  " + describe(t) for t in timelines.values())

    def pick(choice):
        if choice == "latest":
            return newest
        if choice not in timelines:
            raise Refusal(f"no timeline {choice} in the archive: {listing}")
        return choice

    def leaves(number, on):
        """The LSN up to which timeline `on`'s history is `number`'s WAL (None: never; inf: it is `on`).
        Not just `number`'s own switch point: a recovery that followed a newer timeline and stopped at
        a time stops earlier, and its history file then lists a smaller switch point after it."""
        if number == on:
            return float("inf")
        history = timelines[on]["history"]
        for i, (parent, _, _) in enumerate(history):
            if parent == number:
                return min(lsn_value(switchpoint) for _, switchpoint, _ in history[i:])
        return None

    def usable(backup, on):
        """On `on`'s history: its WAL up to its end is WAL that timeline `on` replays."""
        bound = leaves(backup["timeline"], on)
        return bound is not None and backup["lsn_stop"] is not None and lsn_value(backup["lsn_stop"]) <= bound

    if time_text:
        if timeline_choice is None:
            started = [n for n, t in timelines.items() if t["started_epoch"] is None or t["started_epoch"] <= time_epoch]
            if not started:
                raise Refusal(f"nothing in the repository is as old as {time_text} (no backup finished before it, "
                              f"no timeline had started): {listing}")
            number, why = max(started), "in use at the target time"
        else:
            number, why = pick(timeline_choice), "given"
        chosen = timelines[number]
        if chosen["started_epoch"] is not None and time_epoch < chosen["started_epoch"]:
            raise Refusal(f"timeline {number} began at {chosen['started']}, after {time_text}: leave out --timeline "
                          f"for the timeline in use then: {listing}")
        if chosen["last_commit_epoch"] is None or chosen["last_commit_epoch"] <= time_epoch:
            raise Refusal(f"the archive of timeline {number} holds no commit after {time_text} "
                          f"(its last: {chosen['last_commit'] or 'none'}), so recovery could not tell it reached "
                          f"that time; restore its end with --timeline {number} instead: {listing}")
        candidates = [b for b in backups if usable(b, number) and b["stop_epoch"] + 1 <= time_epoch]
        if not candidates:
            raise Refusal(f"no backup on the history of timeline {number} finished before {time_text} "
                          f"(backups: {', '.join(b['label'] + ' stopped ' + b['stop'] for b in backups)})")
        backup = candidates[-1]
        options = ["--type=time", f"--target={time_text}", "--target-action=promote"]
    else:
        if timeline_choice is None:
            # A commit at or after the point where the newest timeline's history leaves a timeline is
            # one the newest does not have (a point-in-time restore stops before the first commit
            # after its target, and that commit's LSN is the switch point).
            beyond = [n for n, t in timelines.items() if n != newest and t["last_data_lsn"] is not None
                      and (leaves(n, newest) is None or lsn_value(t["last_data_lsn"]) >= leaves(n, newest))]
            if beyond:
                raise Refusal(
                    "the latest point is ambiguous: timeline(s) "
                    + ", ".join(str(n) for n in beyond)
                    + f" hold commits that the newest timeline {newest} does not have (it began at an earlier "
                    + "point, e.g. a point-in-time restore). Restore with --timeline latest (the end of "
                    + f"{newest}) or --timeline N (the end of N). {listing}")
            number, why = newest, "the newest, and no other holds more"
        else:
            number, why = pick(timeline_choice), "given"
        candidates = [b for b in backups if usable(b, number)]
        if not candidates:
            raise Refusal(f"no backup on the history of timeline {number}: {listing}")
        backup = candidates[-1]
        options = ["--type=default"]
    # PostgreSQL follows the newest timeline by default; any other is named (a setting that stays in
    # the running server's pg_settings until its next restart, hence not named when not needed).
    if number != newest:
        options.append(f"--target-timeline={number}")
    chosen = timelines[number]
    return {
        "target": time_text or "latest",
        "timeline": number,
        "timeline_chosen": why,
        "timeline_last_commit": chosen["last_commit"],
        "restored_backup": backup["label"],
        "backup_timeline": backup["timeline"],
        "backup_stop": backup["stop"],
        "pgbackrest_options": options + [f"--set={backup['label']}"],
    }


def main():
    args = sys.argv[1:]
    if args[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return
    # Misused (no `--`, no command, no pgbackrest command line): the usage, not a traceback.
    if "--" not in args or args.index("--") == 0 or args.index("--") == len(args) - 1 \
            or args[0] not in ("list", "last", "plan") or (args[0] == "list" and args.index("--") < 2):
        print("\n\n".join(__doc__.split("\n\n")[:2]), file=sys.stderr)
        sys.exit(2)
    split = args.index("--")
    own, pgbackrest = args[:split], args[split + 1:]
    command = own[0]
    repo = None
    try:
        repo = Repository(pgbackrest, os.environ.get("BACKUP_INFO_CACHE"))
        if command == "last":
            found = repo.backups()
            if not found:
                sys.exit(1)
            del found[-1]["stop_epoch"]
            print(json.dumps(found[-1]))
        elif command == "list":
            archive = {"min": None, "max": None}
            for a in repo.stanza.get("archive", []):
                archive["min"] = archive["min"] or a.get("min")
                archive["max"] = a.get("max") or archive["max"]
            found = repo.backups()
            for b in found:
                del b["stop_epoch"]
            print(json.dumps({"stanza": repo.name, "repository": own[1], "archive": archive,
                              "status": (repo.stanza.get("status") or {}).get("message"),
                              "timelines": [public_timeline(t) for t in repo.timelines()], "backups": found}))
        elif command == "plan":
            time_text = time_epoch = timeline = None
            rest = own[1:]
            while rest:
                if rest[0] == "--to":
                    time_text, time_epoch = rest[1], float(rest[2])
                    rest = rest[3:]
                elif rest[0] == "--timeline":
                    timeline = rest[1] if rest[1] == "latest" else int(rest[1])
                    rest = rest[2:]
                else:
                    raise SystemExit(f"plan: unknown argument {rest[0]}")
            print(json.dumps(plan(repo, time_text, time_epoch, timeline)))
        else:
            raise SystemExit(f"unknown command {command}")
    except Refusal as refusal:
        print(str(refusal), file=sys.stderr)
        sys.exit(3)
    finally:
        if repo:
            repo.close()


if __name__ == "__main__":
    main()
