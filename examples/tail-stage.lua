-- tail-stage.lua: which stage makes the slow requests slow.
--
-- Shows: walking the records twice (once for the p99 of the totals, once
-- to average each stage over the transactions above it) without keeping
-- them in Lua tables; comparing the tail with all transactions.
--
--   netstage tcp_rr --local -l 5 -q --trace --script examples/tail-stage.lua
--   TAIL=99.9 netstage ...
--
-- Prints each stage's mean over all transactions and over the tail, and
-- a last line "dominant: STAGE (+X us in the tail)": the stage that grows
-- most from the typical transaction to the tail.

local pct = tonumber(os.getenv("TAIL") or "99")
local r = run()
local t = r.trace
if not t or t.status ~= "records" then
  print("no records: " .. (t and (t.error or t.status) or "run with --trace"))
  return
end

-- The total latency at the percentile, from the records' totals.
local totals = {}
for rec in t:records() do totals[#totals + 1] = rec.total end
if #totals == 0 then print("no records") return end
table.sort(totals)
local cut = totals[math.max(1, math.ceil(#totals * pct / 100))]
totals = nil

local all, tail, n_all, n_tail = {}, {}, 0, 0
for _, name in ipairs(t.stages) do all[name], tail[name] = 0, 0 end
for rec in t:records() do
  n_all = n_all + 1
  local slow = rec.total >= cut
  if slow then n_tail = n_tail + 1 end
  for _, name in ipairs(t.stages) do
    all[name] = all[name] + rec[name]
    if slow then tail[name] = tail[name] + rec[name] end
  end
end

print(string.format("p%g of the total: %.2f us (%d of %d transactions)",
                    pct, cut, n_tail, n_all))
print(string.format("%-12s %12s %12s %12s", "stage", "mean_all_us",
                    "mean_tail_us", "growth_us"))
local best, best_growth = nil, -math.huge
for _, name in ipairs(t.stages) do
  local a, b = all[name] / n_all, tail[name] / n_tail
  print(string.format("%-12s %12.2f %12.2f %12.2f", name, a, b, b - a))
  if b - a > best_growth then best, best_growth = name, b - a end
end
print(string.format("dominant: %s (+%.2f us in the tail)", best, best_growth))
