#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Run the two-VM suite again and again, to catch a rare failure: N rounds
# of (A serves B, then B serves A).  Every failing round's logs are kept
# in build/pair-loop/<round>-<a>-<b>/; the last line is
# "pair-loop: R rounds, P passed, F failed".  Stops at the first failure
# with STOP_ON_FAIL=1.  Each run holds the lock file VM_LOCK (default
# /tmp/mrrc-vm.lock), so that other VM runs on the machine interleave.
#
# usage: pair-loop.sh N KVER_A KVER_B   (KVER may be "debug")
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
. tools/vm/pair-cmds.sh
n=$1
resolve() { [ "$1" = debug ] && tools/vm/debug-kernel.sh || echo "$1"; }
ka=$(resolve "$2") && kb=$(resolve "$3") || exit 1
mkdir -p build
for k in $(echo "$ka $kb" | tr ' ' '\n' | sort -u); do
	make -s --no-print-directory module selftests initramfs KVER="$k" > build/pair-loop.build.log 2>&1 ||
		{ cat build/pair-loop.build.log; exit 1; }
done
out=build/pair-loop
mkdir -p "$out"
pass=0 fail=0
for r in $(seq 1 "$n"); do
	for pair in "$ka $kb" "$kb $ka"; do
		set -- $pair
		d=$out/$r-$1-$2
		mkdir -p "$d"
		t0=$(date +%s)
		VM_DMESG_DIR=$top/$d flock "${VM_LOCK:-/tmp/mrrc-vm.lock}" \
			tools/vm/pair.sh "$1" "$2" \
			"$PAIR_CMD_A" "$(pair_cmd_b "$top/$d")" > "$d/log" 2>&1
		st=$?
		if [ "$st" -eq 0 ]; then
			pass=$((pass + 1))
			echo "pair-loop: round $r, $1 serves $2: ok ($(($(date +%s) - t0)) s)"
			rm -rf "$d"
		else
			fail=$((fail + 1))
			echo "pair-loop: round $r, $1 serves $2: FAILED (exit $st), logs in $d"
			grep -E 'not ok|Oops|BUG:|WARNING:|panic' "$d/log" | head -10
			[ -z "${STOP_ON_FAIL:-}" ] || break 2
		fi
		[ "$ka" = "$kb" ] && break
	done
done
echo "pair-loop: $((pass + fail)) runs, $pass passed, $fail failed"
[ "$fail" -eq 0 ]
