#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# `make bench [BENCH=name]`: run benchmarks in one fresh test VM.  Each
# benchmark build/bench-bin/bench_<name> writes JSON lines to
# build/bench/<name>.jsonl.  BENCH=all runs every one.  Every line gets
# "accel" (kvm or tcg, see tools/vm/accel.sh) and "kernel" (the guest
# kernel release): where the figure was measured.
#
# usage: run.sh KVER NAME|all
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
kver=$1
which=$2
cd "$top"
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
cmd=
for n in $names; do
	cmd="$cmd build/bench-bin/bench_$n > build/bench/$n.jsonl.tmp &&
		mv build/bench/$n.jsonl.tmp build/bench/$n.jsonl &&
		echo \"bench: $n -> build/bench/$n.jsonl\" && cat build/bench/$n.jsonl &&"
done
export VM_MEM="${VM_MEM:-4G}"
accel=$(tools/vm/accel.sh "$kver")
st=0
tools/vm/run.sh "$kver" "$cmd true" || st=$?
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
