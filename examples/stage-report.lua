-- stage-report.lua: where the time of a request goes, stage by stage.
--
-- Shows: the trace results after run(): the stage names in order and a
-- histogram object per stage; the records, to check that each
-- transaction's stages add up to its total.
--
--   netstage tcp_rr --local -l 3 -q --trace --script examples/stage-report.lua
--
-- Prints one row per stage (count, mean, p50, p99, max in us and the
-- stage's share of the mean), then "stages add up: N of N records".

local r = run()
local t = r.trace
if not t or t.status == "off" then
  print("no stage data: " .. (t and t.error or "run with --trace"))
  return
end

local sum_mean = 0
for _, name in ipairs(t.stages) do
  sum_mean = sum_mean + t.stage[name].mean
end

print(string.format("%s side, %d traced transactions", r.side, t.transactions))
print(string.format("%-12s %9s %9s %9s %9s %9s %6s", "stage", "count",
                    "mean_us", "p50_us", "p99_us", "max_us", "share"))
for _, name in ipairs(t.stages) do
  local h = t.stage[name]
  print(string.format("%-12s %9d %9.2f %9.2f %9.2f %9.2f %5.1f%%", name,
                      h.count, h.mean, h:percentile(50), h:percentile(99),
                      h.max, sum_mean > 0 and 100 * h.mean / sum_mean or 0))
end

-- The stages of one transaction tile it: their sum is its total.
local n, ok = 0, 0
for rec in t:records() do
  local s = 0
  for _, name in ipairs(t.stages) do s = s + rec[name] end
  n = n + 1
  if math.abs(s - rec.total) < 1e-6 then ok = ok + 1 end
end
print(string.format("stages add up: %d of %d records", ok, n))
