-- wrk script for every HTTP measurement of bench/run.sh. The mode and inputs come from the
-- environment (wrk passes it through), so one file serves all runs:
--   BENCH_MODE    healthz | nginx | medians | quotes | submit | mix (healthz + medians, alternating)
--                 | search (the mixed search workload: Zipf-drawn locations, searches and submissions)
--                 | places (places_nearby, 500 m, 20 results, no stay, at 2 000 points drawn in the seeded
--                   area per thread, handed out in turn: bench/places_seed.sql, pgbench-places.sql)
--   BENCH_QUOTE_ARGS  for quotes: the JSON members after location_ids (rate_kind, starts_at, duration)
--   BENCH_APIKEY  the anon key (`pricesvc keys`)
--   BENCH_READER  an access token for the median reads
--   BENCH_TOKENS  file with one access token per line (submit: thread k of T cycles through
--                 its own slice, so with N tokens a reporter is used ceil(requests / N) times)
--   BENCH_THREADS the -t given to wrk (to slice the token file)
-- search only:
--   BENCH_LOCATIONS   the seeded locations bench:loc-00001.. (rank k of the Zipf law is bench:loc-k)
--   BENCH_ZIPF_S      the exponent s of the law (weight of rank k: k^-s)
--   BENCH_SUBMIT_PERCENT  the share of submissions; the rest are searches, half medians, half quotes,
--                     each of 12 distinct locations
--   BENCH_MIX_TOKENS  file with one access token per line for the submissions (sliced per thread, each
--                     token used once per run while the slice lasts)
-- Requests are formatted once in init(); request() only hands out prebuilt strings, so the
-- Lua cost per request is the same small constant on every side. (search formats its submissions in
-- request(), one in twenty: each needs a token of its own.)
local mode = os.getenv("BENCH_MODE") or "healthz"
local apikey = os.getenv("BENCH_APIKEY") or ""
local reader = os.getenv("BENCH_READER") or ""

local locations = {}
for k = 1, 12 do locations[k] = string.format('"bench:loc-%05d"', k) end
local medians_body = '{"location_ids":[' .. table.concat(locations, ",") .. ']}'
local quotes_body = '{"location_ids":[' .. table.concat(locations, ",") .. '],' .. (os.getenv("BENCH_QUOTE_ARGS") or "") .. '}'

