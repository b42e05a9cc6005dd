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
echo "1..$n"
exit $rc
