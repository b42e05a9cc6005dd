#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The buffer manager's coherence protocol in the test VM (selftests/run.sh):
# three nodes, three processes with a /dev/mrrc context each, on the rxe
# device's address, connected to each other through the module; each runs
# BM_OPS (3000) random reads and writes of unique values on BM_PAGES (8)
# pages homed round-robin; `bm check` merges their histories (one clock:
# one machine) and checks every page's for linearizability.  Then the same
# with node 1 acknowledging invalidations while keeping its copy: the
# check must find pages that are not.  TAP on stdout.
set -u
out=${1:?usage: bm.sh OUTDIR}
b=$MRRC_REPO/build/tools
addr=10.211.0.1
ops=${BM_OPS:-3000}
pages=${BM_PAGES:-8}
mkdir -p "$out"
n=0 rc=0
tap() {	# tap DESC COMMAND...
	desc=$1
	shift
	n=$((n + 1))
	if "$@" > "$out/bm.$n.log" 2>&1; then
		echo "ok $n $desc"
	else
		echo "not ok $n $desc"
		rc=1
	fi
	sed 's/^/# /' "$out/bm.$n.log"
}

# cluster NAME PORT [NODE1_OPTIONS]: three nodes, started in order (each
# connects to the ones before it), all must exit 0.
cluster() {
	name=$1 port=$2 extra=${3:-}
	pids=
	for i in 0 1 2; do
		opt=
		[ $i = 1 ] && opt=$extra
		"$b/bm" node -i $i -n 3 -a $addr -p "$port" -P "$pages" -k 4 \
			-o "$ops" -s 7 -H "$out/$name.$i.hist" $opt \
			2> "$out/$name.$i.log" &
		pids="$pids $!"
		k=0
		until grep -q listening "$out/$name.$i.log" 2> /dev/null; do
			k=$((k + 1))
			[ $k -lt 100 ] || return 1
			sleep 0.1
		done
	done
	st=0
	for p in $pids; do
		wait "$p" || st=1
	done
	cat "$out/$name".?.log
	return $st
}
tap "three nodes run $ops operations each over the module" cluster good 7900
tap "every page's history is linearizable" \
	"$b/bm" check "$out"/good.?.hist
lied() {
	cluster lie 7990 "-L -w 70" || return 1
	grep -q "(lying)" "$out/lie.1.log" || return 1
	"$b/bm" check "$out"/lie.?.hist
	[ $? = 1 ]
}
tap "a node that acknowledges invalidations but keeps its copy is caught" lied
tap "a history that is not one is refused" sh -c "
	echo '# bm-history 1 node 0 nodes 3 pages 8 ops 1' > $out/bad.hist &&
	echo '9 1 5 1 2' >> $out/bad.hist &&
	! $b/bm check $out/bad.hist && ! $b/bm check /nonexistent && ! $b/bm check"

# The frame pool under load (bm fix), its pages in a file and in a Redy
# cache: every FIX checks the page against the run's last write to it,
# and the tier is checked after the flush.  The cache manager's model has
# one configuration (one-sided, one connection, batch and depth 1).
fix() {	# fix TIER FILE [OPTIONS]
	tier=$1 file=$2
	shift 2
	"$b/bm" fix -t "$tier" -f "$file" -F 32 -x 4 -w 20 -o 5000 -s 3 "$@" \
		> "$out/fix.json" || return 1
	cat "$out/fix.json"
	grep -q '"metric":"fix_p99_us"' "$out/fix.json"
}
tap "bm fix over a file: 5000 FIX of 128 pages in 32 frames, none lost" \
	fix file "$out/pages.bin" -K tmpfs
printf '%s\n' 'redy-model 1 1 1 1 1 4096 10' '0 1 1 1 1000 1000' > "$out/fix-model.txt"
"$b/redymgr" -m "$out/fix-model.txt" -p 7829 -r 64 > "$out/fix-redymgr.log" 2>&1 &
mgr=$!
"$b/redyd" -a $addr -p 7840 -m 8 -t 1 > "$out/fix-redyd.log" 2>&1 &
srv=$!
remote_fix() {
	k=0
	until grep -q 'server threads, ports' "$out/fix-redyd.log"; do
		k=$((k + 1))
		[ $k -lt 100 ] || return 1
		sleep 0.1
	done
	"$b/redy" server -M 127.0.0.1:7829 A $addr 7840 8 1 1 &&
	fix remote "$out/pages-r.bin" -M 127.0.0.1:7829
}
tap "bm fix over a Redy cache (remote memory), none lost" remote_fix
tap "a tier that drops writes is caught" sh -c "
	! $b/bm fix -t file -f $out/pages-l.bin -F 32 -x 4 -w 20 -o 5000 -L > /dev/null"
tap "bm fix refuses bad options" sh -c "
	! $b/bm fix -f $out/x 2> /dev/null && ! $b/bm fix -t ssd -f $out/x 2> /dev/null &&
	! $b/bm fix -t file -f $out/x -F 3 2> /dev/null &&
	! $b/bm fix -t file -f $out/x -w 101 2> /dev/null &&
	! $b/bm fix -t file -f $out/x -z 1 2> /dev/null &&
	! $b/bm fix -t remote -f $out/x -M 127.0.0.1:1 2> /dev/null &&
	! $b/bm fix -t file -f /nonexistent/x 2> /dev/null"
kill $srv $mgr
wait $srv $mgr
echo "1..$n"
exit $rc
