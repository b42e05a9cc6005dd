#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The coherence protocol on three machines: three test VMs on one shared
# segment (tools/vm/trio.sh), each with its own kernel, mrrc.ko and rxe
# device, one bm node in each.  Their clocks are apart, so the nodes
# measure node 0's before and after the workload (bm node -T) and bm check
# widens every operation by the error of that measurement.
#
#   bm_trio.sh OUT KVER_A KVER_B KVER_C   on the host: the three VMs, then
#                                         bm check; TAP on stdout, the
#                                         checks' and the throughput's
#                                         JSON lines in OUT/trio.jsonl
#   bm_trio.sh node I OUT                 in VM I (0, 1, 2): its nodes
#
# The runs, one after the other, each node waiting for the ones below it
# to listen (their logs, in OUT, which every VM sees):
#   good    BM_OPS (1500) random reads and writes each on BM_PAGES (8)
#   lie     the same with node 1 acknowledging invalidations but keeping
#           its copy (-L -w 70): the check must find pages that are not
#           linearizable, across the clocks' error
#   locked  BM_LOCK_OPS (500) each under the locks of node 0 (-x)
#   onesided  BM_OPS each with one-sided reads (-R): RDMA READs of the
#           other VMs' tables
#   dht     the hash table (-K) over the three VMs' global memory: 60,
#           20 and 10 keys on 96 pages, so node 0's values spill
# BM_TRIO_RUNS picks some of them (default all five, in that order); the
# tests of runs not run fail.
set -u
here=$(cd "$(dirname "$0")/../../.." && pwd)
b=$here/build/tools
ops=${BM_OPS:-1500}
lock_ops=${BM_LOCK_OPS:-500}
pages=${BM_PAGES:-8}
runs=${BM_TRIO_RUNS:-good lie locked onesided dht}
addrs=10.213.0.1,10.213.0.2,10.213.0.3

if [ "${1:-}" = node ]; then
	i=${2:?usage: bm_trio.sh node I OUT}
	out=${3:?usage: bm_trio.sh node I OUT}
	# All three VMs up before the first run: node 0 waits only 30 s
	# for the others to connect, and VMs boot when they boot.
	: > "$out/up.$i"
	k=0
	until [ -e "$out/up.0" ] && [ -e "$out/up.1" ] && [ -e "$out/up.2" ]; do
		k=$((k + 1))
		[ $k -lt 3000 ] || { echo "the other VMs never came up"; exit 1; }
		sleep 0.2
	done
	# run NAME PORT OPTIONS: this VM's node of one run
	run() {
		name=$1 port=$2
		shift 2
		for j in 0 1 2; do	# the nodes below listen (10 min at most)
			[ $j -lt "$i" ] || break
			k=0
			until grep -q ': listening$' "$out/$name.$j.log" 2> /dev/null; do
				k=$((k + 1))
				if [ $k -ge 3000 ] || [ -e "$out/$name.$j.status" ]; then
					echo "node $j of $name never listened"
					echo 1 > "$out/$name.$i.status"
					return 1
				fi
				sleep 0.2
			done
		done
		# shellcheck disable=SC2068	# (options, split on purpose)
		"$b/bm" node -i "$i" -n 3 -a "$MRRC_LINK_IP" -A $addrs -p "$port" \
			-k 4 -T $@ -H "$out/$name.$i.hist" > "$out/$name.$i.json" \
			2> "$out/$name.$i.log"
		echo $? > "$out/$name.$i.status"
	}
	o="-P $pages -o $ops -s 7"
	# shellcheck disable=SC2086	# (options, split on purpose)
	for r in $runs; do
		case $r in
		good) run good 7900 $o ;;
		lie) if [ "$i" = 1 ]; then run lie 7990 $o -L -w 70; else run lie 7990 $o; fi ;;
		locked) run locked 8080 -P $pages -o "$lock_ops" -s 9 -x ;;
		onesided) run onesided 8170 $o -R ;;
		dht) run dht 8260 -P 96 -K "$(echo 60 20 10 | cut -d' ' -f$((i + 1)))" ;;
		esac
	done
	exit 0
fi

