#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Print the result tables of Documentation/evaluation.rst (reStructuredText)
from build/bench/trace.jsonl, as written by `make bench BENCH=trace`.

usage: tools/bench/trace-tables.py [build/bench/trace.jsonl]
"""
import collections
import json
import sys

TITLES = {
    "cloudphysics": "CloudPhysics (real)",
    "cello": "Cello92-like (synthetic)",
    "httpd": "HTTPD-like (synthetic)",
}


def table(hdr, rows):
    w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(hdr)]
    line = "  ".join("=" * x for x in w)
    out = [line, "  ".join(h.ljust(x) for h, x in zip(hdr, w)).rstrip(), line]
    out += ["  ".join(c.ljust(x) for c, x in zip(r, w)).rstrip() for r in rows]
    return "\n".join(out + [line])


def title(t, ch="-"):
    return f"{t}\n{ch * len(t)}\n"


def main(path):
    rows = [json.loads(line) for line in open(path)]
    model = lambda r: r.get("cost_model", "papers")
    main_runs = [r for r in rows if not r["resort_pct"] and model(r) == "papers"]
    tab = collections.defaultdict(dict)
    for r in main_runs:
        tab[(r["trace"], r["cache_pages"])][r["policy"]] = r
    for tr in ("cloudphysics", "cello", "httpd"):
        body = []
        for (t, c), d in sorted(tab.items()):
            if t != tr or len(d) < 5:
                continue
            body.append([str(c)]
                        + [f'{d[p]["hit_ratio"]:.3f} ({d[p]["page_hit_ratio"]:.2f})'
                           for p in ("lru", "mre", "gdsf", "gdsf-batch")]
                        + [f'{d[p]["cost_us"] / 1e6:.2f}'
                           for p in ("none", "lru", "mre", "gdsf", "gdsf-batch")]
                        + [str(d["lru"]["dereg_batches"]), str(d["mre"]["dereg_batches"])])
        if not body:
            continue
        print(title(TITLES[tr]))
        print("Hit ratio (page hit ratio), model cost in seconds, deregistration batches.\n")
        print(table(["pages", "lru", "mre", "gdsf", "gdsf-batch", "none s", "lru s",
                     "mre s", "gdsf s", "gdsf-batch s", "batches lru", "batches mre"],
                    body))
        print()

    sens = collections.defaultdict(dict)
    for r in rows:
        if r["resort_pct"]:
            sens[(r["resort_pct"], r["evict_pct"])][r["trace"]] = r
    if sens:
        print(title("MRE section sizes"))
        print("Hit ratio / cost (s) with the resorting section (% of cached pages)"
              " and the eviction segment (% of the capacity) varied; HTTPD-like"
              " at 16 384 pages, CloudPhysics at 4 096 pages.\n")
        body = [[str(rp), str(ep)] + [f'{d[t]["hit_ratio"]:.3f} / {d[t]["cost_us"] / 1e6:.3f}'
                                      if t in d else "-" for t in ("httpd", "cloudphysics")]
                for (rp, ep), d in sorted(sens.items())]
        print(table(["resort %", "evict %", "httpd", "cloudphysics"], body))
        print()

    for mode in ("ordinary", "fast"):
        rxe = collections.defaultdict(dict)
        costs = None
        for r in rows:
            if model(r) == "rxe-" + mode:
                rxe[(r["trace"], r["cache_pages"])][r["policy"]] = r
                costs = r.get("costs_ns", costs)
        if not rxe:
            continue
        print(title(f"With the cost model measured on rxe, {mode} registration"))
        print(f"Same replays with ``a, b, a', b', c'`` fitted by ``BENCH=reg`` to {mode}"
              " registration and batched deregistration on rxe"
              + (f" ({costs} ns)" if costs else "") + ": hit ratio / cost (s).\n")
        body = [[t, str(c)] + [f'{d[p]["hit_ratio"]:.3f} / {d[p]["cost_us"] / 1e6:.2f}'
                               for p in ("none", "lru", "mre", "gdsf", "gdsf-batch")]
                for (t, c), d in sorted(rxe.items()) if len(d) == 5]
        print(table(["trace", "pages", "none", "lru", "mre", "gdsf", "gdsf-batch"], body))
        print()


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/bench/trace.jsonl")
