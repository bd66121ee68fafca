#!/usr/bin/env python3
"""Prints the results of infinispan-bench/run.sh as Markdown tables: each store's score and its
ratio to htod's in the same run (above 1 for a rival: htod is that many times faster; restart
times are inverted so that above 1 still means htod is faster). Usage: table.py results/full"""
import json, sys, pathlib

def rows(path):
    out = {}
    for r in json.load(open(path)):
        p = r["params"]
        name = r["benchmark"].split(".")[-1]
        key = (name, int(p.get("entries", 0)))
        out.setdefault(key, {})[p["store"]] = (r["primaryMetric"]["score"], r["primaryMetric"]["scoreUnit"])
    return out

for f in sorted(p for p in pathlib.Path(sys.argv[1]).glob("*.json") if p.stat().st_size > 0):
    data = rows(f)
    stores = [s for s in ("HTOD", "SIFS", "ROCKSDB") if any(s in v for v in data.values())]
    print(f"\n{f.stem}\n")
    print("| benchmark | entries | " + " | ".join(stores) + " | " + " | ".join(f"htod vs {s}" for s in stores[1:]) + " |")
    print("|---|---:|" + "---:|" * (2 * len(stores) - 1))
    for (name, n), v in sorted(data.items()):
        unit = next(iter(v.values()))[1]
        cells = [f"{v[s][0]:,.0f} {unit}" if s in v else "–" for s in stores]
        ratios = []
        for s in stores[1:]:
            if s in v and "HTOD" in v:
                h, o = v["HTOD"][0], v[s][0]
                ratios.append(f"{(o / h if unit.startswith('ms') else h / o):.2f}")
            else:
                ratios.append("–")
        print(f"| {name} | {n:,} | " + " | ".join(cells) + " | " + " | ".join(ratios) + " |")
