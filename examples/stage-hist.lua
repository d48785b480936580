-- stage-hist.lua: the distribution of each stage, as log2 bars.
--
-- Shows: a stage histogram's buckets() (non-empty buckets with their
-- bounds in us), folded into powers of two and drawn as bars.
--
--   netstage tcp_rr --local -l 3 -q --trace --script examples/stage-hist.lua
--   STAGE=wakeup netstage ...      # one stage only
--
-- Prints, per stage, rows "lo .. hi us : count |bar|"; the counts of a
-- stage add up to its count.

local only = os.getenv("STAGE")
local r = run()
local t = r.trace
if not t or t.status == "off" then
  print("no stage data: " .. (t and t.error or "run with --trace"))
  return
end

local function log2_rows(h)
  local rows = {}
  for _, b in ipairs(h:buckets()) do
    local hi = 1
    while b.lo >= hi do hi = hi * 2 end
    rows[hi] = (rows[hi] or 0) + b.count
  end
  return rows
end

for _, name in ipairs(t.stages) do
  if not only or only == name then
    local h = t.stage[name]
    local rows, max, sum = log2_rows(h), 0, 0
    for _, c in pairs(rows) do max = math.max(max, c) end
    print(string.format("%s (%d transactions)", name, h.count))
    local hi = 1
    while hi <= table.maxn(rows) do
      local c = rows[hi] or 0
      sum = sum + c
      print(string.format("  %6d .. %-6d us : %9d |%-30s|", hi // 2, hi, c,
                          string.rep("#", max > 0 and
                                     math.ceil(30 * c / max) or 0)))
      hi = hi * 2
    end
    print(string.format("  total %d", sum))
  end
end
