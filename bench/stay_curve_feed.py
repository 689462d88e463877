#!/usr/bin/env python3
"""Prints a CDS Curbs feed (source "curve") with one zone, curve:stay, for the stay-length curve
(bench/stay_curve.sh): weekdays 09:00-18:00 5 cents a minute in 15-minute steps, a calendar-day rate
of 1 000 at all other times, no max_stay, so a stay of any length is priced to its end.

    stay_curve_feed.py > feed.json && pricesvc import-rates --source curve feed.json"""
import json

T0 = 1704067200000
METERED, NIGHTS = "c0000000-0000-4000-8000-000000000001", "c0000000-0000-4000-8000-000000000002"
policies = [
    {"curb_policy_id": METERED, "published_date": T0, "priority": 1,
     "time_spans": [{"days_of_week": ["mon", "tue", "wed", "thu", "fri"], "time_of_day_start": "09:00", "time_of_day_end": "18:00"}],
     "rules": [{"activity": "parking", "rate": [{"rate": 5, "rate_unit": "minute", "increment_duration": 15}]}]},
    {"curb_policy_id": NIGHTS, "published_date": T0, "priority": 2,
     "rules": [{"activity": "parking", "rate": [{"rate": 1000, "rate_unit": "day", "rate_unit_period": "calendar"}]}]},
]
zones = [{"curb_zone_id": "c0000000-0000-4000-8000-000000000100", "user_zone_id": "stay",
          "curb_policy_ids": [METERED, NIGHTS],
          "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [0, 1], [1, 1], [0, 0]]]},
          "start_date": T0, "published_date": T0, "last_updated_date": T0}]
print(json.dumps({"version": "1.0", "time_zone": "America/New_York", "currency": "USD", "last_updated": T0,
                  "author": "pricesvc bench", "data": {"zones": zones, "policies": policies}}))
