-- wrk script of bench/lib/tenants-wrk.ts: each request goes to the next entry
-- of a list (a project's path and its keys), so one run rotates over many
-- projects. The list and the report are files named in the environment:
-- wrk hands script arguments to init() only, never to done(), which runs in
-- the main Lua state and writes the report.
local list = dofile(os.getenv("BENCH_TENANTS_REQUESTS"))
local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("number", #threads)
end

function init(args)
  -- Formatted once: wrk.format per request would cost more than the request.
  formatted = {}
  -- An entry may carry its own method and body (a mix of requests), else the list's.
  for i, r in ipairs(list.requests) do
    if r[3] then formatted[i] = wrk.format(r[3], r[1], r[2], r[4]) else formatted[i] = wrk.format(list.method, r[1], r[2], list.body) end
  end
  -- Threads start apart, so they do not ask the same project at the same moment.
  index = (number - 1) * math.floor(#formatted / list.threads)
  statuses = {}
  bodies = {}
end

function request()
  index = index % #formatted + 1
  return formatted[index]
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  -- The first body of each status, so a report can say what an error was.
  if not bodies[status] then bodies[status] = string.sub(body or "", 1, 300) end
end

local function json_string(s)
  return '"' .. string.gsub(s, '[%c"\\\128-\255]', function(c) return string.format("\\u%04x", string.byte(c)) end) .. '"'
end

function done(summary, latency, requests)
  local counts, bodies = {}, {}
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses")) do counts[status] = (counts[status] or 0) + n end
    for status, body in pairs(thread:get("bodies")) do bodies[status] = bodies[status] or body end
  end
  local parts, samples = {}, {}
  for status, n in pairs(counts) do table.insert(parts, string.format('"%d": %d', status, n)) end
  for status, body in pairs(bodies) do table.insert(samples, string.format('"%d": %s', status, json_string(body))) end
  local e = summary.errors
  local f = assert(io.open(os.getenv("BENCH_TENANTS_REPORT"), "w"))
  f:write(string.format(
    '{"requests": %d, "durationUs": %d, "p50Us": %.1f, "p99Us": %.1f, "socketErrors": %d, "statuses": {%s}, "bodies": {%s}}',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.timeout, table.concat(parts, ", "), table.concat(samples, ", ")))
  f:close()
end