out=${1:?usage: bm_trio.sh OUT KVER_A KVER_B KVER_C}
ka=${2:?} kb=${3:?} kc=${4:?}
# The VMs see the repository (read-write) at the same path, nothing else.
case $out in
"$here"/*[!A-Za-z0-9/._+-]*|"$here") echo "bm_trio.sh: OUT: a plain path under $here" >&2; exit 2 ;;
"$here"/*) ;;
*) echo "bm_trio.sh: OUT must be under the repository ($here): the VMs write there" >&2; exit 2 ;;
esac
rm -rf "$out"
mkdir -p "$out"
n=0
tap() {	# tap DESC COMMAND...
	desc=$1
	shift
	n=$((n + 1))
	if "$@" > "$out/t.$n.log" 2>&1; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
	fi
	sed 's/^/# /' "$out/t.$n.log"
}
node() {
	echo "BM_OPS=$ops BM_LOCK_OPS=$lock_ops BM_PAGES=$pages BM_TRIO_RUNS='$runs'" \
		"tools/bm/tests/bm_trio.sh node $1 '$out'"
}
VM_DMESG_DIR=$out "$here/tools/vm/trio.sh" "$ka" "$kb" "$kc" \
	"$(node 0)" "$(node 1)" "$(node 2)" > "$out/trio.log" 2>&1
st=$?
ran() {	# ran NAME: all three nodes of run NAME exited 0
	r=0
	for j in 0 1 2; do
		[ "$(cat "$out/$1.$j.status" 2> /dev/null)" = 0 ] ||
			{ echo "node $j: status $(cat "$out/$1.$j.status" 2> /dev/null)"; r=1; }
		cat "$out/$1.$j.log" 2> /dev/null
	done
	[ "${r:-0}" = 0 ]
}
tap "three VMs ($ka, $kb, $kc), a node each, $ops operations each" ran good
# The JSON lines of the checks and of the cluster's throughput, into
# OUT/trio.jsonl, with the keys of where they ran (the three guests).
export MRRC_KVER="$ka,$kb,$kc" MRRC_DEV=rxe0
MRRC_ACCEL=$("$here/tools/vm/accel.sh" "$ka" 2> /dev/null) || MRRC_ACCEL=unknown
MRRC_COMMIT=$(git -C "$here" rev-parse --short HEAD 2> /dev/null) || MRRC_COMMIT=unknown
MRRC_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ)
export MRRC_ACCEL MRRC_COMMIT MRRC_DATE
: > "$out/trio.jsonl"
checked() {	# checked NAME LOCKING OPS ONE_SIDED: bm check of run NAME, its throughput
	ran "$1" > /dev/null || { echo "run $1 did not end well"; return 1; }
	for j in 0 1 2; do
		[ -s "$out/$1.$j.hist" ] || { echo "no history of node $j"; return 1; }
	done
	"$b/bm" check "$out/$1".?.hist > "$out/$1.check" || return 1
	cat "$out/$1.check" >> "$out/trio.jsonl"
	# the cluster's: all operations over the slowest node's time
	cat "$out/$1".?.log | awk -v l="$2" -v o="$3" -v r="${4:-0}" -v k="$MRRC_KVER" \
		-v a="$MRRC_ACCEL" -v c="$MRRC_COMMIT" -v d="$MRRC_DATE" '
		/ operations in / { ops += $4; if ($7 > s) s = $7 }
		END { if (s > 0 && o > 0) printf "{\"bench\":\"bm\",\"metric\":\"coherence_throughput_ops\",\"value\":%.0f,\"unit\":\"ops/s\",\"nodes\":3,\"machines\":3,\"locking\":%d,\"one_sided\":%d,\"ops\":%d,\"kernel\":\"%s\",\"accel\":\"%s\",\"device\":\"rxe0\",\"commit\":\"%s\",\"date\":\"%s\"}\n", ops / s, l, r, o, k, a, c, d }' \
		>> "$out/trio.jsonl"
	cat "$out/$1.check"
}
tap "every page's history is linearizable (clocks aligned to node 0's)" \
	checked good 0 "$ops"
lied() {
	ran lie || return 1
	grep -q "(lying)" "$out/lie.1.log" || return 1
	"$b/bm" check "$out"/lie.?.hist 2> "$out/lie.err"
	[ $? = 1 ] && cat "$out/lie.err" && grep -q "not linearizable" "$out/lie.err"
}
tap "a node that keeps invalidated copies is caught across the clocks' error" lied
locked() {
	ran locked || return 1
	checked locked 1 "$lock_ops" || return 1
	grep -q '"metric":"mutual_exclusion_violations","value":0,' "$out/locked.check" ||
		return 1
	# and some holds long enough to be compared at all
	h=$(sed -n 's/.*"metric":"lock_holds","value":\([0-9]*\),.*/\1/p' "$out/locked.check")
	u=$(sed -n 's/.*"metric":"lock_holds_unproven","value":\([0-9]*\),.*/\1/p' "$out/locked.check")
	echo "lock holds: $h, too short to compare: $u"
	[ -n "$h" ] && [ -n "$u" ] && [ "$u" -lt "$h" ]
}
tap "$lock_ops locked operations each: linearizable, locks exclusive" locked
onesided() {
	checked onesided 0 "$ops" 1 || return 1
	for j in 0 1 2; do
		grep -q "node $j: [1-9][0-9]* one-sided reads" "$out/onesided.$j.log" ||
			{ echo "node $j: no one-sided read"; return 1; }
	done
}
tap "$ops operations each with one-sided reads (RDMA READs between the VMs): linearizable" onesided
dht() {
	checked dht 0 0 || return 1
	grep -q 'node 0: hash table of 60 keys, 32 of them in its own memory' "$out/dht.0.log"
}
tap "the hash table over the three VMs' memory: every lookup checked, linearizable" dht
vms() { tail -n 5 "$out/trio.log"; [ "$st" = 0 ]; }
tap "the three VMs exit 0, dmesg scans clean" vms
echo "1..$n"
