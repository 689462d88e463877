#!/usr/bin/env python3
"""`make demo`: a few reporters and their reports in make run's database, so medians show at once.

Everything goes through the real path: each reporter signs up anonymously and submits over the HTTP
API, so the cap, the checks and the policies apply as to any app. Only one thing is done behind the
service's back, as the cluster's superuser: the demo identities are aged past the 24-hour maturity
rule (auth.users.created_at), which is what time would do. Real reports are never touched.

Run it twice and nothing is added: a reporter whose reports are already in the database (each demo
row has a fixed client_report_id) is skipped. Python's standard library only; called by scripts/dev/demo.sh, which finds the URL, the anon
key and the cluster.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import urllib.error
import urllib.request
import uuid

# (location, rate kind, price in cents) per reporter. garage-123 and garage-7 are the README's; garage-19
# has only two reporters, below the threshold of three, so it never shows.
REPORTERS: dict[int, list[tuple]] = {
    1: [("sfmta:garage-123", "hourly", 325), ("sfmta:garage-123", "daily", 2800), ("sfmta:garage-7", "hourly", 250),
        ("sfmta:lot-44", "flat", 1200), ("sfmta:garage-88", "monthly", 29500), ("sfmta:garage-19", "hourly", 400)],
    2: [("sfmta:garage-123", "hourly", 350), ("sfmta:garage-123", "daily", 3000), ("sfmta:garage-7", "hourly", 275),
        ("sfmta:lot-44", "flat", 1500), ("sfmta:garage-88", "monthly", 31000), ("sfmta:garage-19", "hourly", 450)],
    3: [("sfmta:garage-123", "hourly", 350), ("sfmta:garage-123", "daily", 3200), ("sfmta:garage-7", "hourly", 300),
        ("sfmta:lot-44", "flat", 1500), ("sfmta:garage-88", "monthly", 32500)],
    4: [("sfmta:garage-123", "hourly", 375), ("sfmta:garage-7", "hourly", 275)],
    5: [("sfmta:garage-123", "hourly", 400)],
}
# Reports with the place's coordinates as each app knows it (location, kind, cents, lat, lng): a lot no
# import places, so three reporters' coordinates make it a community place (their per-coordinate median,
# docs/api.md), 1.1 km from the README's Ferry Building search; and one reporter's coordinates for
# garage-7, which the places file places, so they are stored and not used.
PLACED: dict[int, list[tuple]] = {
    1: [("mapkit:pier-23-lot", "hourly", 500, 37.80352, -122.40101), ("sfmta:garage-7", "daily", 2400, 37.79, -122.39)],
    2: [("mapkit:pier-23-lot", "hourly", 450, 37.80352, -122.40101)],
    3: [("mapkit:pier-23-lot", "hourly", 550, 37.80361, -122.40094)],
}
NAMESPACE = uuid.UUID("6f1c1b0e-3a5e-4c3e-9d1e-707269636573")  # client_report_ids are stable per row


class Demo:
    def __init__(self, url: str, key: str, pghost: str, pguser: str):
        self.url, self.key, self.pghost, self.pguser = url.rstrip("/"), key, pghost, pguser

    def post(self, path: str, body, token: str | None = None) -> tuple[int, str]:
        headers = {"apikey": self.key, "Content-Type": "application/json", "Prefer": "return=minimal"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        request = urllib.request.Request(self.url + path, data=json.dumps(body).encode(), headers=headers,
                                         method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def psql(self, sql: str) -> str:
        result = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", self.pghost,
                                 "-U", self.pguser, "-d", "pricesvc", "-c", sql],
                                capture_output=True, text=True, timeout=30)
        if result.returncode != 0:
            sys.exit(f"demo: psql failed: {result.stderr.strip()}")
        return result.stdout.strip()

    @staticmethod
    def report_id(number: int, location: str, kind: str) -> str:
        return str(uuid.uuid5(NAMESPACE, f"{number}:{location}:{kind}"))

    def ids_sql(self) -> str:
        """The demo's client_report_ids as an SQL array: how the demo finds its reporters (user_metadata
        keeps only the keys PRICESVC_USER_METADATA_KEYS allows, none by default)."""
        ids = [self.report_id(number, row[0], row[1]) for table in (REPORTERS, PLACED) for number, rows in table.items()
               for row in rows]
        return "array[" + ",".join(f"'{i}'" for i in ids) + "]::uuid[]"

    def present(self) -> set[int]:
        """Demo reporters that already have reports."""
        out = self.psql(f"select client_report_id from public.price_reports where client_report_id = any ({self.ids_sql()})")
        stored = set(out.split())
        return {number for number, rows in REPORTERS.items()
                if self.report_id(number, rows[0][0], rows[0][1]) in stored}

    def add(self, number: int, rows: list[tuple[str, str, int]]) -> None:
        status, body = self.post("/auth/v1/signup", {"data": {}})
        if status != 200:
            sys.exit(f"demo: sign-up answered {status}: {body}")
        token = json.loads(body)["access_token"]
        reports = [{"location_id": location, "rate_kind": kind, "price_cents": cents, "currency": "USD",
                    "client_report_id": self.report_id(number, location, kind)}
                   for location, kind, cents in rows]
        # Every row of one request has the same keys: the reports with coordinates go in a second one.
        placed = [{"location_id": location, "rate_kind": kind, "price_cents": cents, "currency": "USD",
                   "client_report_id": self.report_id(number, location, kind), "lat": lat, "lng": lng}
                  for location, kind, cents, lat, lng in PLACED.get(number, [])]
        for batch in (reports, placed):
            if not batch:
                continue
            status, body = self.post("/rest/v1/price_reports", batch, token)
            if status != 201:
                sys.exit(f"demo: submitting reporter {number}'s reports answered {status}: {body}")

    def age(self) -> int:
        """As time would: identities at least two days old, so they count toward medians."""
        return int(self.psql("with aged as (update auth.users set created_at = now() - interval '2 days' "
                             "where id in (select reporter_id from public.price_reports "
                             f"where client_report_id = any ({self.ids_sql()})) "
                             "and created_at > now() - interval '2 days' returning 1) select count(*) from aged"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for name in ("url", "key", "pghost", "pguser"):
        parser.add_argument("--" + name, required=True)
    args = parser.parse_args()
    demo = Demo(args.url, args.key, args.pghost, args.pguser)

    present = demo.present()
    missing = [number for number in REPORTERS if number not in present]
    for number in missing:
        demo.add(number, REPORTERS[number])
    aged = demo.age()
    reports = sum(len(REPORTERS[number]) + len(PLACED.get(number, [])) for number in missing)
    if missing:
        print(f"demo: {len(missing)} reporters signed up and submitted {reports} reports; {aged} identities aged 2 days")
    else:
        print(f"demo: already there ({len(REPORTERS)} reporters); nothing added")
    print("demo: medians now show for sfmta:garage-123, sfmta:garage-7, sfmta:lot-44 and sfmta:garage-88;\n"
          "      sfmta:garage-19 has two reporters, below the threshold of three, and stays hidden;\n"
          "      mapkit:pier-23-lot is a community place, where three reporters' apps put it: places_nearby\n"
          "      finds it around lat 37.8035, lng -122.4010")


if __name__ == "__main__":
    main()
