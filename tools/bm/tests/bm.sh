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
trap 'kill $(jobs -p) 2> /dev/null || :' EXIT
tap() {	# tap DESC COMMAND...
	desc=$1
	shift
	n=$((n + 1))
	t0=$(date +%s)
	if "$@" > "$out/bm.$n.log" 2>&1; then
		echo "ok $n $desc"
	else
		echo "not ok $n $desc"
		rc=1
	fi
	sed 's/^/# /' "$out/bm.$n.log"
	echo "# ($(($(date +%s) - t0)) s)"
}

# waitfor FILE PATTERN: until a line of FILE matches (60 s at most: a loaded emulated VM)
waitfor() {
	k=0
	until grep -q "$2" "$1" 2> /dev/null; do
		k=$((k + 1))
		[ $k -lt 600 ] || return 1
		sleep 0.1
	done
}

# nodes NAME PORT OPTIONS0 OPTIONS1 OPTIONS2: three nodes with these
# options (split on blanks), started in order (each connects to the ones
# before it); 0 if all three exit 0.  History NAME.I.hist, stdout
# NAME.I.json, stderr NAME.I.log, exit status NAME.I.status.
nodes() {
	name=$1 port=$2
	shift 2
	pids=
	for i in 0 1 2; do
		eval "opt=\${$((i + 1))}"
		# shellcheck disable=SC2086	# (options, split on purpose)
		"$b/bm" node -i $i -n 3 -a $addr -p "$port" -k 4 $opt \
			-H "$out/$name.$i.hist" > "$out/$name.$i.json" \
			2> "$out/$name.$i.log" &
		pids="$pids $!"
		waitfor "$out/$name.$i.log" listening || { kill $pids; return 1; }
	done
	st=0 i=0
	for p in $pids; do
		wait "$p"
		s=$?
		echo $s > "$out/$name.$i.status"
		[ $s = 0 ] || st=1
		i=$((i + 1))
	done
	cat "$out/$name".?.log
	return $st
}
# cluster NAME PORT [NODE1_OPTIONS]: random reads and writes
cluster() {
	o="-P $pages -o $ops -s 7"
	nodes "$1" "$2" "$o" "$o ${3:-}" "$o"
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
status() {	# status WANT COMMAND...: the command exits with WANT
	want=$1
	shift
	"$@" > /dev/null 2>&1
	[ $? = "$want" ] || { echo "$*: not exit status $want"; return 1; }
}
bad_histories() {
	printf '%s\n' '# bm-history 1 node 0 nodes 3 pages 8 ops 1' '9 1 5 1 2' \
		> "$out/bad.hist" &&
	printf '%s\n' '# bm-history 1 node 0 nodes 3 pages 8 ops 2' '1 1 5 1 2' \
		> "$out/short.hist" &&
	status 2 "$b/bm" check "$out/bad.hist" &&
	status 2 "$b/bm" check "$out/short.hist" &&
	status 2 "$b/bm" lat "$out/short.hist" &&
	status 2 "$b/bm" check /nonexistent &&
	printf '%s\n' '# bm-history 1 node 0 nodes 2 pages 1 ops 0 page_bytes 8' \
		> "$out/b8.hist" &&
	printf '%s\n' '# bm-history 1 node 1 nodes 2 pages 1 ops 0 page_bytes 16' \
		> "$out/b16.hist" &&
	status 0 "$b/bm" check "$out/b8.hist" &&
	status 2 "$b/bm" check "$out/b8.hist" "$out/b16.hist" &&
	status 2 "$b/bm" lat "$out/b8.hist" "$out/b16.hist" &&
	status 2 "$b/bm" check
}
tap "a history that is not one, or cut short, or of pages of another size, is refused" bad_histories

# Clocks apart (-T, bm_trio.sh): node 1's clock 5 ms ahead of node 0's.
# Node 0 writes 1 over [1, 2] ms and holds the page's exclusive lock over
# [1, 2] ms; node 1 reads the initial 0 over [8, 8.1] ms of its clock,
# [3, 3.1] of node 0's, and holds the lock over [6.5, 7.5], [1.5, 2.5].
# With an error of 0.1 ms both are violations; with 1.5 ms (the read
# widened to [1.5, 4.6], the hold narrowed to nothing) neither can be
# shown.  Refused: measurements that cannot be (an error of 0, numbers
# at node 0, two at one time, a drift of 2 ms in 3 ms), times outside
# the measurements, -T in one history only, one node's history twice.
clock_hist() {	# clock_hist FILE NODE CLOCKS LINE...
	f=$1 node=$2 clk=$3
	shift 3
	{
		echo "# bm-history 1 node $node nodes 2 pages 1 ops $# inflight 1 write_pct 50 keys 0 lock_node 0 locking 1 counter 0 clocks $clk"
		printf '%s\n' "$@"
	} > "$f"
}
clocks() {
	h0="0 1 1 1000000 2000000" x0="0 5 1000000 1000000 2000000"
	h1="0 0 0 8000000 8100000" x1="0 5 6500000 6500000 7500000"
	c0="1 0 0 0 0 0 0"
	clock_hist "$out/c0.hist" 0 "$c0" "$h0" "$x0" &&
	c1="1 6000000 -5000000 100000 9000000 -5000000 100000"
	clock_hist "$out/c1.hist" 1 "$c1" "$h1" "$x1" &&
	clock_hist "$out/c1w.hist" 1 "1 6000000 -5000000 1500000 9000000 -5000000 100000" "$h1" "$x1" &&
	clock_hist "$out/c1z.hist" 1 "1 6000000 -5000000 0 9000000 -5000000 100000" "$h1" "$x1" &&
	clock_hist "$out/c1n.hist" 1 "0 0 0 0 0 0 0" "$h1" "$x1" &&
	clock_hist "$out/c0f.hist" 0 "1 6000000 -5000000 100 9000000 -5000000 100" "$h0" "$x0" &&
	clock_hist "$out/c1e.hist" 1 "1 6000000 -5000000 100 6000000 -5000000 100" "$h1" "$x1" &&
	clock_hist "$out/c1d.hist" 1 "1 6000000 -5000000 100 9000000 -3000000 100" "$h1" "$x1" &&
	clock_hist "$out/c1o.hist" 1 "1 8500000 -5000000 100000 9000000 -5000000 100000" "$h1" "$x1" &&
	clock_hist "$out/c1b.hist" 1 "$c1" "$h1" "0 5 6500000 6500000 9500000" || return 1
	"$b/bm" check "$out/c0.hist" "$out/c1.hist" > "$out/c.json" 2> "$out/c.err"
	[ $? = 1 ] || { echo "0.1 ms: not exit 1"; return 1; }
	cat "$out/c.err"
	grep -q "page 0: not mutually exclusive" "$out/c.err" &&
	grep -q "page 0: not linearizable" "$out/c.err" &&
	grep -q '"metric":"clock_error_us","value":100.002,' "$out/c.json" || return 1
	"$b/bm" check "$out/c0.hist" "$out/c1w.hist" > "$out/cw.json" 2> "$out/cw.err" ||
		{ echo "1.5 ms: not exit 0"; cat "$out/cw.err"; return 1; }
	grep -q "1 lock holds shorter than twice" "$out/cw.err" &&
	status 2 "$b/bm" check "$out/c0.hist" "$out/c1z.hist" &&
	status 2 "$b/bm" check "$out/c0.hist" "$out/c1n.hist" &&
	status 2 "$b/bm" check "$out/c0f.hist" "$out/c1.hist" &&
	status 2 "$b/bm" check "$out/c0.hist" "$out/c1e.hist" &&
	status 2 "$b/bm" check "$out/c0.hist" "$out/c1d.hist" &&
	status 2 "$b/bm" check "$out/c0.hist" "$out/c1o.hist" &&
	status 2 "$b/bm" check "$out/c0.hist" "$out/c1b.hist" &&
	status 2 "$b/bm" check "$out/c1.hist" "$out/c1.hist"
}
tap "clocks apart: violations beyond the error found, within it not; bad measurements refused" clocks

# The hash table (-K): every node an access node with a table of its own
# whose values are Malloc'd in the global memory; node 0 has more keys
# than pages of its own, so its values spill to the others' memory.
# Every lookup is checked against the last write (in bm node), every
# page's history for linearizability (Free writes the page first), and
# Malloc and Free went to other nodes.
# dht NAME PORT PAGES OPTIONS0 OPTIONS1 OPTIONS2 ("-K KEYS ...")
dht() {
	name=$1 port=$2 np=$3
	nodes "$name" "$port" "-P $np $4" "-P $np $5" "-P $np $6"
}
dht_spill() {
	dht dht 8100 96 "-K 60" "-K 20" "-K 10" &&
	# node 0: 32 pages of its own (the others need none of them), 60 keys
	grep -q 'node 0: hash table of 60 keys, 32 of them in its own' "$out/dht.0.log" &&
	[ "$(grep -c '"metric":"dht_throughput_ops"' "$out/dht.0.json")" = 5 ] &&
	"$b/bm" check "$out"/dht.?.hist &&
	"$b/bm" lat "$out/dht.0.hist" > "$out/dht.lat" &&
	grep -q '"op":"malloc","where":"remote"' "$out/dht.lat" &&
	grep -q '"op":"free","where":"remote"' "$out/dht.lat" &&
	grep -q '"op":"free","where":"local"' "$out/dht.lat"
}
tap "a hash table on the global memory: insert, look up, update, erase; values on other nodes" \
	dht_spill
full() {
	! dht full 8200 24 "-K 30" "-K 0" "-K 0" &&
	grep -q 'Malloc: no node has a free page' "$out/full.0.log"
}
tap "Malloc with every page taken fails cleanly" full
# Node 2 dies after 700 of its 2 000 operations, holding copies, owing
# acknowledgements, with writes in flight (-Z: its process ends, the
# module tears its connections down); nodes 0 and 1 go on without it, on
# the pages homed at them, and every page's history, with the writes
# that never completed left open, stays linearizable.
died() {	# died NAME PORT [OPTIONS]: at every node
	o="-P $pages -o 2000 -s 9 ${3:-}"
	nodes "$1" "$2" "$o" "$o" "$o -Z 700"
	[ "$(cat "$out/$1".?.status | tr '\n' ' ')" = "0 0 3 " ] &&
	grep -q 'node 2 is gone' "$out/$1.0.log" &&
	grep -q 'node 2 is gone' "$out/$1.1.log" &&
	grep -q 'node 2: dying after' "$out/$1.2.log" &&
	"$b/bm" check "$out/$1".?.hist
}
tap "a node that dies: the others go on, every page stays linearizable" died died 8700
# One-sided reads (-R): a read of a page homed elsewhere with no copy
# here is an RDMA READ of the home's exported table, without the home's
# CPU; writes still go through the protocol.  Every page linearizable; a
# home whose table never changes (-S) is caught; -R at one node only
# ends the run.
onesided() {
	o="-P $pages -o $ops -s 11 -R"
	nodes onesided 8900 "$o" "$o" "$o" || return 1
	for i in 0 1 2; do
		grep -q "node $i: [1-9][0-9]* one-sided reads" "$out/onesided.$i.log" ||
			return 1
	done
	"$b/bm" check "$out"/onesided.?.hist
}
tap "one-sided reads (-R): RDMA READs of the homes' tables, every page linearizable" onesided
stale() {
	o="-P $pages -o $ops -s 11 -R"
	nodes stale 8910 "$o" "$o -S" "$o" || return 1
	grep -q "(its table stale)" "$out/stale.1.log" || return 1
	grep -q '^[0-9]* 6 ' "$out/stale.0.hist" || return 1	# its one-sided reads
	"$b/bm" check "$out"/stale.?.hist
	[ $? = 1 ]
}
tap "a home whose exported table goes stale (-S) is caught" stale
half() {
	o="-P $pages -o 100 -s 11"
	nodes half 8920 "$o -R" "$o" "$o"
	[ $? != 0 ] && grep -q "Protocol error" "$out/half.1.log"
}
tap "-R at one node only ends the run" half
# A node dies with one-sided reads: the READs in flight to it fail or are
# flushed with its connections, those reads are abandoned; the others
# finish and every page stays linearizable.
tap "a node that dies under one-sided reads: the others go on, every page linearizable" \
	died died1s 8930 -R
# Pages of more than a word (-B): a WRITE and a DATA carry the page's
# body, which every read checks against the value it got (the workload
# writes a body that is a function of the two).  Pages of 4 KiB, two-
# and one-sided (912 bytes, the paper's block) and under the hash table;
# a home whose DATA carry bodies that are not their values' (-X 14) is
# caught by the reader (EIO), not passed on.
bodies() {	# bodies NAME: every node checked bodies
	for i in 0 1 2; do
		grep -q "node $i: pages of [0-9]* bytes, [1-9][0-9]* bodies checked" \
			"$out/$1.$i.log" || return 1
	done
}
pages4k() {
	o="-P $pages -o $ops -s 13 -B 4096"
	nodes pages4k 8940 "$o" "$o" "$o" && bodies pages4k &&
	"$b/bm" check "$out"/pages4k.?.hist > "$out/pages4k.json" &&
	grep -q '"page_bytes":4096' "$out/pages4k.json" &&
	"$b/bm" lat "$out"/pages4k.?.hist | grep -q '"page_bytes":4096'
}
tap "pages of 4096 bytes (-B): bodies travel with the values, every read's checked, every page linearizable" \
	pages4k
pages_more() {
	o="-P $pages -o 1000 -s 13 -B 912 -R"
	nodes pages1s 8950 "$o" "$o" "$o" && bodies pages1s &&
	grep -q "node 0: [1-9][0-9]* one-sided reads" "$out/pages1s.0.log" &&
	"$b/bm" check "$out"/pages1s.?.hist &&
	dht pagesdht 8960 96 "-B 4096 -K 60" "-B 4096 -K 20" "-B 4096 -K 10" &&
	bodies pagesdht &&
	"$b/bm" check "$out"/pagesdht.?.hist
}
tap "pages of 912 bytes read one-sided (-R), and the hash table on pages of 4096 bytes" \
	pages_more
body_lie() {
	o="-P $pages -o 500 -s 13 -B 64"
	nodes bodylie 8970 "$o" "$o -X 14" "$o"
	[ $? = 1 ] &&
	grep -q "node 1: sent node 0 a forgery (14)" "$out/bodylie.1.log" &&
	grep -q 'node 0: page [0-9]*: a body that is not value' "$out/bodylie.0.log" &&
	grep -q 'node 0: Input/output error' "$out/bodylie.0.log"
}
tap "a home whose DATA bodies are not their values' is caught by the reader" body_lie
tap "a node that dies with pages of 4096 bytes: its writes applied with their bodies, the others go on" \
	died diedB 8710 "-B 4096"
# The buffer manager's levels (§5): each node keeps at most 8 copies of
# pages homed elsewhere (-f: its frames, 2Q), each home at most 8 of its
# own pages in memory (-M: the frames the others read from), the rest in
# its file (-D); 64 pages of 4 KiB drawn from a Zipf distribution, reads
# under shared and writes under exclusive locks (FIX and UNFIX).  Every
# page read back from a file must be its last committed value and body,
# every read's body its value's, every page linearizable.
levels() {	# levels NAME PORT FRAMES [OPTIONS [FILE_OPTIONS]]
	mkdir -p "$out/files.$1" || return 1
	o="-P 64 -o 1000 -s 15 -B 4096 -f $3 -M $3 ${5:--D $out/files.$1} -z 0.9 ${4:-}"
	nodes "$1" "$2" "$o" "$o" "$o" && bodies "$1" || return 1
	for i in 0 1 2; do
		grep -q "node $i: frames (-f $3): [0-9]* reads of a copy, [1-9][0-9]* copies dropped" \
			"$out/$1.$i.log" &&
		grep -q "node $i: home frames (-M $3): [1-9][0-9]* pages read from the file, [1-9][0-9]* written" \
			"$out/$1.$i.log" &&
		grep -q '"metric":"fix_p99_us"' "$out/$1.$i.json" || return 1
	done
	"$b/bm" check "$out/$1".?.hist
}
tap "the buffer manager's levels: a node's frames (-f), its home's (-M), its home's file (-D); every page linearizable" \
	levels levels 8980 8 -x
levels_nl() {
	levels levelsnl 8990 4 &&
	# and copies invalidated left their frames at once (bm_pool_discard())
	grep -h "frames freed by invalidations" "$out"/levelsnl.?.log |
		grep -q ", [1-9][0-9]* frames freed by invalidations"
}
tap "the same without locks, 4 frames each: copies dropped while their invalidations and reads race, invalidated copies' frames freed" \
	levels_nl
died_levels() {
	mkdir -p "$out/files.dl" &&
	died diedlevels 8720 "-B 4096 -P 64 -f 4 -M 4 -D $out/files.dl -z 0.9"
}
tap "a node that dies under the buffer manager's levels: the others go on, every page linearizable" \
	died_levels
# The homes' file on another node (-F: bm fserve, FReadF and FPrintF),
# one file for the three homes, each page at its place; then read and
# written with RDMA READs and WRITEs (-m: the server's file on tmpfs).
# A server whose file cannot hold every page refuses the writes past
# its end (EINVAL), and the node stops before it starts.
levels_fserve() {
	lfile=$(mktemp /tmp/bm-levels.XXXXXX)
	sfile=$(mktemp /tmp/bm-small.XXXXXX)
	"$b/bm" fserve -a $addr -p 9300 -f "$lfile" -s $((64 * 4096)) -I 600 \
		> "$out/fserve-lv.log" 2>&1 &
	lsrv=$!
	"$b/bm" fserve -a $addr -p 9302 -f "$sfile" -s $((32 * 4096)) \
		> "$out/fserve-small.log" 2>&1 &
	ssrv=$!
	st=0
	{ waitfor "$out/fserve-lv.log" serving && waitfor "$out/fserve-small.log" serving &&
	  levels levelsf 9100 8 -x "-F $addr:9300" &&
	  levels levelsfm 9200 4 "" "-F $addr:9300 -m" &&
	  grep -c "node [012]: the file at $addr:9300 mapped, 262144 bytes, RDMA READs and WRITEs" \
		"$out"/levelsfm.?.log | grep -c ':1$' | grep -qx 3 &&
	  rm -f "$out/fsmall.log" &&
	  { "$b/bm" node -i 2 -n 3 -a $addr -p 9250 -P 64 -B 4096 -M 4 -F $addr:9302 -m \
		> /dev/null 2> "$out/fsmall.log"
	    [ $? = 1 ]; } && cat "$out/fsmall.log" &&
	  grep -q 'node 2: page 32 past the end of the file at the server (-F)' "$out/fsmall.log" &&
	  grep -q 'node 2: frames (-f, -M): Invalid argument' "$out/fsmall.log"; } || st=1
	kill $lsrv $ssrv
	wait $lsrv || st=1
	wait $ssrv || st=1
	cat "$out/fserve-lv.log" "$out/fserve-small.log"
	rm -f "$lfile" "$sfile"
	[ $st = 0 ] && grep -q '6 clients (0 turned away, 0 timed out, 3 mapped, 3 of them writable)' \
		"$out/fserve-lv.log"
}
tap "the buffer manager's levels with the homes' file on another node (bm fserve, -F), then one-sided (-m); a file too small refused" \
	levels_fserve
# The locks (-x): every read under its page's shared lock and every
# write under its exclusive one, at lock node 0; bm check also checks
# that no exclusive hold overlapped another (one clock).  Then every
# operation an increment (-C: a read, then a write of one more) under the
# exclusive lock: no increment is lost (two writes of one value would
# be); and the same without the locks, where the check must find one.
locked() {
	o="-P $pages -o 300 -s 5 -x"
	nodes locked 8800 "$o" "$o" "$o" &&
	grep -q 'node 1: 300 locks taken at node 0' "$out/locked.1.log" &&
	"$b/bm" check "$out"/locked.?.hist > "$out/locked.check" &&
	cat "$out/locked.check" &&
	grep -q '"metric":"mutual_exclusion_violations","value":0,' "$out/locked.check" &&
	grep -q '"metric":"lock_holds","value":900,' "$out/locked.check" &&
	"$b/bm" lat "$out"/locked.?.hist > "$out/locked.lat" &&
	grep -q '"op":"exclusive_lock","where":"local"' "$out/locked.lat" &&
	grep -q '"op":"shared_lock","where":"remote"' "$out/locked.lat"
}
tap "locks: reads under shared, writes under exclusive locks, mutually exclusive" locked
counted() {
	o="-P 2 -o 200 -s 3 -C -x -B 512"
	nodes counted 8810 "$o" "$o" "$o" &&
	"$b/bm" check "$out"/counted.?.hist
}
tap "increments under an exclusive lock (pages of 512 bytes): none lost" counted
uncounted() {
	o="-P 2 -o 200 -s 3 -C"
	nodes uncounted 8820 "$o" "$o" "$o" || return 1
	"$b/bm" check "$out"/uncounted.?.hist > /dev/null 2> "$out/uncounted.err"
	st=$?
	cat "$out/uncounted.err"
	[ $st = 1 ] && grep -q 'an update was lost' "$out/uncounted.err"
}
tap "increments without the lock lose updates, and the check finds them" uncounted
# One-sided locks (-Y): the lock words at lock node 0, taken and given
# back with RDMA atomics (CMP_SWAP, FETCH_ADD), no message; node 0 takes
# none (-o 0) and serves its pages.  Increments of two pages under the
# exclusive lock: none lost; then reads under shared and writes under
# exclusive locks on 8 pages: every hold exclusive as it must be, every
# page linearizable.
onesided_locks() {
	o="-x -Y -s 21"
	nodes lky 9400 "$o -P 2 -o 0 -C" "$o -P 2 -o 300 -C" "$o -P 2 -o 300 -C" || return 1
	grep -q "node 1: one-sided locks (-Y): [1-9][0-9]* tries found the lock taken" \
		"$out/lky.1.log" &&
	grep -q "node 2: 300 locks taken at node 0, every operation an increment" "$out/lky.2.log" &&
	"$b/bm" check "$out"/lky.?.hist || return 1
	nodes lkyr 9500 "$o -P $pages -o 0" "$o -P $pages -o 1000 -w 30" \
		"$o -P $pages -o 1000 -w 30" &&
	"$b/bm" check "$out"/lkyr.?.hist > "$out/lkyr.json" &&
	cat "$out/lkyr.json" &&
	grep -q '"metric":"mutual_exclusion_violations","value":0,' "$out/lkyr.json" &&
	grep -q '"metric":"lock_holds","value":2000,' "$out/lkyr.json"
}
tap "one-sided locks (-Y, RDMA atomics at the lock node): increments none lost, holds mutually exclusive, pages linearizable" \
	onesided_locks
# Node 2 dies holding a lock (-Z with -x waits until it holds one): the
# lock node releases what it held and the others go on; its hold ends
# at its death, so mutual exclusion is still checked across it.
died_locked() {
	o="-P $pages -o 500 -s 11 -x"
	nodes dlock 8830 "$o" "$o" "$o -Z 150"
	[ "$(cat "$out"/dlock.?.status | tr '\n' ' ')" = "0 0 3 " ] &&
	grep -q 'node 0: [1-9][0-9]* locks of dead nodes released' "$out/dlock.0.log" &&
	"$b/bm" check "$out"/dlock.?.hist
}
tap "a node that dies holding a lock: the lock node releases it, the others go on" died_locked
# Hand-made histories of one page: an exclusive hold (kind 5: asked at
# 10, held 20..40) and a shared one (kind 4) that overlaps it, then one
# that does not.
overlap() {
	printf '%s\n' '# bm-history 1 node 0 nodes 2 pages 1 ops 1' '0 5 10 20 40' \
		> "$out/x.0.hist" &&
	printf '%s\n' '# bm-history 1 node 1 nodes 2 pages 1 ops 1' '0 4 25 30 50' \
		> "$out/x.1.hist" &&
	printf '%s\n' '# bm-history 1 node 1 nodes 2 pages 1 ops 1' '0 4 25 41 50' \
		> "$out/y.1.hist" &&
	printf '%s\n' '# bm-history 1 node 1 nodes 2 pages 1 ops 1' '0 4 45 41 50' \
		> "$out/z.1.hist" &&
	"$b/bm" check "$out/x.0.hist" "$out/y.1.hist" > /dev/null &&
	"$b/bm" check "$out/x.0.hist" "$out/x.1.hist" > /dev/null 2> "$out/x.err"
	st=$?
	cat "$out/x.err"
	[ $st = 1 ] &&
	grep -q 'page 0: not mutually exclusive: a shared lock held from 30 overlaps an exclusive one' \
		"$out/x.err" &&
	status 2 "$b/bm" check "$out/x.0.hist" "$out/z.1.hist" &&
	# histories of nodes that disagree about the lock node
	printf '%s\n' '# bm-history 1 node 0 nodes 2 pages 1 ops 0 inflight 1 write_pct 0 keys 0 lock_node 0 locking 1 counter 0' \
		> "$out/l0.hist" &&
	printf '%s\n' '# bm-history 1 node 1 nodes 2 pages 1 ops 0 inflight 1 write_pct 0 keys 0 lock_node 1 locking 1 counter 0' \
		> "$out/l1.hist" &&
	status 0 "$b/bm" check "$out/l0.hist" &&
	status 2 "$b/bm" check "$out/l0.hist" "$out/l1.hist"
}
tap "locks held at once by an exclusive and another holder are caught" overlap
alone() {
	"$b/bm" node -i 0 -n 1 -a $addr -p 8300 -P 16 -K 16 -H "$out/one.hist" \
		> "$out/one.json" 2> "$out/one.log"
	st=$?
	cat "$out/one.log"
	[ $st = 0 ] &&
	grep -q 'hash table of 16 keys, 16 of them in its own' "$out/one.log" &&
	"$b/bm" check "$out/one.hist"
}
tap "one node alone: every value in its own memory" alone
# A lying node 1 sends node 0 one forged message; node 0 must stop with
# EPROTO, not act on it (what node 2 does then does not matter)
forged() {	# forged KIND PORT OPTIONS...
	kind=$1 port=$2
	shift 2
	dht "forge$kind" "$port" 48 "$*" "$* -X $kind" "$*"
	[ $? = 1 ] &&
	grep -q "node 1: sent node 0 a forgery ($kind)" "$out/forge$kind.1.log" &&
	grep -q 'node 0: .*Protocol error' "$out/forge$kind.0.log"
}
forgeries() {
	for k in 1 2 3 4; do
		forged $k $((8500 + k * 10)) -K 8 || return 1
	done
	for k in 5 6 7 8; do
		forged $k $((8500 + k * 10)) -o 50 -x || return 1
	done
	# a LOCK in a cluster that does not lock
	forged 8 8590 -o 50 &&
	# a SYNCED nobody asked for (with -T and without), an EXPORT without -R
	forged 9 8600 -o 50 -T &&
	forged 9 8610 -o 50 &&
	forged 10 8620 -o 50 &&
	# with -R: an EXPORT of another length; a table whose check words lie
	forged 10 8630 -o 50 -R &&
	forged 11 8640 -o 50 -R &&
	# with -R, a second EXPORT; with -T, a SYNC with a value
	forged 12 8650 -o 50 -R &&
	forged 13 8660 -o 50 -T &&
	# with -B, a WRITE whose body is not its value's
	forged 15 8670 -o 50 -B 64 &&
	grep -q "node 0: node 1's WRITE of page 0: a body that is not" "$out/forge15.0.log" &&
	# with -Y: a LOCKTAB from a node that is not the lock node (node 2
	# the lock node); a LOCK message to a lock node whose locks are
	# one-sided (node 0, taking none); a LOCKTAB from the lock node
	# (node 1) at an address not a multiple of 8
	yforged 16 8680 "-o 50" "-o 50" "-o 0 -l 2" &&
	yforged 8 8690 "-o 0" "-o 50" "-o 50" &&
	yforged 17 8700 "-o 50 -l 1" "-o 0" "-o 50 -l 1"
}
yforged() {	# yforged KIND PORT NODE0_OPTIONS NODE1_OPTIONS NODE2_OPTIONS
	l=$(echo "$3 $5" | sed -n 's/.*-l \([0-9]\).*/-l \1/p')
	nodes "yforge$1" "$2" "$3 -x -Y $l" "$4 -x -Y $l -X $1" "$5 -x -Y $l"
	[ $? = 1 ] &&
	grep -q "node 1: sent node 0 a forgery ($1)" "$out/yforge$1.1.log" &&
	grep -q 'node 0: .*Protocol error' "$out/yforge$1.0.log"
}
tap "forged messages end the run (ALLOCATED, FREED, FREE, WRITE of a page not held, ALLOC without -K, UNLOCK not held, GRANTED not from the lock node, a second LOCK, SYNCED not asked for, EXPORT without -R, of another length or twice, SYNC with a value, a table that never reads whole, a WRITE whose body is not its value's, LOCKTAB not from the lock node or misaligned, LOCK with -Y)" \
	forgeries


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
# four threads share the pool: a write fixes its page exclusively, so
# every FIX still finds the version last written
tap "bm fix over a file, four threads sharing the frames: none lost" \
	fix file "$out/pages-j.bin" -K tmpfs -j 4
printf '%s\n' 'redy-model 1 1 1 1 1 4096 10' '0 1 1 1 1000 1000' > "$out/fix-model.txt"
"$b/redymgr" -m "$out/fix-model.txt" -p 7829 -r 64 > "$out/fix-redymgr.log" 2>&1 &
mgr=$!
"$b/redyd" -a $addr -p 7840 -m 8 -t 1 > "$out/fix-redyd.log" 2>&1 &
srv=$!
remote_fix() {
	waitfor "$out/fix-redyd.log" 'server threads, ports' || return 1
	"$b/redy" server -M 127.0.0.1:7829 A $addr 7840 8 1 1 &&
	fix remote "$out/pages-r.bin" -M 127.0.0.1:7829
}
tap "bm fix over a Redy cache (remote memory), none lost" remote_fix
# The frame pool's pages in a file with mrrcd's memory in front of it
# (write-through): over TCP with two threads, then over the module with
# one-sided GETs and four times the pages (2 MiB), then pages of 1 MiB,
# which the daemon refuses to store (all read from the file).  Every FIX
# and the final read of every page, through the daemon, checked.
"$b/mrrcd" -p 7970 -R $addr -m 4 -v > "$out/fix-mrrcd.log" 2>&1 &
kvd=$!
kv_fix() {	# kv_fix NAME TIER ADDR [OPTIONS]: and its summary
	name=$1 tier=$2 at=$3
	shift 3
	"$b/bm" fix -t "$tier" -f "$out/pages-$name.bin" -R "$at" -F 32 -w 20 -s 3 \
		-K tmpfs "$@" > "$out/$name.json" 2> "$out/$name.err"
	st=$?
	cat "$out/$name.json" "$out/$name.err"
	[ $st = 0 ] && grep -q '"metric":"tier_hit_ratio"' "$out/$name.json"
}
mrrcd_fix() {
	waitfor "$out/fix-mrrcd.log" 'port 7970' || return 1
	kv_fix kvt mrrcd 127.0.0.1:7970 -x 4 -o 5000 -j 2 &&
	grep -q 'mrrcd: [1-9][0-9]* pages read from it, [1-9][0-9]* from the file$' "$out/kvt.err" &&
	kv_fix kvr mrrcd_rdma $addr:7970 -x 16 -o 5000 &&
	grep -q 'mrrcd (one-sided GETs): [1-9][0-9]* pages read from it, [1-9][0-9]* from the file$' \
		"$out/kvr.err" &&
	kv_fix kvb mrrcd 127.0.0.1:7970 -F 4 -x 2 -S 1048576 -o 200 &&
	grep -q 'mrrcd: 0 pages read from it, [1-9][0-9]* from the file$' "$out/kvb.err" &&
	kv_fix kvd mrrcd 127.0.0.1:7970 -x 4 -o 5000 -D &&
	grep -q 'mrrcd: [1-9][0-9]* stale copies found' "$out/kvd.err" &&
	kill $kvd && wait $kvd && kvd=
}
# (-D: writes leave the daemon's copies stale; each copy's flags give it
# away, so the run must still pass, having found some)
tap "bm fix over a file with mrrcd in front (TCP, then RDMA with one-sided GETs, then pages it cannot hold, then stale copies), none lost" \
	mrrcd_fix
# mrrcd killed (SIGKILL) two seconds after bm connects, in a run of 400 000 FIXes (far
# longer than that: each miss goes to the daemon), over TCP and then over
# the module: the front gives up on it, the run goes on with the file
# alone (in the guest's memory, so the rest takes seconds), and every
# page still checks.
kv_dies() {	# kv_dies NAME TIER ADDR PORT
	"$b/mrrcd" -p "$4" -R $addr -m 8 -v > "$out/$1-mrrcd.log" 2>&1 &
	d=$!
	waitfor "$out/$1-mrrcd.log" "port $4" || { kill $d; return 1; }
	pf=$(mktemp /tmp/bm-pages.XXXXXX) || { kill $d; return 1; }
	"$b/bm" fix -t "$2" -f "$pf" -R "$3:$4" -F 32 -x 4 -w 20 \
		-s 3 -K tmpfs -o 400000 > "$out/$1.json" 2> "$out/$1.err" &
	f=$!
	# two seconds from its connection (mrrcd -v logs it)
	waitfor "$out/$1-mrrcd.log" 'new connection' || { kill $d $f; return 1; }
	sleep 2
	kill -KILL $d
	wait $d
	wait $f
	st=$?
	rm -f "$pf"
	cat "$out/$1.err"
	[ $st = 0 ] && grep -q '^bm fix: mrrcd: .*; the file alone from now on$' "$out/$1.err" &&
		grep -q ' [1-9][0-9]* pages read from it, [0-9]* from the file (it failed)$' "$out/$1.err"
}
mrrcd_dies() {
	kv_dies kvkt mrrcd 127.0.0.1 7971 && kv_dies kvkr mrrcd_rdma $addr 7972
}
tap "bm fix over a file with mrrcd in front, mrrcd killed mid-run (TCP, then RDMA): the file alone, none lost" \
	mrrcd_dies
# The frame pool's pages in a file on another node: bm fserve serves a
# file of 128 pages through the module, and the pool reads and writes
# its pages there (FReadF and FPrintF: a request and an answer each).
# (its file in the guest's memory: $out is the host's, through 9p, where
# a file cannot be mapped for one-sided reads)
rfile=$(mktemp /tmp/bm-rfile.XXXXXX)
"$b/bm" fserve -a $addr -p 7960 -f "$rfile" -s $((128 * 4096)) \
	> "$out/fserve.log" 2>&1 &
fsrv=$!
rfile_fix() {
	waitfor "$out/fserve.log" serving || return 1
	"$b/bm" fix -t rfile -R $addr:7960 -F 32 -x 4 -w 20 -o 2000 -s 3 -K tmpfs -j 3 \
		> "$out/rfix.json" || return 1
	cat "$out/rfix.json"
	grep -q '"tier":"rfile"' "$out/rfix.json" &&
	"$b/bm" fix -t rfile_rdma -R $addr:7960 -F 32 -x 4 -w 20 -o 2000 -s 4 -K tmpfs \
		> "$out/rfix1.json" &&
	cat "$out/rfix1.json" &&
	grep -q '"tier":"rfile_rdma"' "$out/rfix1.json" &&
	"$b/bm" fix -t rfile_rdma_rw -R $addr:7960 -F 32 -x 4 -w 20 -o 2000 -s 5 -K tmpfs -j 2 \
		> "$out/rfix2.json" &&
	cat "$out/rfix2.json" &&
	grep -q '"tier":"rfile_rdma_rw"' "$out/rfix2.json"
}
tap "bm fix over a file on another node (bm fserve: FReadF and FPrintF, three threads, a connection each; then RDMA READ; then READ and WRITE, two threads), none lost" \
	rfile_fix
# A hostile client (bm fprobe: short, forged and out-of-range requests,
# each answered with an error), a client killed in the middle of its
# run, and one whose pages do not fit: the server answers each and goes
# on serving the next.
rfile_hostile() {
	"$b/bm" fprobe -R $addr:7960 || return 1
	"$b/bm" fix -t rfile -R $addr:7960 -F 32 -x 4 -o 1000000 > /dev/null 2>&1 &
	victim=$!
	sleep 2
	kill -9 $victim
	wait $victim
	"$b/bm" fix -t rfile -R $addr:7960 -F 64 -x 4 -o 100 > /dev/null 2> "$out/rbig.err"
	st=$?
	cat "$out/rbig.err"
	[ $st = 1 ] && grep -q 'Invalid argument' "$out/rbig.err" &&
	"$b/bm" fix -t rfile -R $addr:7960 -F 32 -x 4 -w 20 -o 500 > /dev/null
}
tap "a file server answers hostile and dying clients, and goes on serving" rfile_hostile
fserve_stops() {
	kill $fsrv
	wait $fsrv
	st=$?
	cat "$out/fserve.log"
	rm -f "$rfile"
	[ $st = 0 ] &&
	# clients: 6 of bm fix (a connection per thread: 3 + 1 + 2);
	# fprobe's 1, 3 x 2 for its hostile WRITEs and 2 for the good one;
	# 3 more in rfile_hostile.  Mapped: 3 bm fix, 1 + 3 + 1 fprobe's
	# (writable: 2 bm fix, 2 + 1 fprobe's)
	grep -q '18 clients (0 turned away, 0 timed out, 8 mapped, 5 of them writable)' \
		"$out/fserve.log"
}
tap "the file server stops cleanly on SIGTERM, having served every client" fserve_stops
# Clients that hold every slot of a file server (-I 4: idle after 4 s):
# 16 mapped clients, one of them reading (and PINGing), the others
# silent; a 17th turned away; the silent ones dropped, the reader kept,
# a new client served (bm fprobe -I).
idle_slots() {
	ifile=$(mktemp /tmp/bm-idle.XXXXXX)
	"$b/bm" fserve -a $addr -p 7962 -f "$ifile" -s 65536 -I 4 \
		> "$out/fserve-idle.log" 2>&1 &
	isrv=$!
	waitfor "$out/fserve-idle.log" serving &&
	"$b/bm" fprobe -R $addr:7962 -I 4
	st=$?
	kill $isrv
	wait $isrv
	st2=$?
	rm -f "$ifile"
	cat "$out/fserve-idle.log"
	[ $st = 0 ] && [ $st2 = 0 ] &&
	grep -q '17 clients (1 turned away, 15 timed out, 17 mapped, 0 of them writable)' \
		"$out/fserve-idle.log"
}
tap "a file server drops the idle clients that hold its slots, mapped ones too, and keeps the busy one" \
	idle_slots
dropped() {
	"$b/bm" fix -t file -f "$out/pages-l.bin" -F 32 -x 4 -w 20 -o 5000 -L \
		> /dev/null 2> "$out/dropped.log"
	st=$?
	cat "$out/dropped.log"
	[ $st = 1 ] && grep -q 'expected version' "$out/dropped.log" &&
	# and with threads (the one that finds it stops the others)
	"$b/bm" fix -t file -f "$out/pages-l.bin" -F 32 -x 4 -w 20 -o 5000 -L -j 4 \
		> /dev/null 2> "$out/dropped.log"
	st=$?
	cat "$out/dropped.log"
	[ $st = 1 ] && grep -q 'expected version' "$out/dropped.log"
}
tap "a tier that drops writes is caught" dropped
refusals() {
	status 2 "$b/bm" fix -f "$out/x" &&
	status 2 "$b/bm" fix -t ssd -f "$out/x" &&
	status 2 "$b/bm" fix -t file -f "$out/x" -F 3 &&
	status 2 "$b/bm" fix -t file -f "$out/x" -w 101 &&
	status 2 "$b/bm" fix -t file -f "$out/x" -z 1 &&
	status 2 "$b/bm" fix -t file -f "$out/x" -j 0 &&
	status 2 "$b/bm" fix -t file -f "$out/x" -j 65 &&
	status 2 "$b/bm" fix -t file -f "$out/x" -o 3 -j 4 &&
	status 1 "$b/bm" fix -t remote -f "$out/x" -M 127.0.0.1:1 &&
	status 1 "$b/bm" fix -t file -f /nonexistent/x &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -X 16 &&
	status 2 "$b/bm" node -i 1 -n 3 -a $addr -X 14 &&
	status 2 "$b/bm" node -i 1 -n 3 -a $addr -X 15 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -B 0 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -B 12 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -B 4104 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -M 8 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -D "$out" &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -f 3 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -M 8 -D "$out" -R &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -f 8 -K 4 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -M 8 -D "$out" -K 4 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -M 8 -D "$out" -F $addr &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -M 8 -D "$out" -m &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -F $addr &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -m &&
	status 2 "$b/bm" node -i 1 -n 3 -a $addr -Y &&
	status 2 "$b/bm" node -i 1 -n 3 -a $addr -x -Y -Z 5 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -x -Y -o 10 &&
	status 2 "$b/bm" node -i 1 -n 3 -a $addr -x -X 16 &&
	status 2 "$b/bm" node -i 1 -n 3 -a $addr -x -Y -l 1 -o 0 -X 16 &&
	status 2 "$b/bm" node -i 1 -n 3 -a $addr -x -Y -X 17 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -l 0 -x -Y -o 0 -X 17 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -o 50 -X 9 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -M 8 -F $addr -R &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -M 8 -F $addr -K 4 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -z 1 &&
	status 2 "$b/bm" node -i 1 -n 3 -a $addr -X 11 &&
	status 2 "$b/bm" node -i 1 -n 3 -a $addr -X 13 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -l 3 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -K 4 -x &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -o 10 -C -Z 5 &&
	status 2 "$b/bm" fix -t rfile -f "$out/x" &&
	status 2 "$b/bm" fix -t rfile -R $addr -S 32768 &&
	status 1 "$b/bm" fix -t rfile -R 127.0.0.1:1 &&
	status 2 "$b/bm" fix -t mrrcd -f "$out/x" &&
	status 2 "$b/bm" fix -t mrrcd -R 127.0.0.1 &&
	status 2 "$b/bm" fix -t mrrcd -f "$out/x" -R 127.0.0.1 -M 127.0.0.1 &&
	status 1 "$b/bm" fix -t mrrcd -f "$out/x" -R 127.0.0.1:1 &&
	status 2 "$b/bm" fserve -a $addr -f "$out/x" &&
	status 2 "$b/bm" fserve -a $addr -f "$out/x" -s 4096 -I 0 &&
	status 2 "$b/bm" fprobe -R $addr -I 61 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -K 4097 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -o 10 -Z 10 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -K 4 -Z 1 &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -S &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -K 4 -R &&
	status 2 "$b/bm" node -i 0 -n 3 -a $addr -o 10 -T -Z 5
}
tap "bm fix and bm node refuse bad options" refusals
kill $srv $mgr $kvd 2> /dev/null
wait $srv $mgr $kvd
echo "1..$n"
exit $rc
