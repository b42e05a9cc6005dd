#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# mrrcd between two test VMs (make vm-pair CMD_A='... serve'
# CMD_B='... client OUT', or make kv-pair): VM a runs the daemon on its
# link address, VM b runs kv_rdma.c's checks against it over the link,
# then asks a to kill the daemon (SIGKILL, as a crash) and start it
# again: b's open connection must fail cleanly, not hang, and a new one
# must be served.  b steers a through keys it stores over RDMA
# ("pair:kill", "pair:done"), which a looks up on its loopback over TCP.
#
# usage: kv_pair.sh serve | kv_pair.sh client OUTDIR
set -u
b=$MRRC_REPO/build/tools
t=$MRRC_REPO/build/tests/kv_rdma
port=11611

start() {
	"$b/mrrcd" -p $port -R "$MRRC_LINK_IP" > /tmp/mrrcd.log 2>&1 &
	pid=$!
	i=0
	until "$b/mrrckv" -p $port cmd version > /dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 50 ] || { echo "mrrcd did not start"; return 1; }
		sleep 0.2
	done
}
has() { "$b/mrrckv" -p $port get "$1" > /dev/null 2>&1; }

if [ "$1" = serve ]; then
	st=0
	start || exit 1
	trap 'kill -KILL $pid 2> /dev/null' EXIT
	end=$(($(date +%s) + 600))
	until has pair:kill; do
		[ "$(date +%s)" -lt "$end" ] || { echo "no pair:kill from b"; exit 1; }
		has pair:done && { echo "b is done without pair:kill"; exit 1; }
		sleep 1
	done
	kill -KILL $pid
	wait $pid
	echo "mrrcd killed; starting it again"
	start || exit 1
	until has pair:done; do
		[ "$(date +%s)" -lt "$end" ] || { echo "no pair:done from b"; st=1; break; }
		sleep 1
	done
	kill $pid
	( sleep 20; kill -KILL $pid 2> /dev/null ) &
	w=$!
	wait $pid || { echo "mrrcd: no clean exit on SIGTERM"; st=1; }
	kill $w 2> /dev/null
	trap - EXIT
	cat /tmp/mrrcd.log
	rmmod mrrc || st=1
	exit $st
fi

out=${2:?usage: kv_pair.sh client OUTDIR}
mkdir -p "$out"
peer=$MRRC_LINK_PEER
kv() { "$b/mrrckv" -r -s "$peer" -p $port "$@"; }
n=0 rc=0
tap() {	# tap DESC COMMAND...
	desc=$1
	shift
	n=$((n + 1))
	if "$@" > "$out/kv-pair.$n.log" 2>&1; then
		echo "ok $n $desc"
	else
		echo "not ok $n $desc"
		rc=1
	fi
	sed 's/^/# /' "$out/kv-pair.$n.log"
}
wait_daemon() {	# up to 60 s for a's daemon to answer over RDMA
	i=0
	until kv cmd version > /dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 60 ] || return 1
		sleep 1
	done
}
# A connection open across the kill: its next one-sided GET must fail
# within the client's 10 s wait, not hang, and a new connection must work.
across_kill() {
	kv set survivor yes || return 1
	# one connection, a one-sided GET every 100 ms, in the background
	"$t" "$peer" $port oget-loop survivor 30 > "$out/loop.log" 2>&1 &
	lp=$!
	sleep 3
	kv set pair:kill 1 || return 1
	wait $lp
	st=$?
	cat "$out/loop.log"
	[ $st = 3 ] || { echo "the open connection did not fail cleanly ($st)"; return 1; }
	wait_daemon || { echo "the daemon did not come back"; return 1; }
	! kv get survivor && kv set after-restart ok && [ "$(kv oget after-restart)" = ok ]
}
{
	echo "TAP version 13"
	echo "1..5"
	tap "kv-pair.daemon_reachable" wait_daemon
	tap "kv-pair.basic" "$t" "$peer" $port basic
	tap "kv-pair.hostile_clients" "$t" "$peer" $port hostile
	tap "kv-pair.one_sided_race" "$t" "$peer" $port race
	tap "kv-pair.daemon_killed_and_restarted" across_kill
	kv set pair:done 1 > /dev/null 2>&1 || rc=1
} > "$out/kv-pair.tap" 2>&1
cat "$out/kv-pair.tap"
rmmod mrrc || rc=1
exit $rc
