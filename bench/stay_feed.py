#!/usr/bin/env python3
"""Prints a CDS Curbs feed (source "bench-stay") with one metered zone, bench-stay:metered, for the
stay-length curve of bench/run.sh (row 15: price_quotes for 1 location, stays of 1 hour to 366 days):

    stay_feed.py > feed.json && pricesvc import-rates --source bench-stay feed.json

Weekdays 08:00-20:00 and Saturdays 09:00-13:00, 200 cents an hour in 15-minute steps, free otherwise, no
max_stay and no no-parking window: a stay of any length is allowed and priced to its end, so a year-long
stay walks the whole year (a zone with a max_stay stops a long stay on its first day, and would make the
curve flat). America/New_York, so a year crosses both DST changes. Importing it again is a no-op."""
import json

T0 = 1704067200000
METERED, FREE = ("c0000000-0000-4000-8000-00000000000%d" % i for i in (1, 2))
policies = [
    {"curb_policy_id": METERED, "published_date": T0, "priority": 1,
     "time_spans": [{"days_of_week": ["mon", "tue", "wed", "thu", "fri"], "time_of_day_start": "08:00", "time_of_day_end": "20:00"},
                    {"days_of_week": ["sat"], "time_of_day_start": "09:00", "time_of_day_end": "13:00"}],
     "rules": [{"activity": "parking", "rate": [{"rate": 200, "rate_unit": "hour", "increment_duration": 15}]}]},
    {"curb_policy_id": FREE, "published_date": T0, "priority": 2, "rules": [{"activity": "parking"}]},
]
zones = [{"curb_zone_id": "c0000000-0000-4000-8000-000000000100", "user_zone_id": "metered",
          "curb_policy_ids": [METERED, FREE],
          "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [0, 1], [1, 1], [0, 0]]]},
          "start_date": T0, "published_date": T0, "last_updated_date": T0}]
print(json.dumps({"version": "1.0", "time_zone": "America/New_York", "currency": "USD", "last_updated": T0,
                  "author": "pricesvc bench", "data": {"zones": zones, "policies": policies}}))
