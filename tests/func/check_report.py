"""Check a --report page as headless Chromium left it (--dump-dom).

python3 check_report.py DOM.html ERR    (--local: the waterfall on ERR)
python3 check_report.py DOM.html N      (one side: N stages)
    ... --keys OUT                        (and OUT's trace_* keys)

The script ran to its end without an error (body[data-rendered], no
body[data-error]), drew a row of the waterfall table and a histogram
for each stage (with --local, each row of the waterfall netstage
printed), and the other sections exist. With --keys, the table of what
the trace could not time has a row per side of OUT (key=value lines,
"client."/"server." before each key, or none for one side) saying what
its keys say, and the held-back responses where there were any.
"""
import math
import re
import sys

keys_file = None
if "--keys" in sys.argv:
    i = sys.argv.index("--keys")
    keys_file = sys.argv[i + 1]
    del sys.argv[i:i + 2]
dom = open(sys.argv[1]).read()
body = re.search(r"<body[^>]*>", dom).group(0)
assert "data-error" not in body, body
m = re.search(r'data-rendered="(\d+)"', body)
assert m, "not rendered: " + body
drawn = int(m.group(1))

if sys.argv[2].isdigit():
    names = None
    assert drawn == int(sys.argv[2]), (drawn, sys.argv[2])
else:
    err = open(sys.argv[2]).read()
    names = []
    table = err[err.index("netstage waterfall:"):].splitlines()
    head = next(i for i, l in enumerate(table) if "stretch" in l)
    for l in table[head + 1:]:
        row = re.match(r"^ +(\S.*?) +-?\d+\.\d+ ", l)
        if not row or row.group(1).startswith("="):
            break
        names.append(row.group(1))
    assert drawn == len(names), (drawn, names)
    for n in names:
        assert 'data-stage="%s"' % n in dom, n
table = re.search(r'<table id="waterfall">(.*?)</table>', dom, re.S).group(1)
# A row a stage, the header, the total and the time axis under them;
# a bar (mean, p50 tick, p99 whisker) a stage and the total.
assert table.count("<tr") == drawn + 3, table.count("<tr")
assert table.count('<tr class="axis">') == 1
assert table.count('class="wf"') == drawn + 1, table.count('class="wf"')
assert dom.count('class="hist"') == drawn + 1
for section in ("slowest", "over-time", "run", "options"):
    assert 'id="%s"' % section in dom, section

# What the trace could not time: a row per side, each cell its key.
untimed = re.search(r'<table id="untimed">(.*?)</table>', dom, re.S).group(1)
cells = {
    "incomplete": "trace_incomplete",
    "missing": "trace_incomplete_missing",
    "disorder": "trace_incomplete_disorder",
    "norecord": "trace_incomplete_norecord",
    "lost": "trace_lost",
}
if keys_file:
    kv = dict(l.rstrip("\n").split("=", 1) for l in open(keys_file)
              if "=" in l)
    rows = dict(re.findall(r'<tr data-side="(\w+)">(.*?)</tr>', untimed))
    sides = [s for s in ("client", "server") if s + ".trace_lost" in kv]
    # --local: a row for each side; one side: its own row, one.
    assert sorted(rows) == sides if sides else len(rows) == 1, (rows, sides)
    for side, row in rows.items():
        pre = side + "." if sides else ""
        got = dict(re.findall(r'data-key="(\w+)">([^<]*)<', row))
        for cell, key in cells.items():
            assert got[cell] == kv[pre + key], (side, cell, got, kv[pre + key])
        # UDP sides count no retransmissions: an empty cell.
        assert got["retransmitted"] == kv.get(pre + "trace_retransmitted",
                                              ""), (side, got)
        assert got["timed"].split()[0] == kv[pre + "trace_transactions"], got
        at = kv.get(pre + "trace_incomplete_at", "")
        assert got["at"] == at.replace(",", " · ").replace(":", " "), got
        held = re.search(r'<p class="held-back" data-count="(\d+)">%s: '
                         % side, dom)
        n = kv.get(pre + "trace_held_back_count")
        assert (held.group(1) if held else None) == n, (side, n)
    print("report: the untimed of %s as their keys say" % ", ".join(rows))
    # The first line names the stage that makes the p99 tail, the
    # client's when it has one (trace/tail.h).
    h1 = re.search(r"<h1>(.*?)</h1>", dom).group(1)
    for pre in ("client.", "server.", ""):
        top = kv.get(pre + "tail_p99_top")
        if top:
            # Math.round's half up, not Python's half to even.
            share = math.floor(100 * float(kv[pre + "tail_p99_%s_share" % top]) + 0.5)
            assert h1.endswith("p99 tail is mostly %s (%d%%)" % (top, share)), h1
            print("report: its first line: " + h1)
            break
    else:
        assert "tail" not in h1, h1
print("report: %d stages drawn" % drawn)
