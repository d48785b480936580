"""Check a --report page as headless Chromium left it (--dump-dom).

python3 check_report.py DOM.html ERR    (--local: the waterfall on ERR)
python3 check_report.py DOM.html N      (one side: N stages)

The script ran to its end without an error (body[data-rendered], no
body[data-error]), drew a row of the waterfall table and a histogram
for each stage (with --local, each row of the waterfall netstage
printed), and the other sections exist.
"""
import re
import sys

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
    for l in err[err.index("netstage waterfall:"):].splitlines()[2:]:
        row = re.match(r"^ +(\S.*?) +-?\d+\.\d+ ", l)
        if not row or row.group(1).startswith("="):
            break
        names.append(row.group(1))
    assert drawn == len(names), (drawn, names)
    for n in names:
        assert 'data-stage="%s"' % n in dom, n
table = re.search(r'<table id="waterfall">(.*?)</table>', dom, re.S).group(1)
assert table.count("<tr") == drawn + 2, table.count("<tr")
assert dom.count('class="hist"') == drawn + 1
for section in ("slowest", "over-time", "run", "options"):
    assert 'id="%s"' % section in dom, section
print("report: %d stages drawn" % drawn)
