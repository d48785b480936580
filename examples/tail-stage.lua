-- tail-stage.lua: which stage makes the slow requests slow.
--
-- Shows: the tail's threshold from the run's latency histogram (every
-- transaction), then one walk of the records (a uniform sample of the
-- run past --trace-max-records) to average each stage over those above
-- it, without keeping them in Lua tables.
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

-- The latency at the percentile, from the histogram of every
-- transaction: the records may be a sample (--trace-max-records), and a
-- record's total is the latency the worker measured.
local cut = r.latency and r.latency:percentile(pct)
if not cut then print("no latency histogram: run the client side") return end

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

if n_tail == 0 then print("no record in the tail") return end
print(string.format("p%g of the latency: %.2f us (%d of %d records)",
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
