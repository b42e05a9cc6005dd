#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# `make bench [BENCH=name]`: run benchmarks in one fresh test VM.  Each
# benchmark build/bench-bin/bench_<name> writes JSON lines to
# build/bench/<name>.jsonl (shown on the console as they come; the file
# only replaces the old one if the benchmark succeeds).  BENCH=all runs
# every one.  The programs write the keys of the run into every line
# (tools/bench/benchjson.h): "kernel" and "accel" from the VM (MRRC_KVER,
# MRRC_ACCEL, see tools/vm/run.sh), "device" (rxe0 in the VM), and
# "commit" and "date" from here: MRRC_COMMIT is HEAD of this repository,
# found on the host (in the guest, git may refuse a repository owned by
# another user), MRRC_DATE when this run began, the same for every line.
# With MRRC_DEV set, the guest's rxe0 is renamed to it first, so the
# benchmarks run on a device of that name (as on a machine whose NIC is
# called so).
#
# BENCH=kv and BENCH=blk run in two VMs on a link instead (tools/vm/pair.sh,
# both on KVER unless KVER_A / KVER_B say otherwise): bench_NAME serve in
# VM a, bench_NAME client in VM b, which writes the lines; KV_SIZES,
# KV_CLIENTS, KV_GETPCT, KV_SECONDS and KV_ROUNDS pass through
# (bench_kv.sh), BLK_ROUNDS, BLK_SECONDS, BLK_QUEUES and BLK_MB too
# (bench_blk.sh).  BENCH=redy's REDY_* variables pass through to the VM
# (bench_redy.sh).
#
# usage: run.sh KVER NAME|all
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=$1
which=$2
cd "$top"
commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null) || commit=unknown
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
if [ "$which" = all ]; then
	names=$(ls build/bench-bin | sed -n 's/^bench_//p')
else
	names=$which
	[ -x "build/bench-bin/bench_$which" ] || {
		echo "bench: no benchmark '$which' (have: $(ls build/bench-bin | sed 's/^bench_//' | tr '\n' ' '))" >&2
		exit 2
	}
fi
mkdir -p build/bench
# In the guest: each benchmark's lines on the console as they come (tee),
# and its exit status through a file, as sh has no pipefail: the first
# that fails ends the run with its status.
dev=${MRRC_DEV:-rxe0}
case $dev in
''|*[!A-Za-z0-9_.-]*)
	echo "bench: MRRC_DEV '$dev' is not a device name" >&2
	exit 2 ;;
esac
names=$(echo $names)	# one line: ls gives one name per line
# kv and blk run in two VMs (below), the others in one.
pairs=
for p in kv blk; do
	case " $names " in
	*" $p "*)
		pairs="$pairs $p"
		names=$(echo "$names" | tr ' ' '\n' | grep -vx $p || true) ;;
	esac
done
names=$(echo $names)
cmd="export MRRC_COMMIT=$commit MRRC_DATE=$date MRRC_DEV=$dev;"
# BENCH=redy's and BENCH=bm's knobs (bench_redy.sh, bench_bm.sh) pass through.
for v in REDY_SPACE REDY_SECONDS REDY_SLOS REDY_RECORD REDY_RUNS REDY_MIG_MB \
	BM_OPS BM_PAGES BM_WRITE_PCT BM_LAT_OPS BM_FIX_OPS BM_FRAMES BM_DHT_KEYS BM_REPS; do
	x=$(printenv "$v" || true)
	case $x in
	*[!0-9.,]*) echo "bench: $v='$x': numbers only" >&2; exit 2 ;;
	?*) cmd="$cmd export $v=$x;" ;;
	esac
done
# BENCH=trace's cost models (bench_trace.sh): names, spaces and dashes.
x=$(printenv TRACE_MODELS || true)
case $x in
*[!a-z\ -]*) echo "bench: TRACE_MODELS='$x': model names only" >&2; exit 2 ;;
?*) cmd="$cmd export TRACE_MODELS='$x';" ;;
esac
[ "$dev" = rxe0 ] || cmd="$cmd rdma dev set rxe0 name $dev &&"
for n in $names; do
	out=build/bench/$n.jsonl
	cmd="$cmd echo \"bench: $n -> $out\" &&
		{ build/bench-bin/bench_$n; echo \$? > /tmp/bench-$n.status; } |
		tee $out.tmp &&
		(exit \$(cat /tmp/bench-$n.status || echo 1)) &&
		mv $out.tmp $out &&"
done
accel=$(tools/vm/accel.sh "$kver")
st=0
if [ -n "$names" ]; then
	VM_MEM="${VM_MEM:-4G}" tools/vm/run.sh "$kver" "$cmd true" || st=$?
fi
for p in $pairs; do
	[ "$st" -eq 0 ] || break
	ka=${KVER_A:-$kver} kb=${KVER_B:-$kver}
	env=
	vars="KV_SIZES KV_CLIENTS KV_GETPCT KV_SECONDS KV_ROUNDS"
	[ $p = kv ] || vars="BLK_ROUNDS BLK_SECONDS BLK_QUEUES BLK_MB"
	for v in $vars; do
		x=$(printenv "$v" || true)
		case $x in
		*[!0-9\ ]*) echo "bench: $v='$x': numbers only" >&2; exit 2 ;;
		?*) env="$env $v='$x'" ;;
		esac
	done
	out=build/bench/$p.jsonl
	echo "bench: $p -> $out (two VMs: $ka serves, $kb runs the clients)"
	# bench_blk's server unloads mrrc itself, after mrrc_blksrv.
	unload="rmmod mrrc || st=1;"
	[ $p = kv ] || unload=
	VM_TIMEOUT=${VM_TIMEOUT:-5400} tools/vm/pair.sh "$ka" "$kb" \
		"build/bench-bin/bench_$p serve" \
		"export MRRC_COMMIT=$commit MRRC_DATE=$date MRRC_KVER_SERVER=$ka$env;
		build/bench-bin/bench_$p client $out.tmp; st=\$?;
		$unload exit \$st" &&
		mv $out.tmp $out || st=$?
	names="$names $p"
done
# Lines of a benchmark that does not write the keys of the run itself.
for n in $names; do
	f=build/bench/$n.jsonl
	[ -f "$f" ] || continue
	sed -i '/"accel":/!s/}$/,"accel":"'"$accel"'","kernel":"'"$kver"'"}/' "$f"
done
[ "$st" -eq 0 ] || exit "$st"
# Figures are drawn on the host, where gnuplot is.
case " $names " in
*" trace "*) tools/bench/plot-trace.sh build/bench/trace.jsonl ;;
esac
