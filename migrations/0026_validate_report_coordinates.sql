-- The coordinate checks of 0025, validated: VALIDATE CONSTRAINT reads every report under a SHARE UPDATE
-- EXCLUSIVE lock, which inserts do not wait for (docs/upgrading.md, "What a migration may lock"). No
-- existing row can fail: the columns are new, so every earlier report has neither.
alter table public.price_reports validate constraint price_reports_coordinates_together;
alter table public.price_reports validate constraint price_reports_lat_range;
alter table public.price_reports validate constraint price_reports_lng_range;
