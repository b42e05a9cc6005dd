#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Redy in the test VM (selftests/run.sh): a memory server (redyd) with two
# server threads on the rxe device's address, and the client tool against
# it: both data paths byte for byte, bad batches, each kind of
# configuration measured, a small offline modelling, the search on the
# model it wrote, and a few SLOs deployed.  TAP on stdout; exits non-zero
# if anything failed.  Timings are printed, never asserted.
set -u
out=${1:?usage: redy.sh OUTDIR}
b=$MRRC_REPO/build/tools
addr=10.211.0.1
port=7730
mkdir -p "$out"
n=0 rc=0
tap() {	# tap DESC COMMAND...
	desc=$1
	shift
	n=$((n + 1))
	if "$@" > "$out/redy.$n.log" 2>&1; then
		echo "ok $n $desc"
	else
		echo "not ok $n $desc"
		rc=1
	fi
	sed 's/^/# /' "$out/redy.$n.log"
}
started() {	# the server prints its banner once every thread listens (60 s:
	# under valgrind in an emulated VM, starting alone can take over 10 s)
	i=0
	until grep -q 'server threads, ports' "$out/redyd.log" 2> /dev/null; do
		i=$((i + 1))
		[ $i -lt 600 ] || return 1
		kill -0 "$pid" 2> /dev/null || return 1
		sleep 0.1
	done
}
stop() {	# redyd must exit 0 on SIGTERM within 60 s (valgrind's leak check)
	kill "$pid" || return 1
	( sleep 60; kill -KILL "$pid" 2> /dev/null ) &
	w=$!
	wait "$pid"
	st=$?
	kill "$w" 2> /dev/null
	cat "$out/redyd.log"
	[ "$st" -eq 0 ] && grep -q 'exiting:' "$out/redyd.log"
}
refusals() {
	! "$b/redyd" -t 2 2> /dev/null &&		# no -a
	! "$b/redyd" -a $addr -t 0 2> /dev/null &&
	! "$b/redyd" -a $addr -t 17 2> /dev/null &&
	! "$b/redyd" -a $addr -m 2048 2> /dev/null &&
	! "$b/redyd" -a 10.211.0.1.5 2> /dev/null &&
	! "$b/redy" run -a $addr -s 0 -b 4 2> /dev/null &&	# one-sided: b = 1
	! "$b/redy" run -a $addr -s 2 -c 1 2> /dev/null &&	# c < s
	! "$b/redy" model -a $addr -S 3,2,1,1 2> /dev/null &&
	! "$b/redy" search -m /nonexistent -l 1 -t 1 2> /dev/null &&
	! "$b/redy" bogus -a $addr 2> /dev/null
}
tap "redyd and redy refuse bad options" refusals

"$b/redyd" -a $addr -p $port -m 16 -t 2 -v > "$out/redyd.log" 2>&1 &
pid=$!
tap "redyd starts: 16 MiB, two server threads" started
tap "both data paths, the memory's edges, bad batches (redy verify)" \
	"$b/redy" verify -a $addr -p $port
# A lying server: every lie in a hello or a response is refused with
# EPROTO, nothing written beyond the buffer (valgrind where it runs).
evil() {
	"$b/redy" evil-server -a $addr -p 7790 > "$out/evil.log" 2>&1 &
	e=$!
	i=0
	until grep -q listening "$out/evil.log"; do
		i=$((i + 1))
		[ $i -lt 600 ] && kill -0 $e 2> /dev/null || {
			kill $e 2> /dev/null
			wait $e
			echo "the lying server did not listen (exit $?):"
			cat "$out/evil.log"
			return 1
		}
		sleep 0.1
	done
	if [ "${REDY_VALGRIND:-1}" = 1 ]; then
		valgrind -q --error-exitcode=99 "$b/redy" evil-test -a $addr -p 7790
	else
		"$b/redy" evil-test -a $addr -p 7790
	fi
	st=$?
	wait $e
	se=$?
	[ $st -eq 0 ] && [ $se -eq 0 ] && return
	echo "client exit $st, server exit $se:"
	cat "$out/evil.log"
	return 1
}
tap "a lying memory server: the client refuses every lie (redy evil-test)" evil
tap "one-sided configuration (s=0 c=2 q=4)" \
	"$b/redy" run -a $addr -p $port -s 0 -c 2 -q 4 -T 0.5 -j
tap "two-sided configuration (s=1 c=1 b=8 q=2)" \
	"$b/redy" run -a $addr -p $port -s 1 -c 1 -b 8 -q 2 -T 0.5 -j
tap "two server threads (s=2 c=2 b=4 q=4, 4 KiB records)" \
	"$b/redy" run -a $addr -p $port -s 2 -c 2 -b 2 -q 4 -r 4096 -T 0.5 -j
tap "offline modelling of a small space (two runs each: the noise planned for)" \
	"$b/redy" model -a $addr -p $port -S 1,2,2,2 -T 0.2 -k 2 -o "$out/model.txt"
model_ok() {
	cat "$out/model.txt" &&
	head -1 "$out/model.txt" |
		grep -Eq '^redy-model 2 1 2 2 2 64 50 2 [0-9]+\.[0-9]{4} [0-9]+\.[0-9]{4}$' &&
	[ "$(wc -l < "$out/model.txt")" -ge 6 ] &&
	# any SLO the model's first line (a mean) meets is found, planning
	# on the means; planning for the noise (the header's z and latency
	# deviation), the same SLO made as loose as the plan makes the mean
	set -- $(sed -n 2p "$out/model.txt") &&
	"$b/redy" search -m "$out/model.txt" -l "$5" -t 0 -Z 0 &&
	"$b/redy" search -m "$out/model.txt" -l "$5" -t 0 -Z 0 -A exhaustive &&
	loose=$(head -1 "$out/model.txt" |
		awk -v l="$5" '{ printf "%.1f", l * (1 + $9 * $10) * 1.001 + 1 }') &&
	"$b/redy" search -m "$out/model.txt" -l "$loose" -t 0 &&
	# and an impossible one is not (exit 3)
	{ "$b/redy" search -m "$out/model.txt" -l 1 -t 1e12; [ $? -eq 3 ]; }
}
tap "the model file, and searching it" model_ok
tap "SLOs deployed from the model (timings printed, not asserted)" \
	"$b/redy" slo -a $addr -p $port -m "$out/model.txt" -n 3 -T 0.2

