-- per-flow.lua: compare flows: do some see more latency than others?
--
-- Shows: the per-transaction records' flow and thread ids; grouping
-- records by flow in one pass; the side's own results next to them.
--
--   netstage tcp_rr --local -l 3 -q -F 4 -T 2 --trace \
--       --script examples/per-flow.lua
--
-- Prints one row per flow (thread, transactions, mean and max of the
-- total in us, and its slowest stage on average), then the side's
-- throughput, and "flows: N, records: M" where M is the sum of the rows.

local r = run()
local t = r.trace
if not t or t.status ~= "records" then
  print("no records: " .. (t and (t.error or t.status) or "run with --trace"))
  return
end

local flows = {}
for rec in t:records() do
  local f = flows[rec.flow]
  if not f then
    f = { thread = rec.thread, n = 0, sum = 0, max = 0, stage = {} }
    flows[rec.flow] = f
  end
  f.n = f.n + 1
  f.sum = f.sum + rec.total
  f.max = math.max(f.max, rec.total)
  for _, name in ipairs(t.stages) do
    f.stage[name] = (f.stage[name] or 0) + rec[name]
  end
end

local ids = {}
for id in pairs(flows) do ids[#ids + 1] = id end
table.sort(ids)

print(string.format("%-5s %-7s %10s %10s %10s  %s", "flow", "thread",
                    "records", "mean_us", "max_us", "slowest stage"))
local records = 0
for _, id in ipairs(ids) do
  local f = flows[id]
  local slow, slow_sum = nil, -1
  for _, name in ipairs(t.stages) do
    if f.stage[name] > slow_sum then slow, slow_sum = name, f.stage[name] end
  end
  records = records + f.n
  print(string.format("%-5d %-7d %10d %10.2f %10.2f  %s (%.2f us)", id,
                      f.thread, f.n, f.sum / f.n, f.max, slow,
                      slow_sum / f.n))
end
print(string.format("throughput: %.2f transactions/s", r.throughput))
print(string.format("flows: %d, records: %d", #ids, records))