local threads = {}
local next_id = 0
function setup(thread)
  thread:set("tid", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

local requests = {}
local index = 0
status_counts = {}

local function medians_request()
  return wrk.format("POST", "/rest/v1/rpc/price_medians", {
    ["apikey"] = apikey,
    ["Authorization"] = "Bearer " .. reader,
    ["Content-Type"] = "application/json",
  }, medians_body)
end

-- The mixed search workload. Every thread draws from the same Zipf law with its own seed: 2 000 searches
-- prebuilt (each of 12 distinct locations, medians or quotes by a coin), handed out in turn, and a
-- submission instead with probability BENCH_SUBMIT_PERCENT / 100, to a location drawn from the same law.
local search_submit_share, mix_tokens, mix_next, zipf_cumulative = 0, {}, 0, {}

local function zipf_draw()
  local u = math.random() * zipf_cumulative[#zipf_cumulative]
  local lo, hi = 1, #zipf_cumulative
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if zipf_cumulative[mid] < u then lo = mid + 1 else hi = mid end
  end
  return lo
end

local function location_id(rank)
  return string.format('"bench:loc-%05d"', rank)
end

local function search_init()
  local count = tonumber(os.getenv("BENCH_LOCATIONS") or "20000")
  local s = tonumber(os.getenv("BENCH_ZIPF_S") or "1.1")
  search_submit_share = tonumber(os.getenv("BENCH_SUBMIT_PERCENT") or "5") / 100
  local total = 0
  for k = 1, count do
    total = total + k ^ (-s)
    zipf_cumulative[k] = total
  end
  math.randomseed(7919 * (tid + 1))
  local headers = {
    ["apikey"] = apikey,
    ["Authorization"] = "Bearer " .. reader,
    ["Content-Type"] = "application/json",
  }
  local per_search = math.min(12, count)
  for n = 1, 2000 do
    local seen, ids = {}, {}
    while #ids < per_search do
      local rank = zipf_draw()
      if not seen[rank] then
        seen[rank] = true
        ids[#ids + 1] = location_id(rank)
      end
    end
    local list = '{"location_ids":[' .. table.concat(ids, ",") .. ']'
    if math.random() < 0.5 then
      requests[n] = wrk.format("POST", "/rest/v1/rpc/price_medians", headers, list .. '}')
    else
      requests[n] = wrk.format("POST", "/rest/v1/rpc/price_quotes", headers,
                               list .. ',' .. (os.getenv("BENCH_QUOTE_ARGS") or "") .. '}')
    end
  end
  if search_submit_share > 0 then
    local tokens = {}
    for line in io.lines(os.getenv("BENCH_MIX_TOKENS")) do
      if #line > 0 then tokens[#tokens + 1] = line end
    end
    local nthreads = tonumber(os.getenv("BENCH_THREADS") or "1")
    local per = math.floor(#tokens / nthreads)
    if per == 0 then error("BENCH_MIX_TOKENS holds fewer tokens than threads") end
    for k = 1, per do mix_tokens[k] = tokens[tid * per + k] end
  end
end

local function search_submission()
  mix_next = mix_next % #mix_tokens + 1
  local body = string.format('{"location_id":%s,"rate_kind":"hourly","price_cents":%d,"currency":"USD"}',
                             location_id(zipf_draw()), 400 + math.random(0, 1599))
  return wrk.format("POST", "/rest/v1/price_reports", {
    ["apikey"] = apikey,
    ["Authorization"] = "Bearer " .. mix_tokens[mix_next],
    ["Content-Type"] = "application/json",
    ["Prefer"] = "return=minimal",
  }, body)
end

function init(args)
  if mode == "healthz" then
    requests[1] = wrk.format("GET", "/healthz")
  elseif mode == "nginx" then
    requests[1] = wrk.format("GET", "/")
  elseif mode == "medians" then
    requests[1] = medians_request()
  elseif mode == "quotes" then
    requests[1] = wrk.format("POST", "/rest/v1/rpc/price_quotes", {
      ["apikey"] = apikey,
      ["Authorization"] = "Bearer " .. reader,
      ["Content-Type"] = "application/json",
    }, quotes_body)
  elseif mode == "places" then
    -- The area of bench/places_seed.sql, to the microdegree, as pgbench-places.sql draws.
    math.randomseed(os.time() + (tid or 0) * 7919)
    local headers = {["apikey"] = apikey, ["Authorization"] = "Bearer " .. reader, ["Content-Type"] = "application/json"}
    for n = 1, 2000 do
      local body = string.format('{"lat":%.6f,"lng":%.6f,"radius_m":500,"rate_kind":"hourly","max_results":20}',
                                 math.random(37700000, 37820000) / 1e6, math.random(-122520000, -122360000) / 1e6)
      requests[n] = wrk.format("POST", "/rest/v1/rpc/places_nearby", headers, body)
    end
  elseif mode == "mix" then
    requests[1] = wrk.format("GET", "/healthz")
    requests[2] = medians_request()
  elseif mode == "search" then
    search_init()
  elseif mode == "submit" then
    local tokens = {}
    for line in io.lines(os.getenv("BENCH_TOKENS")) do
      if #line > 0 then tokens[#tokens + 1] = line end
    end
    local nthreads = tonumber(os.getenv("BENCH_THREADS") or "1")
    local per = math.floor(#tokens / nthreads)
    local first = tid * per
    for k = 1, per do
      local token = tokens[first + k]
      -- The same row pgbench inserts (bench/run.sh), under this side's own location id: the two
      -- sides must write the same shape of data, or they touch different numbers of index pages
      -- (and write different amounts of WAL after each checkpoint) for reasons that are not HTTP.
      local body = '{"location_id":"bench:sub-http","rate_kind":"hourly","price_cents":1234,"currency":"USD"}'
      requests[k] = wrk.format("POST", "/rest/v1/price_reports", {
        ["apikey"] = apikey,
        ["Authorization"] = "Bearer " .. token,
        ["Content-Type"] = "application/json",
        ["Prefer"] = "return=minimal",
      }, body)
    end
  else
    error("unknown BENCH_MODE " .. mode)
  end
end

function request()
  if search_submit_share > 0 and math.random() < search_submit_share then
    return search_submission()
  end
  index = index % #requests + 1
  return requests[index]
end

if mode ~= "healthz" and mode ~= "nginx" then
  -- Not for the two hello-world runs, where it would cost the load generator: count statuses so
  -- that only 201s count as submissions, and 429s, 503s and timeouts are reported apart.
  function response(status, headers, body)
    status_counts[status] = (status_counts[status] or 0) + 1
  end
end

function done(summary, latency, requests)
  local statuses = {}
  for _, thread in ipairs(threads) do
    local counts = thread:get("status_counts")
    if counts then
      for status, n in pairs(counts) do statuses[status] = (statuses[status] or 0) + n end
    end
  end
  local parts = {}
  for status, n in pairs(statuses) do parts[#parts + 1] = string.format("%d:%d", status, n) end
  table.sort(parts)
  local e = summary.errors
  io.write(string.format(
    "BENCH_RESULT requests=%d duration_us=%d non2xx=%d connect=%d read=%d write=%d timeout=%d p50_us=%d p99_us=%d statuses=%s\n",
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(99), table.concat(parts, ",")))
end
