#!/usr/bin/python3
"""Ask a Prometheus server about observe's /metrics.

  prom_check.py up PROM_ADDR                 exits 0 once a scrape of the
                                             target succeeded
  prom_check.py total PROM_ADDR N            exits 0 once Prometheus holds
                                             N transactions (scraped since
                                             the load ended)
  prom_check.py p99 PROM_ADDR OBS_OUT [T]    histogram_quantile(0.99) of
                                             every stage against observe's
                                             own p99: within one bucket;
                                             asked as of time T (Unix s),
                                             before observe stopped: once
                                             a scrape finds it gone, its
                                             series are stale and an
                                             instant query has none
"""
import json
import sys
import urllib.parse
import urllib.request

STEPS = [1, 1.25, 1.6, 2, 2.5, 3.2, 4, 5, 6.3, 8]
LE = [s * 10 ** (k - 7) for k in range(8) for s in STEPS] + [10]


AT = {}


def query(prom, q):
    url = "http://%s/api/v1/query?%s" % (prom, urllib.parse.urlencode(
        dict({"query": q}, **AT)))
    with urllib.request.urlopen(url, timeout=5) as r:
        d = json.load(r)
    assert d["status"] == "success", d
    return d["data"]["result"]


def bucket(v):
    """The index of the bucket value v (s) falls in: le[i-1] < v <= le[i]."""
    return next((i for i, le in enumerate(LE) if v <= le * (1 + 1e-9)),
                len(LE))


def keys(path):
    return dict(line.strip().split("=", 1) for line in open(path)
                if "=" in line)


def main():
    what, prom = sys.argv[1], sys.argv[2]
    if what == "up":
        r = query(prom, 'up{job="netstage_observe"}')
        sys.exit(0 if r and r[0]["value"][1] == "1" else 1)
    if what == "total":
        r = query(prom, "netstage_observe_transactions_total")
        sys.exit(0 if r and r[0]["value"][1] == sys.argv[3] else 1)
    kv = keys(sys.argv[3])
    if len(sys.argv) > 4:
        AT["time"] = sys.argv[4]
    stages = [k[len("stage_"):-len("_p99_us")] for k in kv
              if k.startswith("stage_") and k.endswith("_p99_us")]
    assert len(stages) == 7, stages
    for s in stages:
        r = query(prom, 'histogram_quantile(0.99, '
                  'netstage_observe_stage_seconds_bucket{stage="%s"})' % s)
        q = float(r[0]["value"][1])
        own = float(kv["stage_%s_p99_us" % s]) / 1e6
        print("%-12s prometheus p99 %10.3f us (bucket %d), observe's "
              "%10.3f us (bucket %d)" % (s, q * 1e6, bucket(q), own * 1e6,
                                         bucket(own)))
        assert abs(bucket(q) - bucket(own)) <= 1, s
        c = query(prom, 'netstage_observe_stage_seconds_count{stage="%s"}'
                  % s)
        assert c[0]["value"][1] == kv["trace_transactions"], (s, c)
    # docs/real-servers.md's query of every stage at once.
    r = query(prom, "histogram_quantile(0.99, sum by (stage, le) "
              "(rate(netstage_observe_stage_seconds_bucket[5m])))")
    assert sorted(x["metric"]["stage"] for x in r) == sorted(stages), r
    for x in r:
        v = float(x["value"][1])
        assert 0 < v < 10, x


main()
