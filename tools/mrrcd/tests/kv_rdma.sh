#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# mrrcd over RDMA in the test VM (selftests/run.sh): a daemon on the rxe
# device's address, the checks of kv_rdma.c and mrrckv(1) against it.
# TAP on stdout; exits non-zero if anything failed.
set -u
out=${1:?usage: kv_rdma.sh OUTDIR}
b=$MRRC_REPO/build/tools
t=$MRRC_REPO/build/tests/kv_rdma
addr=10.211.0.1
port=11411
mkdir -p "$out"
n=0 rc=0
tap() {	# tap DESC COMMAND...
	desc=$1
	shift
	n=$((n + 1))
	if "$@" > "$out/mrrcd.$n.log" 2>&1; then
		echo "ok $n $desc"
	else
		echo "not ok $n $desc"
		rc=1
	fi
	sed 's/^/# /' "$out/mrrcd.$n.log"
}
daemon() {	# daemon [OPTIONS]: start mrrcd, wait until it answers
	"$b/mrrcd" -p $port -R $addr "$@" > "$out/mrrcd-daemon.log" 2>&1 &
	pid=$!
	i=0
	until "$b/mrrckv" -s 127.0.0.1 -p $port cmd version > /dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 50 ] || return 1
		sleep 0.2
	done
}
stop() {	# the daemon must exit 0 on SIGTERM, within 20 s (else SIGKILL)
	kill "$pid" || return 1
	( sleep 20; kill -KILL "$pid" 2> /dev/null ) &
	w=$!
	wait "$pid"
	st=$?
	kill "$w" 2> /dev/null
	return $st
}
kv() { "$b/mrrckv" -r -s $addr -p $port "$@"; }

echo "TAP version 13"
echo "1..17"
# Two worker threads take the TCP clients below while the main thread
# serves RDMA (the store under one lock).
tap "mrrcd.rdma_daemon_starts" daemon -t 2
tap "mrrcd.rdma_basic" "$t" $addr $port basic
tap "mrrcd.rdma_hostile_clients" "$t" $addr $port hostile
tap "mrrcd.rdma_hostile_daemon_banners_refused" "$t" $addr $port hostile-daemon
tap "mrrcd.rdma_one_sided_race" "$t" $addr $port race
# Two clients' one-sided GETs among SETs: every value checked, none
# missing, and GETs of keys found before done in one round trip there.
tap "mrrcd.one_sided_load_reads_where_keys_were" sh -c "
	$b/mrrckv -s 127.0.0.1 -p $port fill 64 200 &&
	$b/mrrckv -r -s $addr -p $port load oget 64 2 90 1 200 > $out/load.out &&
	cat $out/load.out &&
	grep -q '\"op\":\"get\".*\"misses\":0,.*\"oget_one_read\":[1-9]' $out/load.out"
tap "mrrcd.mrrckv_round_trip" sh -c "
	head -c 300000 /dev/urandom > $out/v.bin &&
	$b/mrrckv -r -s $addr -p $port set f - 7 < $out/v.bin &&
	$b/mrrckv -r -s $addr -p $port get f | cmp - $out/v.bin &&
	$b/mrrckv -r -s $addr -p $port oget f | cmp - $out/v.bin &&
	$b/mrrckv -r -F -s $addr -p $port set g - < $out/v.bin &&
	$b/mrrckv -s 127.0.0.1 -p $port get g | cmp - $out/v.bin &&
	$b/mrrckv -s 127.0.0.1 -p $port cmd 'rset x 0 0 1 1' | grep -q '^ERROR' &&
	$b/mrrckv -s 127.0.0.1 -p $port get f | cmp - $out/v.bin &&
	! $b/mrrckv -r -s $addr -p $port oget nothing-here"
# The library as a program links it (examples/mrrc_kv.c, libmrrckv).
tap "mrrcd.example_mrrc_kv_over_rdma" $MRRC_REPO/build/examples/mrrc_kv -r $addr $port
tap "mrrcd.mrrckv_valgrind_clean" sh -c "valgrind -q --error-exitcode=99 \
	--leak-check=full --errors-for-leak-kinds=all \
	$b/mrrckv -r -m faa -s $addr -p $port oget f > /dev/null"
# A name whose first address has no one behind it: the next is tried
# (/etc/hosts replaced in a mount namespace of the test's own, and
# /etc/gai.conf, whose precedence puts that address first: by default
# getaddrinfo would sort the local one first; getent shows the order).
tap "mrrcd.rdma_connect_tries_each_address" sh -c "
	printf '10.211.0.99 mrrc-multi\n$addr mrrc-multi\n' > $out/hosts &&
	printf '%s\n' 'precedence ::ffff:10.211.0.99/128 100' \
		'precedence ::1/128 50' 'precedence ::/0 40' \
		'precedence ::ffff:0:0/96 35' > $out/gai.conf &&
	unshare -m sh -c 'mount --bind $out/hosts /etc/hosts &&
		mount --bind $out/gai.conf /etc/gai.conf &&
		getent ahostsv4 mrrc-multi &&
		$b/mrrckv -r -s mrrc-multi -p $port cmd version' > $out/multi.out &&
	cat $out/multi.out &&
	head -n 1 $out/multi.out | grep -q '^10\.211\.0\.99 ' &&
	grep -q '^VERSION ' $out/multi.out"
tap "mrrcd.stats_count_rdma" sh -c "
	$b/mrrckv -r -s $addr -p $port cmd stats | tr -d '\\r' > $out/stats.txt &&
	grep -q '^STAT rdma_curr_connections [1-9]' $out/stats.txt &&
	grep -q '^STAT rdma_export_failures 0\$' $out/stats.txt &&
	! grep -q '^STAT rdma_total_connections [0-5]\$' $out/stats.txt"
tap "mrrcd.rdma_daemon_sigterm_exit_0" stop
# Recency: a small arena, hot keys read only one-sidedly.
for m in faa sample none; do
	daemon -m 2 && "$t" $addr $port recency-$m > "$out/recency-$m.log" 2>&1
	st=$?
	stop || st=1
	tap "mrrcd.recency_$m" sh -c "cat $out/recency-$m.log; exit $st"
done
# An arena over the cache's default capacity (1 GiB), its heap exported
# in two parts: a value set over RDMA reads back one-sidedly.
big_arena() {
	daemon -m 1300 || { stop; return 1; }
	head -c 5000 /dev/urandom > "$out/big.bin"
	kv set big - < "$out/big.bin" && kv oget big | cmp - "$out/big.bin" &&
		kv cmd stats | tr -d '\r' > "$out/big-stats.txt"
	st=$?
	stop || st=1
	cat "$out/big-stats.txt"
	[ $st = 0 ] && grep -qx 'STAT rdma_export_failures 0' "$out/big-stats.txt" &&
		grep -qx 'STAT rdma_exports 12' "$out/big-stats.txt"
}
tap "mrrcd.rdma_arena_over_1_gib_exported_in_parts" big_arena
tap "mrrcd.refused_without_device" sh -c "
	! timeout 10 $b/mrrcd -p $port -R $addr --rdma-dev nosuchdev 2> $out/nodev.err &&
	grep -q 'nosuchdev' $out/nodev.err &&
	! timeout 10 $b/mrrcd --rdma-port 5 2> /dev/null"
exit $rc
