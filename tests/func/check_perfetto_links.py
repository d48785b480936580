"""Check the report's slowest rows' links into its --perfetto file.

python3 check_perfetto_links.py REPORT.html DOM.html TRACE.json

REPORT.html is the page netstage wrote (its data names TRACE.json, by
its name beside it), DOM.html what headless Chromium made of it. Each
slowest row has one Perfetto link. Its visStart..visEnd (ns on the
file's time line, which ui.perfetto.dev takes from the file's ts in us)
is the client's transaction slice of that row's flow and sequence
number, found in TRACE.json by its args, with a tenth of its length
either side, and its query asks for the
transaction slices of that number in the window: the client's, and the
server's half where the file holds one.
"""
import html
import json
import re
import sys
from urllib.parse import parse_qs, urlparse

page = open(sys.argv[1]).read()
data = json.loads(re.search(
    r'<script id="netstage-data" type="application/json">\n(.*?)\n'
    r'</script>', page, re.S).group(1))
dom = open(sys.argv[2]).read()
trace = json.load(open(sys.argv[3]))

assert data["meta"]["perfetto"] == sys.argv[3].rsplit("/", 1)[-1], \
    data["meta"].get("perfetto")
procs = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
         if e["ph"] == "M" and e["name"] == "process_name"}
client = next(p for p, n in procs.items() if n == "client")
slices = {}
for e in trace["traceEvents"]:
    if e["ph"] == "X" and e["name"] == "transaction":
        a = e["args"]
        slices.setdefault(a["seq"], []).append((e["pid"], a["flow"], e))

links = [html.unescape(h) for h in
         re.findall(r'<a href="([^"]*)" class="perfetto"', dom)]
rows = data["slowest"]
assert rows and len(links) == len(rows), (len(links), len(rows))
for row, link in zip(rows, links):
    u = urlparse(link)
    assert u.scheme == "https" and u.netloc == "ui.perfetto.dev", link
    q = parse_qs(u.query)
    lo, hi = int(q["visStart"][0]), int(q["visEnd"][0])
    ours = [e for pid, flow, e in slices[row["seq"]]
            if pid == client and flow == row["flow"]]
    assert len(ours) == 1, (row["flow"], row["seq"], len(ours))
    s = ours[0]
    # The file's us on a 1/2048 grid: within 1 ns of the stamps.
    start, end = s["ts"] * 1000, (s["ts"] + s["dur"]) * 1000
    # Zoomed to it with a tenth of its length (1 us at least) aside.
    pad = max(1000, (end - start) / 10)
    assert abs(lo - max(0, start - pad)) <= 2, (lo, start, pad)
    assert abs(hi - (end + pad)) <= 2, (hi, end, pad)
    assert abs((end - start) / 1e3 - row["latency"]) < 0.002, \
        (end - start, row["latency"])
    sql = q["query"][0]
    assert "'args.seq') = %d " % row["seq"] in sql, sql
    between = re.search(r"ts between (\d+) and (\d+)", sql)
    assert between, sql
    for pid, flow, e in slices[row["seq"]]:
        t = e["ts"] * 1000
        if lo <= t <= hi:
            assert int(between.group(1)) <= t <= int(between.group(2)), \
                (procs[pid], t, sql)
print("perfetto links: %d rows, each at its client slice" % len(rows))
