-- Every documented field of r = run() and of r.peer (docs/script-api.md,
-- "Results"), a line each, "F path value": the test holds each against
-- the JSON document of the same run (t_script_fields_equal_the_json).
local r = run()

local function put(path, v)
	if math.type(v) == "float" then
		v = string.format("%.17g", v)
	end
	print("F " .. path .. " " .. tostring(v))
end

local function hist(path, h)
	put(path .. ".count", h.count)
	put(path .. ".mean_us", h.mean)
	put(path .. ".max_us", h.max)
	for _, p in ipairs({ 50, 90, 99, 99.9 }) do
		put(path .. ".p" .. p .. "_us", h:percentile(p))
	end
	for i, b in ipairs(h:buckets()) do
		put(path .. ".buckets." .. i,
		    string.format("%.17g,%.17g,%d", b.lo, b.hi, b.count))
	end
end

local function side(name, s)
	put(name .. ".role", s.side)
	put(name .. ".workload", s.workload)
	put(name .. ".throughput", s.throughput)
	put(name .. ".transactions", s.transactions)
	for k, v in pairs(s.keys) do
		put(name .. ".results." .. k, v)
	end
	if s.latency then
		hist(name .. ".latency", s.latency)
	end
	for i, iv in ipairs(s.intervals or {}) do
		for _, f in ipairs({ "t_end", "transactions", "bytes", "rate",
				     "mbps", "p50", "p90", "p99" }) do
			if iv[f] ~= nil then
				put(name .. ".intervals." .. i .. "." .. f, iv[f])
			end
		end
	end
	if not s.trace then
		return
	end
	for _, f in ipairs({ "status", "transactions", "incomplete", "lost",
			     "retransmits", "retransmitted", "records_kept" }) do
		if s.trace[f] ~= nil then
			put(name .. ".trace." .. f, s.trace[f])
		end
	end
	for _, st in ipairs(s.trace.stages or {}) do
		hist(name .. ".stages." .. st, s.trace.stage[st])
	end
end

side("client", r)
if r.peer then
	side("server", r.peer)
end
