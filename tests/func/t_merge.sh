# netstage merge (issue 43): many runs' JSON results as one, histograms
# merged bucket by bucket, throughput summed only for runs at once.

# merge_check MERGED.out FILE...: the merged latency percentiles are
# those of the runs' buckets added up, computed here apart (nearest
# rank, the bucket's middle: src/stats/hist.c's rule), and the count is
# the sum of the runs'.
merge_check() {
	python3 - "$@" <<'PY'
import json, sys
kv = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[1]) if "=" in l)
buckets, n, tx = {}, 0, 0
for p in sys.argv[2:]:
    d = json.load(open(p))
    d = d.get("client", d)
    tx += d["results"]["num_transactions"]
    for lo, hi, c in d["latency"]["buckets"]:
        buckets[(lo, hi)] = buckets.get((lo, hi), 0) + c
        n += c
assert int(kv["num_transactions"]) == tx, (kv["num_transactions"], tx)
assert int(kv["latency_count"]) == n, (kv["latency_count"], n)
for q in (50, 90, 99):
    rank, seen = max(1, -(-q * n // 100)), 0
    for (lo, hi), c in sorted(buckets.items()):
        seen += c
        if seen >= rank:
            break
    want = (lo + hi) / 2
    got = float(kv["latency_p%d_us" % q])
    # One bucket: a bucket is 1/128 of its value wide.
    assert abs(got - want) <= hi - lo + 0.002, (q, got, want)
    print(f"p{q}: merged {got:.3f} us, from the buckets {want:.3f} us")
# Each stage every run has (traced runs), its p50 the same way.
docs = [json.load(open(p)) for p in sys.argv[2:]]
docs = [d.get("client", d) for d in docs]
names = set.intersection(*(set(d.get("stages", {})) for d in docs))
for name in sorted(names):
    b, n = {}, 0
    for d in docs:
        for lo, hi, c in d["stages"][name]["buckets"]:
            b[(lo, hi)] = b.get((lo, hi), 0) + c
            n += c
    rank, seen = max(1, -(-50 * n // 100)), 0
    for (lo, hi), c in sorted(b.items()):
        seen += c
        if seen >= rank:
            break
    got = float(kv["stage_%s_p50_us" % name])
    assert abs(got - (lo + hi) / 2) <= hi - lo + 0.002, (name, got, lo, hi)
if names:
    print(f"{len(names)} stages' p50 from their buckets")
PY
}

# Three clients of one server at once: counts add up to the server's,
# throughputs add, the percentiles are the merged buckets'.
t_merge_concurrent_clients() {
	local i pids=

	start_server tcp_rr --num-clients 3
	for i in 1 2 3; do
		ns tcp_rr -c -H 127.0.0.1 -C "$CPORT" -l 2 -q --json "c$i.json" \
			> "c$i.out" 2> "c$i.err" &
		pids="$pids $!"
	done
	wait $pids
	wait "$SRV_PID"
	ns merge c1.json c2.json c3.json > m.out 2> m.err
	expect_eq "$(key m.out merge_kind)" concurrent "kind"
	expect_eq "$(key m.out merge_runs)" 3 "runs"
	# The server counts what it answered: at the stop each flow may
	# have one request it answered and its client did not count.
	python3 -c "
m, s = $(key m.out num_transactions), $(key "$SRV_OUT" num_transactions)
print('merged', m, 'server', s)
assert 0 <= s - m <= 3 or 0 <= m - s <= 3, (m, s)"
	python3 -c "
t = sum(float(l.split('=')[1]) for f in ('c1.out', 'c2.out', 'c3.out')
        for l in open(f) if l.startswith('throughput='))
assert abs(t - float('$(key m.out throughput)')) < 0.02, t"
	merge_check m.out c1.json c2.json c3.json
	expect_eq "$(key m.out run2.file)" c2.json "the runs' table"
	ns merge c1.json c2.json --output-format json > m.json
	python3 -c "
import json; d = json.load(open('m.json'))
assert d['merge']['merge_runs'] == 2 and len(d['runs']) == 2, d"
}

# One run after another: counts and histograms merge, the rates do not
# add (the whole's rate, as if one long run); different workloads or
# message sizes are refused in one line.
t_merge_repeated_runs_and_refusals() {
	local rc

	# Traced where it can be (root): the stages merge too.
	ns tcp_rr --local -l 1 -q --trace --json a.json > /dev/null 2>&1
	ns tcp_rr --local -l 1 -q --trace --json b.json > /dev/null 2>&1
	ns merge a.json b.json > m.out 2> m.err
	[ "$(id -u)" -ne 0 ] || grep -q '^stage_wakeup_p50_us=' m.out ||
		fail "no merged stages"
	expect_eq "$(key m.out merge_kind)" repeated "kind"
	python3 -c "
import json
r = [json.load(open(p))['client']['results'] for p in ('a.json', 'b.json')]
tx = sum(x['num_transactions'] for x in r)
secs = sum(x['time_end'] - x['time_start'] for x in r)
got = float('$(key m.out throughput)')
assert abs(got - tx / secs) < 0.01 * got, (got, tx / secs)
assert got < 1.5 * max(x['throughput'] for x in r), got"
	merge_check m.out a.json b.json
	# On a terminal (here asked for): the runs, the whole, its stages,
	# the same figures as the keys.
	ns merge a.json b.json --output-format human > h.out
	grep -q '^netstage merge: 2 client runs of tcp_rr, one after another' h.out
	expect_eq "$(awk '$1 == "=" && $2 == "merged" { print $3 }' h.out)" \
		"$(key m.out num_transactions)" "the whole's row"
	expect_eq "$(sed -n '/stages, merged/,$p' h.out | tail -n +2 | wc -l)" \
		"$(grep -c '^stage_.*_p50_us=' m.out)" "a row a merged stage"
	# --report: one page of the merge that headless Chromium draws
	# without a script error: a line a run in the histogram, the
	# merged count, the missing named, a row a merged stage.
	if command -v chromium > /dev/null; then
		ns merge a.json b.json --missing h9 --report m.html > /dev/null 2>&1
		render_report m.html
		python3 - dom.html m.out <<'PY'
import re, sys
dom = open(sys.argv[1]).read()
kv = dict(l.rstrip("\n").split("=", 1) for l in open(sys.argv[2]) if "=" in l)
body = re.search(r"<body[^>]*>", dom).group(0)
assert "data-error" not in body, body
m = re.search(r'data-rendered="(\d+)"', body)
assert m and int(m.group(1)) == 2, m and m.group(0)
n = "{:,}".format(int(kv["num_transactions"]))
assert re.search(r'<tr class="total">.*?<td>' + n + "</td>", dom), n
assert "No result from h9: the whole lacks it." in dom
stages = [k[6:-7] for k in kv if k.startswith("stage_") and k.endswith("_p50_us")]
for s in stages:
    assert f'<td class="name">{s}</td>' in dom, s
print(f"report: 2 runs drawn, {n} merged, {len(stages)} stages")
PY
	fi
	rc=0
	ns merge a.json b.json --report /nonexistent/m.html > out 2> err || rc=$?
	expect_eq "$rc" 1 "report into no folder: status"
	expect_eq "$(wc -c < out)" 0 "nothing printed beside a failed report"
	expect_eq "$(wc -l < err)" 1 "one line: $(cat err)"
	ns tcp_stream --local -l 1 -q --json s.json > /dev/null 2>&1
	rc=0
	ns merge a.json s.json > out 2> err || rc=$?
	expect_eq "$rc" 2 "different workloads: status"
	expect_eq "$(wc -l < err)" 1 "one line"
	grep -q 'a.json and s.json differ in workload' err
	ns tcp_rr --local -l 1 -q -Q 100 --json q.json > /dev/null 2>&1
	rc=0
	ns merge a.json q.json > out 2> err || rc=$?
	expect_eq "$rc" 2 "different sizes: status"
	grep -q 'differ in request size' err
	echo '{"a": 1}' > bad.json
	rc=0
	ns merge a.json bad.json > out 2> err || rc=$?
	expect_eq "$rc" 1 "not a results document: status"
	grep -q 'bad.json is no netstage results document' err
	rc=0
	ns merge a.json > out 2> err || rc=$?
	expect_eq "$rc" 2 "one file: status"
	# One run beside the runs it lacks (a fleet's failed hosts) is a
	# merge, and says what it lacks.
	ns merge a.json --missing h5 --missing=h6 > out 2> err
	expect_eq "$(key out merge_runs)" 1 "runs beside the missing"
	expect_eq "$(key out merge_missing)" h5,h6 "missing"
	expect_eq "$(key out merge_missing_count)" 2 "missing count"
	expect_eq "$(key out num_transactions)" \
		"$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); print(d.get("client", d)["results"]["num_transactions"])' a.json)" \
		"one run's count"
	grep -q 'merge: 2 of 3 runs gave no result' err
}
