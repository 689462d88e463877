#!/usr/bin/env python3
"""Prints a CDS Curbs feed (source "bench") for the 12 locations the median and quote benchmarks ask
for, bench:loc-00001..00012, so price_quotes has published data beside each median:

    published_feed.py > feed.json && pricesvc import-rates --source bench feed.json

Weekdays 09:00-18:00 5 cents a minute in 15-minute steps (2 hours at most), free otherwise; every third
zone is tiered instead (200 the first hour, 400 later, at most 1500). Importing it again is a no-op."""
import json

T0 = 1704067200000
METERED, FREE, TIERED = ("b0000000-0000-4000-8000-00000000000%d" % i for i in (1, 2, 3))
policies = [
    {"curb_policy_id": METERED, "published_date": T0, "priority": 1,
     "time_spans": [{"days_of_week": ["mon", "tue", "wed", "thu", "fri"], "time_of_day_start": "09:00", "time_of_day_end": "18:00"}],
     "rules": [{"activity": "parking", "max_stay": 120, "rate": [{"rate": 5, "rate_unit": "minute", "increment_duration": 15}]}]},
    {"curb_policy_id": FREE, "published_date": T0, "priority": 2, "rules": [{"activity": "parking"}]},
    {"curb_policy_id": TIERED, "published_date": T0, "priority": 1,
     "rules": [{"activity": "parking", "rate": [{"rate": 200, "rate_unit": "hour", "end_duration": 1, "maximum_fee": 1500},
                                                 {"rate": 400, "rate_unit": "hour", "start_duration": 1, "maximum_fee": 1500}]}]},
]
zones = [{"curb_zone_id": "b0000000-0000-4000-8000-%012d" % (100 + k), "user_zone_id": "loc-%05d" % k,
          "curb_policy_ids": [TIERED] if k % 3 == 0 else [METERED, FREE],
          "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [0, 1], [1, 1], [0, 0]]]},
          "start_date": T0, "published_date": T0, "last_updated_date": T0} for k in range(1, 13)]
print(json.dumps({"version": "1.0", "time_zone": "America/New_York", "currency": "USD", "last_updated": T0,
                  "author": "pricesvc bench", "data": {"zones": zones, "policies": policies}}))
