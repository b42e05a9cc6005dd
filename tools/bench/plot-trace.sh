#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Figures for Documentation/evaluation.rst from BENCH=trace's JSON lines
# (default build/bench/trace.jsonl): per trace, the hit ratio against
# cache size (<trace>-hit.png, the papers' model) and the cost against
# cache size under each cost model (<trace>-cost-<model>.png: papers,
# rxe-ordinary, rxe-fast, module-ordinary, module-fast), every policy a
# line, like Figs. 10-12 of the FRRWP paper.  Writes PNGs (gnuplot) and the
# data files to OUT (default build/bench/figures/).
#
# usage: plot-trace.sh [TRACE.jsonl [OUT]]
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
in=${1:-$top/build/bench/trace.jsonl}
out=${2:-$top/build/bench/figures}
mkdir -p "$out"

python3 - "$in" "$out" <<'PY'
import json, sys, collections
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
by = collections.defaultdict(list)
for r in rows:
    if r["resort_pct"] == 0 and r["evict_pct"] == 0:
        by[(r["trace"], r.get("cost_model", "papers"), r["policy"])].append(r)
# "none" is replayed once per trace and model (it caches nothing): drawn
# at every size.
for (trace, model, policy), rs in list(by.items()):
    if policy == "none":
        sizes = sorted({r["cache_pages"] for (t, m, p), l in by.items()
                        if t == trace and m == model for r in l})
        by[(trace, model, policy)] = [dict(rs[0], cache_pages=c) for c in sizes]
for (trace, model, policy), rs in by.items():
    with open(f"{sys.argv[2]}/{trace}-{model}-{policy}.dat", "w") as f:
        for r in sorted(rs, key=lambda r: r["cache_pages"]):
            f.write(f'{r["cache_pages"]} {r["hit_ratio"]} {r["cost_us"] / 1e6}\n')
PY

plot() {	# plot PNG TITLE YLABEL COLUMN PREFIX
	gnuplot <<GP
set terminal pngcairo size 800,500 noenhanced
set output "$1"
set title "$2"
set xlabel "cache size (pages)"
set ylabel "$3"
set logscale x 2
set key outside right
set grid
plot for [p in "none lru mre gdsf gdsf-batch"] "$5-".p.".dat" using 1:$4 with linespoints title p
GP
}

for t in $(ls "$out" | sed -n 's/-papers-mre\.dat$//p'); do
	plot "$out/$t-hit.png" "$t: hit ratio against cache size" "hit ratio" \
		2 "$out/$t-papers"
	for m in papers rxe-ordinary rxe-fast module-ordinary module-fast; do
		[ -f "$out/$t-$m-mre.dat" ] || continue
		plot "$out/$t-cost-$m.png" \
			"$t: registration + deregistration cost, $m model" \
			"cost (s, model)" 3 "$out/$t-$m"
	done
done
ls "$out"/*.png
