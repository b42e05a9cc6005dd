#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# bench_trace: the trace-driven evaluation of the registration cache
# (Documentation/evaluation.rst).  For each trace, policy and cache size,
# one JSON line from mrrc-replay (the kernel's own cache, model mode); then
# a sweep of MRE's section sizes.  Runs in the test VM (make bench
# BENCH=trace); prints JSON lines on stdout, one per replay as it ends.
#
# usage: bench_trace.sh [-d DEV]: on RDMA device DEV (default $MRRC_DEV,
# else rxe0).  Every line carries the same "date" (MRRC_DATE).
set -eu
usage="usage: bench_trace [-d DEV]"
while getopts d:h o; do
	case $o in
	d) MRRC_DEV=$OPTARG; export MRRC_DEV ;;
	h) echo "$usage"; exit 0 ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { echo "$usage" >&2; exit 2; }
MRRC_DATE=${MRRC_DATE:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}
export MRRC_DATE
top=$(cd "$(dirname "$0")/../.." && pwd)
replay=$top/build/tools/mrrc-replay
cp_trace=${MRRC_TRACES:-$top/../shared/traces}/cloudPhysicsIO.csv

# Every trace, policy and cache size, with the cost model NAME: "papers"
# (the replay's default costs), or the costs in $costs (-C): cache sizes
# from a few hundred pages to beyond each trace's footprint, the last
# "unbounded" (1 Mi pages: every trace's footprint fits, nothing is
# evicted).  "none" does not depend
# on the size: once per trace.
UNBOUNDED=1048576
run_model() {	# run_model NAME
	mname=$1
	set --
	[ "$mname" = papers ] || set -- -C "$costs" -M "$mname"
	if [ -r "$cp_trace" ]; then
		sweep cloudphysics "256 512 1024 2048 4096 8192 16384 32768 65536 131072 262144" \
			"$@" -f cloudphysics -t "$cp_trace"
	fi
	sweep cello "512 1024 2048 4096 8192 16384 32768 65536" "$@" $CELLO
	sweep httpd "1024 2048 4096 8192 16384 32768 65536 131072" "$@" $HTTPD
}

sweep() {	# sweep NAME SIZES ARGS...
	name=$1
	sizes=$2
	shift 2
	"$replay" -l "$name" -p none -c "$UNBOUNDED" "$@"
	for p in lru mre gdsf gdsf-batch; do
		for c in $sizes $UNBOUNDED; do
			"$replay" -l "$name" -p "$p" -c "$c" "$@"
		done
	done
}

# Synthetic traces (seeded): Cello92-like, 1-2 pages (80 % two), and
# HTTPD-like, 1-32 pages; Zipf(0.8) popularity.
CELLO="-f cello -n 200000 -N 20000 -z 0.8 -s 1"
HTTPD="-f httpd -n 100000 -N 10000 -z 0.8 -s 1"

# TRACE_MODELS picks the cost models (default all five); "papers" also
# runs MRE's sensitivity sweep.
models=${TRACE_MODELS:-papers rxe-ordinary rxe-fast module-ordinary module-fast}
for m in $models; do
	case $m in
	papers|rxe-ordinary|rxe-fast|module-ordinary|module-fast) ;;
	*) echo "bench_trace: unknown cost model '$m'" >&2; exit 2 ;;
	esac
done
want() { case " $models " in *" $1 "*) return 0 ;; esac; return 1; }

[ -r "$cp_trace" ] ||
	echo "bench_trace: $cp_trace not found, skipping the real trace" >&2
if want papers; then
	costs=
	run_model papers

	# MRE sensitivity: resorting section and eviction segment sizes.
	for r in 25 50 75 100; do
		for e in 1 5 10 20; do
			"$replay" -l httpd -p mre -c 16384 -R "$r" -E "$e" $HTTPD
			[ -r "$cp_trace" ] && "$replay" -l cloudphysics -p mre \
				-c 4096 -R "$r" -E "$e" -f cloudphysics -t "$cp_trace"
		done
	done
fi

# The same with the cost models measured on rxe by BENCH=reg (ordinary
# and fast registration), fitted as bench-tables.py's fitted_costs()
# says (the tables find the run by the same function).  From this
# machine's last BENCH=reg
# (build/bench/reg.jsonl) if it measured this kernel's batches, else from
# the run kept in Documentation/data/reg.jsonl for this kernel (the
# "costs_ns" key of every line says which costs were used).
#
# "module-ordinary" and "module-fast" are the figures the module measured
# itself during that run (cost_kernel_*, kmod/cost.c): what a request pays
# for its registrations and evictions, with nobody waiting for an
# invalidation chain; from the first of build/bench/reg.jsonl,
# Documentation/data/reg-costs.jsonl that has them for this kernel.
kernel=${MRRC_KVER:-$(uname -r)}
reg_with() {	# reg_with METRIC FILE...: the first file with METRIC of $kernel
	metric=$1
	shift
	for f in "$@"; do
		if [ -r "$f" ] && grep "\"$metric\"" "$f" |
			grep -q "\"kernel\":\"$kernel\""; then
			echo "$f"
			return
		fi
	done
}
data=$top/Documentation/data
for kind in rxe module; do
	for mode in ordinary fast; do
		want "$kind-$mode" || continue
		if [ $kind = rxe ]; then
			reg=$(reg_with cost_model_batch_c_ns \
				"$top/build/bench/reg.jsonl" "$data/reg.jsonl")
		else
			reg=$(reg_with cost_kernel_batch_c_ns \
				"$top/build/bench/reg.jsonl" "$data/reg-costs.jsonl")
		fi
		if [ -z "$reg" ]; then
			echo "bench_trace: no $kind-$mode cost model of $kernel (make bench BENCH=reg), skipped" >&2
			continue
		fi
		echo "bench_trace: $kind-$mode costs of $kernel from $reg" >&2
		costs=$(python3 "$top/tools/bench/bench-tables.py" --costs \
			"$reg" "$kind-$mode" "$kernel")
		run_model "$kind-$mode"
	done
done
