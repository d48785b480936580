"""Validate netstage's JSON outputs against docs/netstage.schema.json.

/usr/bin/python3 check_schema.py SCHEMA DOC.json ...

Beyond the schema: a side's stages are the stage_<name>_* keys of its
results, figure for figure, and each histogram's buckets count its
transactions.
"""
import json
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)


def check_side(d):
    res = d["results"]
    for name, h in d.get("stages", {}).items():
        for stat in ("mean_us", "p50_us", "p99_us", "max_us"):
            key = "stage_%s_%s" % (name, stat)
            assert h[stat] == res[key], (key, h[stat], res[key])
        assert sum(b[2] for b in h["buckets"]) == h["count"], name
        assert h["count"] == res["stage_%s_count" % name], name
    if "latency" in d:
        h = d["latency"]
        assert sum(b[2] for b in h["buckets"]) == h["count"]
        assert h["p99_us"] == res["latency_p99_us"], (h, res["latency_p99_us"])


for path in sys.argv[2:]:
    doc = json.load(open(path))
    err = jsonschema.exceptions.best_match(validator.iter_errors(doc))
    assert err is None, "%s: %s at %s" % (path, err.message[:200],
                                          list(err.absolute_path))
    for d in (doc["client"], doc["server"]) if "client" in doc else (doc,):
        if d:
            check_side(d)
    print("%s: valid" % path)
