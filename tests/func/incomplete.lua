-- The trace's incomplete counts as a script sees them, for the test to
-- compare with the keys: "incomplete I M D R" and "at NAME:N,..." with
-- the boundaries sorted by name.
local t = run().trace
print("incomplete", t.incomplete, t.incomplete_missing,
      t.incomplete_disorder, t.incomplete_norecord)
local at = {}
for name, n in pairs(t.incomplete_at) do at[#at + 1] = name .. ":" .. n end
table.sort(at)
print("at " .. table.concat(at, ","))
