#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# BENCH=bm (tools/bench/run.sh, one test VM): the buffer manager's
# coherence protocol (issue 18, begun).  Three nodes (processes with a
# /dev/mrrc context each, on the VM's rxe device) run BM_OPS (34000)
# random reads and writes each, BM_WRITE_PCT (50) % writes, on BM_PAGES
# (8) pages homed round-robin, 4 in flight per node; then `bm check`:
#
#   linearizability_ops, linearizability_violations  (keys nodes, pages)
#   coherence_throughput_ops  the cluster's operations per second (keys
#                             nodes, pages, write_pct, inflight)
#
# JSON lines on stdout; progress on stderr.
set -eu
b=build/tools
addr=10.211.0.1
ops=${BM_OPS:-34000}
pages=${BM_PAGES:-8}
wpct=${BM_WRITE_PCT:-50}
out=/tmp/bm-bench
mkdir -p $out
pids=
t0=$(date +%s.%N)
for i in 0 1 2; do
	$b/bm node -i $i -n 3 -a $addr -p 7950 -P "$pages" -k 4 -o "$ops" \
		-w "$wpct" -s 3 -H $out/$i.hist 2> $out/$i.log &
	pids="$pids $!"
	k=0
	until grep -q listening $out/$i.log 2> /dev/null; do
		k=$((k + 1))
		[ $k -lt 100 ] || { cat $out/$i.log >&2; exit 1; }
		sleep 0.1
	done
done
st=0
for p in $pids; do
	wait "$p" || st=1
done
t1=$(date +%s.%N)
cat $out/?.log >&2
[ $st = 0 ]
$b/bm check $out/?.hist
kernel=${MRRC_KVER:-$(uname -r)}
accel=$(sed -n 's/.*MRRC_ACCEL=\([^ ]*\).*/\1/p' /proc/cmdline)
printf '{"bench":"bm","metric":"coherence_throughput_ops","value":%s,"unit":"ops/s","nodes":3,"pages":%s,"write_pct":%s,"inflight":4,"kernel":"%s","accel":"%s","device":"rxe0","commit":"%s","date":"%s"}\n' \
	"$(echo "$t0 $t1 $ops" | awk '{ printf "%.0f", 3 * $3 / ($2 - $1) }')" \
	"$pages" "$wpct" "$kernel" "${accel:-unknown}" "${MRRC_COMMIT:-unknown}" \
	"${MRRC_DATE:-unknown}"
