#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# BENCH=redy (tools/bench/run.sh, one test VM): Redy's SLO-driven
# configuration on this testbed.  A memory server (redyd, REDY_SMAX server
# threads) and the client tool on the VM's rxe device:
#
#  1. offline modelling of the space REDY_SPACE (SMAX,CMAX,BMAX,QMAX;
#     powers of two, early termination), REDY_SECONDS per run, the mean
#     of REDY_RUNS (3) runs per configuration, the model planning for two
#     standard deviations of the run-to-run noise (pooled):
#     each measured configuration as lines "model_throughput_ops" and
#     "model_latency_ns" (keys server_threads, client_threads, batch,
#     queue_depth, record_bytes, read_pct);
#  2. REDY_SLOS random SLOs, each met by some leaf of that model, the
#     configuration the search picks for each deployed and measured:
#     "slo_met" per SLO, then slo_met_fraction, slo_latency_met_fraction,
#     slo_throughput_met_fraction, slo_threads_mean, search_ms_mean
#     (model "measured"), key plan_z 2; then the same planning on the
#     means (plan_z 0);
#  3. search time on a synthetic model of the paper's size (1.9 million
#     leaves) with each algorithm: search_ms_mean (model "synthetic");
#  4. a cache migrating (below): migration_latency_mean_ns per 50 ms
#     (keys mode, op, t_ms, ops, notice_ms, migrated_ms).
#
# JSON lines on stdout; progress on stderr.  The model file is kept as
# build/bench/redy-model.txt.
set -eu
b=build/tools
addr=10.211.0.1
port=7760
space=${REDY_SPACE:-2,2,16,8}
secs=${REDY_SECONDS:-1}
slos=${REDY_SLOS:-50}
record=${REDY_RECORD:-64}
smax=${space%%,*}
model=build/bench/redy-model.txt

$b/redyd -a $addr -p $port -m 64 -t "$smax" 2> /tmp/redyd.log &
pid=$!
trap 'kill $pid 2> /dev/null || true' EXIT
i=0
until grep -q 'server threads, ports' /tmp/redyd.log; do
	i=$((i + 1))
	[ $i -lt 100 ] || { cat /tmp/redyd.log >&2; exit 1; }
	sleep 0.1
done
$b/redy model -a $addr -p $port -S "$space" -r "$record" -T "$secs" \
	-k "${REDY_RUNS:-3}" -o $model
# The measured leaves as JSON lines, with the keys of the run.
kernel=${MRRC_KVER:-$(uname -r)}
accel=$(sed -n 's/.*MRRC_ACCEL=\([^ ]*\).*/\1/p' /proc/cmdline)
tail -n +2 $model | while read -r s c bb q lat tput; do
	for m in "model_throughput_ops $tput ops/s" "model_latency_ns $lat ns"; do
		set -- $m
		printf '{"bench":"redy","metric":"%s","value":%s,"unit":"%s","server_threads":%s,"client_threads":%s,"batch":%s,"queue_depth":%s,"record_bytes":%s,"read_pct":50,"kernel":"%s","accel":"%s","device":"rxe0","commit":"%s","date":"%s"}\n' \
			"$1" "$2" "$3" "$s" "$c" "$bb" "$q" "$record" "$kernel" \
			"${accel:-unknown}" "${MRRC_COMMIT:-unknown}" "${MRRC_DATE:-unknown}"
	done
done
$b/redy slo -a $addr -p $port -m $model -n "$slos" -T "$secs"
# the same, planning on the means (-Z 0): what the noise planning buys
$b/redy slo -a $addr -p $port -m $model -n "$slos" -T "$secs" -Z 0
$b/redy search-bench -n 100

# 4. Migration (Figs. 15-16): a cache of REDY_MIG_MB MiB in 1 MiB regions
#    on server A, a reclaim notice for A after 1 s, its regions copied to
#    B; reads and writes of 64 bytes throughout: latency per 50 ms, the
#    optimised migration ("optimized": unpaused reads, writes paused per
#    region) and the baseline (everything on A paused until all moved).
mig=${REDY_MIG_MB:-32}
$b/redyd -a $addr -p 7780 -m $((mig * 2)) -t 1 2> /tmp/redyd-b.log &
pid_b=$!
$b/redymgr -m $model -p 7729 -r 1024 2> /tmp/redymgr.log &
pid_m=$!
trap 'kill $pid $pid_b $pid_m 2> /dev/null || true' EXIT
i=0
until grep -q 'server threads, ports' /tmp/redyd-b.log && grep -q listening /tmp/redymgr.log; do
	i=$((i + 1))
	[ $i -lt 100 ] || { cat /tmp/redyd-b.log /tmp/redymgr.log >&2; exit 1; }
	sleep 0.1
done
$b/redy server A $addr $port 64 "$smax" 1 > /dev/null
$b/redy server B $addr 7780 $((mig * 2)) 1 2 > /dev/null
for mode in "" -P; do
	$b/redy migrate-bench -C $((mig << 20)) -X A -r 64 $mode
	$b/redy restore A > /dev/null
done
kill $pid $pid_b $pid_m
wait $pid $pid_b $pid_m
trap - EXIT
