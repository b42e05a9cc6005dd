#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# BENCH=kv: mrrcd (tools/mrrcd/) against Debian's memcached, in two test
# VMs on the rxe link (tools/vm/pair.sh, started by tools/bench/run.sh):
# VM a serves both daemons on its link address, VM b runs the clients
# (`mrrckv load`: CLIENTS processes, one connection each, closed loop, a
# GET/SET mix on 1000 Zipf(0.99) keys, see tools/mrrcd/load.h).
#
#   system     path       metadata  GETs by                SETs by
#   memcached  tcp        none      text protocol, TCP     TCP
#   mrrcd      tcp        none      text protocol, TCP     TCP
#   mrrcd      two_sided  none      text protocol in SENDs SENDs
#   mrrcd      one_sided  none      RDMA READs             SENDs
#   mrrcd      one_sided  faa       READs + FETCH_AND_ADD  SENDs
#   mrrcd      one_sided  sample    READs, FAA 1 in 8      SENDs
#
# for each value size (64 B, 1 KiB, 16 KiB), client count (1, 8) and
# GET share (90 %, 50 %).  Each such group runs ROUNDS rounds; a round
# runs every configuration once for SECONDS seconds, starting one further
# along the list each round, so that a burst of load on the host spoils
# one round of several configurations rather than one configuration.
#
# JSON lines (written by the client to the file named): per configuration
# and operation (op get or set), metrics throughput_ops (ops/s: that
# operation's count over the run time; the medians over the rounds),
# latency_p50_ns and latency_p99_ns (ns, the medians over the rounds of
# each round's percentile), and for mrrcd throughput_vs_memcached (x: its
# throughput over memcached's TCP one for the same op and group); keys
# system, path, metadata, op, value_bytes, clients, get_ratio, keys,
# zipf, seconds, rounds, and the run's (kernel and server_kernel, accel,
# device, commit, date).
#
# usage: bench_kv.sh serve                  (VM a)
#        bench_kv.sh client OUT             (VM b; OUT: the JSON lines)
# environment (client): KV_SIZES (default '64 1024 16384'), KV_CLIENTS
# ('1 8'), KV_GETPCT ('90 50'), KV_SECONDS (3), KV_ROUNDS (3);
# MEMCACHED (server: default /usr/bin/memcached, tools/deps.sh).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
kv=$top/build/tools/mrrckv
mrrcd=$top/build/tools/mrrcd
mport=11611	# mrrcd, TCP and RDMA CM
cport=11612	# memcached, TCP
usage="usage: bench_kv serve | bench_kv client OUT"

fail() {
	echo "bench_kv: $*" >&2
	exit 1
}

serve() {
	memcached=${MEMCACHED:-/usr/bin/memcached}
	ip=${MRRC_LINK_IP:?bench_kv serve: not in a VM pair}
	for f in "$mrrcd" "$kv" "$memcached"; do
		[ -x "$f" ] || fail "$f: not found (make tools; make deps)"
	done
	"$mrrcd" -p $mport -m 64 -R "$ip" > /tmp/mrrcd.log 2>&1 &
	mpid=$!
	# One worker thread, as mrrcd has one event loop, on one vCPU.
	"$memcached" -u root -p $cport -l "$ip" -m 64 -t 1 \
		> /tmp/memcached.log 2>&1 &
	cpid=$!
	st=0
	# Until the client says it is done (a key it stores in mrrcd),
	# at most 3 hours; each look is one TCP GET on the loopback.
	end=$(($(date +%s) + 10800))
	until "$kv" -p $mport get bench:done > /dev/null 2>&1; do
		kill -0 $mpid 2> /dev/null || { echo "bench_kv: mrrcd exited"; st=1; break; }
		kill -0 $cpid 2> /dev/null || { echo "bench_kv: memcached exited"; st=1; break; }
		[ "$(date +%s)" -lt "$end" ] || { echo "bench_kv: no end after 3 h"; st=1; break; }
		sleep 2
	done
	kill $mpid $cpid 2> /dev/null || true
	(sleep 20; kill -KILL $mpid $cpid 2> /dev/null) &
	w=$!
	wait $mpid || { echo "bench_kv: mrrcd: no clean exit on SIGTERM"; st=1; }
	wait $cpid || { echo "bench_kv: memcached: no clean exit on SIGTERM"; st=1; }
	kill $w 2> /dev/null || true
	[ $st -eq 0 ] || tail -n 20 /tmp/mrrcd.log /tmp/memcached.log
	rmmod mrrc || st=1
	exit $st
}

