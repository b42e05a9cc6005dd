#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# BENCH=bm_pages (tools/bench/run.sh, one test VM): the coherence
# protocol (bm node, issue 18) with pages of more than a word (-B).  For
# each page size in BM_PAGE_BYTES (8 912 4096: the value alone, the
# paper's largest block, a database page):
#
#   op_mean_us, op_p50_us, op_p99_us, op_count  (`bm lat`, key page_bytes)
#       of BM_LAT_OPS (3000) reads and writes by node 0 alone, one at a
#       time, half writes, the others only serving (histories 1); and of
#       as many reads alone with -R (one_sided 1, op one_sided_read)
#   coherence_throughput_ops  three nodes, BM_OPS (3000) each, half
#       writes, 4 in flight per node, on BM_PAGES (8) pages (keys
#       page_bytes, nodes, pages, write_pct, inflight, ops)
#   linearizability_ops, linearizability_violations  of that run
#
# Every read checks the body it got against its value (bm node -B).
# JSON lines on stdout; progress on stderr.
set -eu
# b, addr, cluster(): three nodes (bm-cluster.sh)
. tools/bench/bm-cluster.sh
ops=${BM_OPS:-3000}
lops=${BM_LAT_OPS:-3000}
pages=${BM_PAGES:-8}
out=/tmp/bm-pages-bench
mkdir -p $out
kernel=${MRRC_KVER:-$(uname -r)}
accel=$(sed -n 's/.*MRRC_ACCEL=\([^ ]*\).*/\1/p' /proc/cmdline)
port=7300
for bytes in ${BM_PAGE_BYTES:-8 912 4096}; do
	cluster "one$bytes" $port "$lops" 0 1 50 "-B $bytes"
	$b/bm lat $out/one$bytes.0.hist
	cluster "one1s$bytes" $((port + 10)) "$lops" 0 1 0 "-B $bytes -R"
	$b/bm lat $out/one1s$bytes.0.hist
	t0=$(date +%s.%N)
	cluster "all$bytes" $((port + 20)) "$ops" "$ops" 4 50 "-B $bytes"
	t1=$(date +%s.%N)
	$b/bm check $out/all$bytes.?.hist
	printf '{"bench":"bm","metric":"coherence_throughput_ops","value":%s,"unit":"ops/s","nodes":3,"pages":%s,"write_pct":50,"inflight":4,"locking":0,"one_sided":0,"ops":%s,"page_bytes":%s,"kernel":"%s","accel":"%s","device":"rxe0","commit":"%s","date":"%s"}\n' \
		"$(echo "$t0 $t1 $ops" | awk '{ printf "%.0f", 3 * $3 / ($2 - $1) }')" \
		"$pages" "$ops" "$bytes" "$kernel" "${accel:-unknown}" \
		"${MRRC_COMMIT:-unknown}" "${MRRC_DATE:-unknown}"
	port=$((port + 30))
done
