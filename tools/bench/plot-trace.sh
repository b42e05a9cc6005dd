#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Figures for Documentation/evaluation.rst from build/bench/trace.jsonl:
# hit ratio and total registration cost against cache size, one pair per
# trace, like Figs. 10-12 of the FRRWP paper.  Writes PNGs (gnuplot) and
# the data files to build/bench/figures/.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
in=${1:-$top/build/bench/trace.jsonl}
out=$top/build/bench/figures
mkdir -p "$out"

python3 - "$in" "$out" <<'PY'
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1])]
by = collections.defaultdict(list)
for r in rows:
    if r["resort_pct"] == 0 and r["evict_pct"] == 0 and r.get("cost_model", "papers") == "papers":
        by[(r["trace"], r["policy"])].append(r)
for (trace, policy), rs in by.items():
    with open(f"{sys.argv[2]}/{trace}-{policy}.dat", "w") as f:
        for r in sorted(rs, key=lambda r: r["cache_pages"]):
            f.write(f'{r["cache_pages"]} {r["hit_ratio"]} {r["cost_us"] / 1e6}\n')
PY

for t in $(ls "$out" | sed -n 's/-mre\.dat$//p'); do
	for what in hit cost; do
		if [ $what = hit ]; then col=2; label="hit ratio"; else col=3; label="registration + deregistration cost (s, model)"; fi
		gnuplot <<GP
set terminal pngcairo size 800,500 noenhanced
set output "$out/$t-$what.png"
set title "$t: $label against cache size"
set xlabel "cache size (pages)"
set ylabel "$label"
set logscale x 2
set key outside right
set grid
plot for [p in "none lru mre gdsf gdsf-batch"] "$out/$t-".p.".dat" using 1:$col with linespoints title p
GP
	done
done
ls "$out"/*.png