# A cache manager and three memory servers (the redyd above, B another,
# C an mrrcd serving memcached's protocol and Redy's beside it):
# a cache created from a file, on B (cheapest, full after half of it)
# and A; written in batches, read, reshaped; reshaped to an SLO only two
# server threads meet (B's regions move to A, the only server with two)
# and back; A reclaimed while the cache reads and writes, its regions
# moving to B and C; then B killed: its regions fail, the rest serve,
# new regions replace them.  Every read is checked against what was
# written.  The manager's model is made up, so that which configuration
# an SLO gets does not depend on this machine's timings: one-sided
# (2000 req/s), one server thread (4000), two (9000).
printf '%s\n' 'redy-model 1 2 2 2 2 64 50' '0 1 1 1 40000 2000' \
	'1 1 1 1 60000 4000' '2 2 1 1 80000 9000' > "$out/shape.txt"
head -c 3000000 /dev/urandom > "$out/populate.bin"
"$b/redymgr" -m "$out/shape.txt" -p 7729 -r 256 > "$out/redymgr.log" 2>&1 &
mgr=$!
"$b/redyd" -a $addr -p 7740 -m 2 -t 1 > "$out/redyd-b.log" 2>&1 &
pid_b=$!
"$b/mrrcd" -p 11411 -R $addr --redy 7750 --redy-memory 16 --redy-threads 1 -v \
	> "$out/mrrcd-c.log" 2>&1 &
pid_c=$!
servers() {
	for f in "$out/redyd-b.log" "$out/mrrcd-c.log"; do
		i=0
		until grep -q 'server threads, ports' "$f"; do
			i=$((i + 1))
			[ $i -lt 600 ] || return 1
			sleep 0.1
		done
	done
	"$b/redy" server A $addr $port 16 2 2 &&
	"$b/redy" server B $addr 7740 2 1 1 &&
	"$b/redy" server C $addr 7750 16 1 3 &&
	"$b/redy" list | grep -c '^SERVER' | grep -qx 3 &&
	! "$b/redy" server A $addr $port 16 2 1 &&		# EEXIST
	! "$b/redy" create 1000000000000 1000000 1 60 &&	# ENOSPC
	! "$b/redy" create 1048576 1 1000000000 60 &&		# no configuration
	! "$b/redy" ctl BOGUS &&
	! "$b/redy" inspect 99 &&
	# the CLI's reshape with a new SLO: two server threads, and the
	# regions kept on B (one thread) announced to the owner as moves
	id=$("$b/redy" create 1048576 1000000000 1 60 | awk 'NR == 1 { print $2 }') &&
	"$b/redy" reshape $id 524288 1000000000 8000 > "$out/reshaped.txt" &&
	head -1 "$out/reshaped.txt" | grep -q "^OK $id 2 2 1 1 2 262144 524288 " &&
	[ "$("$b/redy" ctl NOTICES $id | grep -c '^NOTICE [01] move')" -eq 2 ] &&
	! "$b/redy" reshape $id 524288 1 1000000000000 &&	# no configuration
	! "$b/redy" reshape $id 524288 1000000000 &&		# operands
	"$b/redy" delete $id
}
tap "the cache manager knows three memory servers, refuses what it cannot do" servers
tap "a program with libredy (examples/redy_cache): create, write, read back, delete" \
	"$MRRC_REPO/build/examples/redy_cache" 1048576
tap "a cache: create from a file, batched I/O, reshape (to a new SLO too), migration, a killed server" \
	"$b/redy" cache-test -C 4194304 -F "$out/populate.bin" -G 8000 -X A -K $pid_b
kill $mgr
wait $mgr
# C stored and served keys over TCP and RDMA all along, and Redy's
# requests (the migration's copies were PULLs it ran)
mrrcd_both() {
	"$b/mrrckv" -p 11411 set redy:key both &&
	"$b/mrrckv" -r -s $addr -p 11411 get redy:key | grep -qx both &&
	kill $pid_c && wait $pid_c &&
	cat "$out/mrrcd-c.log" &&
	grep -q 'Redy memory server: [0-9]* batches, [1-9][0-9]* requests' "$out/mrrcd-c.log"
}
tap "mrrcd --redy: a memory server and a key-value store at once, exits 0" mrrcd_both
tap "redyd exits 0 on SIGTERM" stop

# Both programs under valgrind: the server's parsing of the bad batches,
# the client's of the hello and the responses.  REDY_VALGRIND=0 leaves it
# out (make check runs it on one kernel's VM only: it is user space).
if [ "${REDY_VALGRIND:-1}" = 1 ]; then
	vg="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=all"
	$vg "$b/redyd" -a $addr -p $((port + 40)) -m 4 -t 2 > "$out/redyd.log" 2>&1 &
	pid=$!
	tap "redyd under valgrind starts" started
	tap "redy verify under valgrind, against redyd under valgrind" \
		$vg "$b/redy" verify -a $addr -p $((port + 40))
	tap "redyd under valgrind: no error, nothing leaked, exit 0" stop
fi
echo "1..$n"
exit $rc
