-- run()'s result beyond the keys (docs/script-api.md), printed for
-- t_script_results_api to check against netstage's own keys.
local r = run()
print("peer " .. r.peer.side .. " " .. r.peer.transactions .. " " ..
      math.type(r.peer.keys.num_transactions))
local pt, pn = r.peer.trace, 0
for rec in pt:records() do
	pn = pn + 1
	assert(rec:stamp("NETIF_RX") > 0 and rec.app >= 0, "server record")
end
print("peer trace " .. pt.transactions .. " " .. pt.stage.app.count ..
      " " .. pn)
print("intervals " .. #r.intervals)
local sum = 0
for _, iv in ipairs(r.intervals) do
	assert(iv.t_end > 0 and iv.p99 >= iv.p50, "interval")
	sum = sum + iv.transactions
end
print("interval transactions " .. sum)

local h = histogram()
h:add(5):add(7, 3)
print(string.format("hist %d %.1f %.1f %.1f", h.count, h.min, h.max,
		    h:percentile(50)))
local ok, err = pcall(h.add, h, -1)
print("bad add " .. tostring(ok) .. " " .. err)

local n, first, last = 0, math.huge, 0
for rec in r.trace:records() do
	n = n + 1
	first, last = math.min(first, rec.t), math.max(last, rec.t)
	assert(rec.kept == "sample", rec.kept)
	assert(rec:stamp("CONNECT") == nil, "CONNECT on tcp_rr")
	assert(rec:stamp("app_send") > 0, "APP_SEND")
end
print(string.format("records %d from %.3f to %.3f s", n, first, last))
for rec in r.trace:records() do
	ok, err = pcall(rec.stamp, rec, "FOO")
	print("bad stamp " .. tostring(ok) .. " " .. err)
	break
end
