-- wrk script for every HTTP measurement of bench/run.sh. The mode and inputs come from the
-- environment (wrk passes it through), so one file serves all runs:
--   BENCH_MODE    healthz | nginx | medians | quotes | submit | mix (healthz + medians, alternating)
--   BENCH_QUOTE_ARGS  for quotes: the JSON members after location_ids (rate_kind, starts_at, duration)
--   BENCH_APIKEY  the anon key (`pricesvc keys`)
--   BENCH_READER  an access token for the median reads
--   BENCH_TOKENS  file with one access token per line (submit: thread k of T cycles through
--                 its own slice, so with N tokens a reporter is used ceil(requests / N) times)
--   BENCH_THREADS the -t given to wrk (to slice the token file)
-- Requests are formatted once in init(); request() only hands out prebuilt strings, so the
-- Lua cost per request is the same small constant on every side.
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
  elseif mode == "mix" then
    requests[1] = wrk.format("GET", "/healthz")
    requests[2] = medians_request()
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