# JSON string: backslash and quote escaped, control characters dropped.
jstr() {
	printf '"%s"' "$(printf '%s' "$1" | sed 's/[\\"]/\\&/g' | tr -d '\000-\037')"
}

# field LINE KEY: a number from a mrrckv load line.
field() {
	printf '%s\n' "$1" | sed -n 's/.*"'"$2"'":\([0-9][0-9.]*\)[,}].*/\1/p'
}

client() {
	out=$1
	peer=${MRRC_LINK_PEER:?bench_kv client: not in a VM pair}
	sizes=${KV_SIZES:-64 1024 16384}
	nclients=${KV_CLIENTS:-1 8}
	pcts=${KV_GETPCT:-90 50}
	secs=${KV_SECONDS:-3}
	rounds=${KV_ROUNDS:-3}
	for v in $sizes $nclients $pcts $secs $rounds; do
		case $v in
		'' | *[!0-9]*) fail "KV_* settings are numbers: '$v'" ;;
		esac
	done
	[ -x "$kv" ] || fail "$kv: not found (make tools)"
	tmp=$(mktemp -d /tmp/bench-kv.XXXXXX)
	# However this ends, VM a stops waiting (the key it polls for).
	trap '"$kv" -s "$peer" -p $mport set bench:done 1 > /dev/null 2>&1;
		rm -rf "$tmp"' EXIT
	: > "$out"

	# Both daemons answer, over TCP and (mrrcd) over RDMA: up to 2 min.
	i=0
	until "$kv" -s "$peer" -p $cport cmd version > /dev/null 2>&1 &&
	      "$kv" -s "$peer" -p $mport cmd version > /dev/null 2>&1 &&
	      "$kv" -r -s "$peer" -p $mport cmd version > /dev/null 2>&1; do
		i=$((i + 1))
		[ $i -lt 60 ] || fail "the daemons in VM a do not answer"
		sleep 2
	done
	mver=$("$kv" -s "$peer" -p $mport cmd version | sed 's/^VERSION //')
	cver=$("$kv" -s "$peer" -p $cport cmd version | sed 's/^VERSION //')
	echo "bench_kv: mrrcd $mver, memcached $cver, at $peer" >&2
	accel=${MRRC_ACCEL:-$(tr ' ' '\n' 2>/dev/null < /proc/cmdline |
		sed -n 's/^MRRC_ACCEL=//p' | tail -n 1)}
	run=$(printf ',"kernel":%s,"server_kernel":%s,"accel":%s,"device":"rxe0","commit":%s,"date":%s' \
		"$(jstr "${MRRC_KVER:-$(uname -r)}")" \
		"$(jstr "${MRRC_KVER_SERVER:-unknown}")" \
		"$(jstr "${accel:-unknown}")" \
		"$(jstr "${MRRC_COMMIT:-unknown}")" \
		"$(jstr "${MRRC_DATE:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}")")

	configs="memcached,tcp,none mrrcd,tcp,none mrrcd,two_sided,none
mrrcd,one_sided,none mrrcd,one_sided,faa mrrcd,one_sided,sample"
	ncfg=$(echo "$configs" | wc -w)
	for size in $sizes; do
		"$kv" -s "$peer" -p $cport fill "$size" ||
			fail "filling memcached with $size-byte values"
		"$kv" -s "$peer" -p $mport fill "$size" ||
			fail "filling mrrcd with $size-byte values"
		for nc in $nclients; do
			for pct in $pcts; do
				group "$size" "$nc" "$pct"
			done
		done
	done
}

