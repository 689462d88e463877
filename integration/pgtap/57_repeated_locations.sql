-- A location named twice counts once. Two mature reporters reported 1234 and 777 at X: [X] showed nothing,
-- but [X, X] once showed median_cents 1234 with reporters 4, because the folded histograms were added once
-- per repeat while the per-price rows were not. With one victim and one sybil, [X, X] gave the victim's
-- exact price away.
begin;
\ir _helpers.psql
select plan(17);

-- Two mature reporters at rep:two, folded (as their group's 16th report would fold it), and queued too
-- at rep:queued; a victim and one sybil at rep:victim, folded.
select tap.seed(tap.alice(), 'rep:two', 1234) \g /dev/null
select tap.seed(tap.bob(), 'rep:two', 777) \g /dev/null
select tap.seed(tap.alice(), 'rep:two', 1234, 'daily') \g /dev/null
select tap.seed(tap.bob(), 'rep:two', 777, 'daily') \g /dev/null
select tap.seed(tap.alice(), 'rep:queued', 1234) \g /dev/null
select tap.seed(tap.bob(), 'rep:queued', 777) \g /dev/null
select tap.seed(tap.carol(), 'rep:victim', 4321) \g /dev/null
select tap.seed(tap.dave(), 'rep:victim', 1) \g /dev/null
select private.median_fold(l, k) from (values ('rep:two', 'hourly'), ('rep:two', 'daily'), ('rep:victim', 'hourly')) g(l, k) \g /dev/null
select is((select count(*)::int from private.median_queue where location_id in ('rep:two', 'rep:victim')), 0,
          'the two-reporter groups are folded: their prices are in the histograms');

select is_empty($$select * from public.price_medians(array['rep:two'])$$, '[X] with two reporters: no median');
select is_empty($$select * from public.price_medians(array['rep:two', 'rep:two'])$$, '[X, X]: no median either');
select is_empty($$select * from public.price_medians(array['rep:two', 'rep:two'], 'daily')$$, '[X, X], daily: none');
select is_empty($$select * from public.price_medians(array_fill('rep:two'::text, array[50]))$$,
                'X fifty times: none');
select is_empty($$select * from public.price_medians(array['rep:two', 'rep:other', 'rep:two', null])$$,
                'X twice among other ids and a null: none');
select is_empty($$select * from public.price_medians(array['rep:queued', 'rep:queued'])$$,
                '[X, X] over queued reports: none');
select is_empty($$select * from public.price_medians(array['rep:victim', 'rep:victim'])$$,
                'one victim and one sybil: [X, X] does not give the victim''s price away');
select is_empty($$select * from private.report_medians(array['rep:two', 'rep:two'], null, null)$$,
                'report_medians, every rate kind: none');

select is_empty($$select * from public.price_quotes(array['rep:two', 'rep:two']) where median_cents is not null or reporters is not null$$,
                'price_quotes [X, X]: no median');
select is_empty($$select * from public.price_quotes(array['rep:victim', 'rep:victim', 'rep:victim'], 'hourly') where median_cents is not null$$,
                'price_quotes with the victim three times: no median');

-- As the roles that call them: a reporter through the service, an analyst from psql.
set local role authenticated;
select tap.use_token(tap.token_for(tap.dave())) \g /dev/null
select is_empty($$select * from public.price_medians(array['rep:victim', 'rep:victim'])$$,
                'a reporter''s price_medians [X, X]: none');
select is_empty($$select * from public.price_quotes(array['rep:victim', 'rep:victim']) where median_cents is not null$$,
                'a reporter''s price_quotes [X, X]: none');
reset role;
set local role price_analyst;
select is_empty($$select * from public.price_medians(array['rep:victim', 'rep:victim'])$$,
                'an analyst''s price_medians(array[X, X]): none');
reset role;

-- With a third reporter the median appears, and a repeat changes nothing.
select tap.seed(tap.carol(), 'rep:two', 500) \g /dev/null
select results_eq($$select * from public.price_medians(array['rep:two', 'rep:two', 'rep:two'])$$,
                  $$select * from public.price_medians(array['rep:two'])$$,
                  'three reporters: [X, X, X] is exactly [X]');
select results_eq($$select median_cents, reporters, reports from public.price_medians(array['rep:two', 'rep:two'])$$,
                  $$values (777, 3, 3)$$, 'and counts each reporter once');
select results_eq($$select median_cents, reporters from public.price_quotes(array['rep:two', 'rep:two'])$$,
                  $$values (777, 3)$$, 'price_quotes [X, X]: one row, each reporter once');

select * from finish();
rollback;