# One configuration, one round: the two lines of mrrckv load.
measure() {	# measure SYSTEM PATH META SIZE CLIENTS PCT
	case $1 in
	memcached) opts="-s $peer -p $cport" ;;
	*) opts="-s $peer -p $mport" ;;
	esac
	op='get'
	case $2 in
	two_sided) opts="$opts -r" ;;
	one_sided) opts="$opts -r"; op=oget ;;
	esac
	case $3 in
	sample) opts="$opts -m sample:8" ;;
	*) opts="$opts -m $3" ;;
	esac
	# shellcheck disable=SC2086 # the options are words
	"$kv" $opts load $op "$4" "$5" "$6" "$secs" 2> "$tmp/err" ||
		fail "$1 $2 $3 ${4} B, $5 clients, $6 % GET: $(cat "$tmp/err")"
}

median() {	# median < numbers
	sort -n | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2];
		else printf "%.0f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

group() {	# group SIZE CLIENTS PCT: every configuration, ROUNDS rounds
	: > "$tmp/rounds"
	r=0
	while [ $r -lt "$rounds" ]; do
		j=0
		while [ $j -lt "$ncfg" ]; do
			c=$(echo "$configs" | tr ' ' '\n' | sed -n "$(((r + j) % ncfg + 1))p")
			# Not in a pipeline: a failure ends the run.
			# shellcheck disable=SC2046 # the configuration's three words
			measure $(echo "$c" | tr ',' ' ') "$1" "$2" "$3" > "$tmp/one"
			sed "s/^/$c /" "$tmp/one" >> "$tmp/rounds"
			j=$((j + 1))
		done
		r=$((r + 1))
	done
	# memcached comes first in $configs: mc_get and mc_set (read through
	# eval) are its throughputs when mrrcd's are compared with them.
	# shellcheck disable=SC2034
	gsize=$1 gnc=$2 mc_get='' mc_set=''
	ratio=$(awk "BEGIN { printf \"%.2f\", $3 / 100 }")
	for c in $configs; do
		# shellcheck disable=SC2046 # the configuration's three words
		set -- $(echo "$c" | tr ',' ' ') "$gsize" "$gnc" "$ratio"
		for o in get set; do
			grep "^$c .*\"op\":\"$o\"" "$tmp/rounds" > "$tmp/lines" || continue
			for m in throughput_ops latency_p50_ns latency_p99_ns; do
				v=$(while read -r _ line; do field "$line" $m; done < "$tmp/lines" | median)
				case $m in
				throughput_ops) u=ops/s tput=$v ;;
				*) u=ns ;;
				esac
				emit "$m" "$v" "$u" "$@" "$o"
			done
			if [ "$1" = memcached ]; then
				eval "mc_$o=\$tput"
			else
				eval "mc=\$mc_$o"
				[ -n "$tput" ] && [ -n "$mc" ] &&
					emit throughput_vs_memcached \
					"$(awk "BEGIN { printf \"%.2f\", $tput / $mc }")" \
					x "$@" "$o"
			fi
		done
	done
}

emit() {	# emit METRIC VALUE UNIT SYSTEM PATH META SIZE CLIENTS RATIO OP
	printf '{"bench":"kv","metric":"%s","value":%s,"unit":"%s","system":"%s","path":"%s","metadata":"%s","op":"%s","value_bytes":%s,"clients":%s,"get_ratio":%s,"keys":1000,"zipf":0.99,"seconds":%s,"rounds":%s%s}\n' \
		"$1" "$2" "$3" "$4" "$5" "$6" "${10}" "$7" "$8" "$9" \
		"$secs" "$rounds" "$run" | tee -a "$out"
}

case ${1:-} in
serve) [ $# -eq 1 ] || fail "$usage"; serve ;;
client) [ $# -eq 2 ] || fail "$usage"; client "$2" ;;
*) fail "$usage" ;;
esac
