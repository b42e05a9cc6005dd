#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# BENCH=kv: mrrcd (tools/mrrcd/) against memcached, both started here in
# the one test VM, measured with mrrckv's bench command (one client, one
# request at a time on 64 keys, the latency of each).  For values of 64 B,
# 4 KiB and 64 KiB, these configurations:
#
#   server     transport  op        meta
#   memcached  tcp        get, set  none
#   mrrcd      tcp        get, set  none
#   mrrcd      rdma       get, set  none   (two-sided: requests by SEND)
#   mrrcd      rdma       oget      none, faa, sample:8  (one-sided READs)
#   mrrcd      rdma       rset      none   (the value written by FRRWP)
#
# Interleaved, so that what is compared is measured in the same
# conditions: each size's operations are split into ROUNDS rounds, and
# every round runs each configuration once (one mrrckv process, COUNT /
# ROUNDS operations), starting one configuration further along the list
# each round.  A burst of load on the host (the VM is emulated, on a
# shared machine) then spoils one round of several configurations, not
# one configuration's whole figure.
#
# JSON lines on stdout, each size's as soon as its rounds are done, with
# the keys of the run as bench_ops.sh writes them.  Per configuration:
# lat_p50_us and lat_p99_us (us), the median over the rounds of each
# round's percentile, and ops_per_sec (ops/s), all operations over the
# time they took; keys server, transport, op, meta, value_bytes, count
# (operations in all rounds) and rounds.  Then, for each get of mrrcd,
# ratio_vs_memcached_tcp (x): memcached's TCP get lat_p50_us over that
# configuration's (above 1: faster than memcached), and for each set and
# rset of mrrcd the same against memcached's TCP set.  Both daemons are
# stopped with SIGTERM at the end and must exit 0; any failure ends the
# script with a non-zero status and the daemons' logs.
#
# usage: bench_kv.sh [-d DEV] [-c 'SIZE:COUNT ...'] [-r ROUNDS]: mrrcd on
# RDMA device DEV (default $MRRC_DEV, else rxe0), whose network device has
# the address 10.211.0.1; the value sizes and operations per
# configuration (default '64:2000 4096:2000 65536:1000', 5 rounds).
# memcached: $MEMCACHED, default Debian's /usr/bin/memcached (tools/deps.sh).
set -eu
dir=$(dirname "$0")
top=$(cd "$dir/../.." && pwd)
usage="usage: bench_kv [-d DEV] [-c 'SIZE:COUNT ...'] [-r ROUNDS]"
sizes="64:2000 4096:2000 65536:1000"
rounds=5
while getopts d:c:r:h o; do
	case $o in
	d) MRRC_DEV=$OPTARG ;;
	c) sizes=$OPTARG ;;
	r) rounds=$OPTARG ;;
	h) echo "$usage"; exit 0 ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { echo "$usage" >&2; exit 2; }
for sc in $sizes; do
	case $sc in
	*[!0-9:]* | :* | *: | *:*:*) echo "$usage" >&2; exit 2 ;;
	esac
	[ "${sc#*:}" -ge "${rounds:-0}" ] 2> /dev/null || { echo "$usage" >&2; exit 2; }
done
case $rounds in
'' | *[!0-9]* | 0) echo "$usage" >&2; exit 2 ;;
esac
dev=${MRRC_DEV-rxe0}
MRRC_DATE=${MRRC_DATE:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}
export MRRC_DATE

# A JSON string: backslash and quote escaped, control characters dropped.
jstr() {
	printf '"%s"' "$(printf '%s' "$1" | sed 's/[\\"]/\\&/g' | tr -d '\000-\037')"
}
accel=${MRRC_ACCEL:-$(tr ' ' '\n' 2>/dev/null < /proc/cmdline |
	sed -n 's/^MRRC_ACCEL=//p' | tail -n 1)}
run_keys=$(printf ',"kernel":%s,"accel":%s,"device":%s,"commit":%s,"date":%s' \
	"$(jstr "${MRRC_KVER:-$(uname -r)}")" "$(jstr "${accel:-unknown}")" \
	"$(jstr "$dev")" "$(jstr "${MRRC_COMMIT:-unknown}")" \
	"$(jstr "$MRRC_DATE")")

mrrcd=$top/build/tools/mrrcd
kv=$top/build/tools/mrrckv
memcached=${MEMCACHED:-/usr/bin/memcached}
addr=10.211.0.1
mport=11611	# mrrcd, TCP and RDMA CM
cport=11612	# memcached, TCP
for f in "$mrrcd" "$kv" "$memcached"; do
	[ -x "$f" ] || { echo "bench_kv: $f: not found (make tools; make deps)" >&2; exit 1; }
done

logs=$(mktemp -d /tmp/bench-kv.XXXXXX)
mpid='' cpid=''
cleanup() {
	st=$?
	# A SIGTERM in memcached's first moments can be lost: SIGKILL after 3 s.
	pids="$mpid $cpid"
	if [ -n "${pids% }" ]; then
		# shellcheck disable=SC2086
		kill $pids 2> /dev/null || true
		# shellcheck disable=SC2086
		(sleep 3; kill -KILL $pids 2> /dev/null) &
		killer=$!
		# shellcheck disable=SC2086
		wait $pids 2> /dev/null || true
		kill "$killer" 2> /dev/null || true
	fi
	if [ "$st" -ne 0 ]; then
		for f in "$logs"/*.log; do
			[ -s "$f" ] || continue
			echo "bench_kv: ${f##*/}:" >&2
			tail -n 20 "$f" | sed 's/^/    /' >&2
		done
	fi
	rm -rf "$logs"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() {
	echo "bench_kv: $*" >&2
	exit 1
}

# ready NAME PID MRRCKV-OPTIONS...: wait until the daemon answers.
ready() {
	name=$1 pid=$2
	shift 2
	i=0
	until "$kv" "$@" cmd version > "$logs/ready.out" 2>&1; do
		kill -0 "$pid" 2> /dev/null || fail "$name exited at start"
		i=$((i + 1))
		[ $i -lt 150 ] || fail "$name does not answer ($*): $(cat "$logs/ready.out")"
		sleep 0.2
	done
}

"$mrrcd" -p $mport -m 64 --rdma $addr --rdma-dev "$dev" \
	> "$logs/mrrcd.log" 2>&1 &
mpid=$!
"$memcached" -u root -p $cport -l 127.0.0.1 -m 64 -t 1 \
	> "$logs/memcached.log" 2>&1 &
cpid=$!
ready mrrcd "$mpid" -s 127.0.0.1 -p $mport
ready "mrrcd over RDMA" "$mpid" -r -d "$dev" -s $addr -p $mport
ready memcached "$cpid" -s 127.0.0.1 -p $cport
echo "bench_kv: mrrcd $("$mrrcd" -V | awk '{ print $2 }'), memcached" \
	"$("$kv" -s 127.0.0.1 -p $cport cmd version | sed 's/^VERSION //')" >&2

# field JSON KEY: a number from mrrckv's line, or nothing.
field() {
	printf '%s\n' "$1" | sed -n 's/.*"'"$2"'":\([0-9][0-9.]*\)[,}].*/\1/p' |
		grep -x '[0-9][0-9]*\(\.[0-9]*\)\{0,1\}' || true
}
emit() {	# emit METRIC VALUE UNIT SERVER TRANSPORT OP META SIZE COUNT
	printf '{"bench":"kv","metric":"%s","value":%s,"unit":"%s","server":"%s","transport":"%s","op":"%s","meta":"%s","value_bytes":%s,"count":%s,"rounds":%s%s}\n' \
		"$@" "$rounds" "$run_keys"
}

# measure SERVER TRANSPORT OP META SIZE COUNT: one mrrckv bench; prints
# "P50 P99 OPS_PER_SEC".
measure() {
	case $1 in
	mrrcd) port=$mport ;;
	*) port=$cport ;;
	esac
	case $2 in
	rdma) opts="-r -d $dev -s $addr" ;;
	*) opts="-s 127.0.0.1" ;;
	esac
	# shellcheck disable=SC2086 # the options are words
	out=$("$kv" $opts -p "$port" -m "$4" bench "$3" "$5" "$6" \
		2> "$logs/mrrckv.err") ||
		fail "$1 $2 $3 -m $4 $5 B x $6: $(cat "$logs/mrrckv.err")"
	ops=$(field "$out" ops_per_sec)
	p50=$(field "$out" lat_p50_us)
	p99=$(field "$out" lat_p99_us)
	if [ -z "$ops" ] || [ -z "$p50" ] || [ -z "$p99" ] ||
	   [ "$(field "$out" value_bytes)" != "$5" ] ||
	   [ "$(field "$out" count)" != "$6" ] ||
	   ! awk "BEGIN { exit !($p50 > 0 && $ops > 0) }"; then
		fail "$1 $2 $3 -m $4 $5 B x $6: unexpected output: $out"
	fi
	echo "$p50 $p99 $ops"
}

configs="memcached,tcp,get,none mrrcd,tcp,get,none mrrcd,rdma,get,none
mrrcd,rdma,oget,none mrrcd,rdma,oget,faa mrrcd,rdma,oget,sample:8
memcached,tcp,set,none mrrcd,tcp,set,none mrrcd,rdma,set,none
mrrcd,rdma,rset,none"
ncfg=$(echo "$configs" | wc -w)

# Unrecorded warm-up: each path once (connections, page faults, caches).
for c in "mrrcd tcp get" "mrrcd rdma get" "mrrcd rdma oget" \
	 "memcached tcp get" "mrrcd rdma rset"; do
	# shellcheck disable=SC2086
	measure $c none 64 100 > /dev/null
done

# summary CONFIG: "P50 P99 OPS_PER_SEC" of CONFIG's rounds in $logs/rounds:
# the medians of the percentiles, the operations over their total time.
summary() {
	awk -v c="$1" '$1 == c {
		p50[n] = $2; p99[n] = $3; n++; ops += $5; t += $5 / $4
	}
	function median(a,	i, j, x) {
		for (i = 1; i < n; i++)
			for (j = i; j > 0 && a[j - 1] > a[j]; j--) {
				x = a[j]; a[j] = a[j - 1]; a[j - 1] = x
			}
		return n % 2 ? a[(n - 1) / 2] : (a[n / 2 - 1] + a[n / 2]) / 2
	}
	END {
		if (!n)
			exit 1
		printf "%.2f %.2f %.0f\n", median(p50), median(p99), ops / t
	}' "$logs/rounds"
}

for sc in $sizes; do
	size=${sc%%:*}
	per=$((${sc#*:} / rounds))
	count=$((per * rounds))
	: > "$logs/rounds"
	r=0
	while [ $r -lt "$rounds" ]; do
		# This round's order: the list, from configuration r on.
		for c in $(echo "$configs" | tr '\n' ' ' | awk -v k=$r '{
			for (i = 0; i < NF; i++) print $((i + k) % NF + 1) }'); do
			# shellcheck disable=SC2046 # SERVER TRANSPORT OP META
			m=$(measure $(echo "$c" | tr , ' ') "$size" "$per")
			echo "$c $m $per" >> "$logs/rounds"
		done
		r=$((r + 1))
	done
	[ "$(wc -l < "$logs/rounds")" -eq $((ncfg * rounds)) ] ||
		fail "$size B: rounds incomplete"
	base= sbase=
	for c in $configs; do
		# shellcheck disable=SC2046
		set -- $(echo "$c" | tr , ' ')
		m=$(summary "$c") || fail "$c: no rounds"
		# shellcheck disable=SC2086
		set -- "$@" $m
		emit ops_per_sec "$7" ops/s "$1" "$2" "$3" "$4" "$size" "$count"
		emit lat_p50_us "$5" us "$1" "$2" "$3" "$4" "$size" "$count"
		emit lat_p99_us "$6" us "$1" "$2" "$3" "$4" "$size" "$count"
		case $1,$2,$3 in
		memcached,tcp,get) base=$5 ;;
		memcached,tcp,set) sbase=$5 ;;
		mrrcd,*,get | mrrcd,*,oget)
			emit ratio_vs_memcached_tcp \
				"$(awk "BEGIN { printf \"%.3f\", $base / $5 }")" x \
				"$1" "$2" "$3" "$4" "$size" "$count" ;;
		mrrcd,*,set | mrrcd,*,rset)
			emit ratio_vs_memcached_tcp \
				"$(awk "BEGIN { printf \"%.3f\", $sbase / $5 }")" x \
				"$1" "$2" "$3" "$4" "$size" "$count" ;;
		esac
	done
done

# SIGTERM: both must exit 0.
kill "$mpid" || fail "mrrcd is gone"
st=0
wait "$mpid" || st=$?
mpid=
[ "$st" -eq 0 ] || fail "mrrcd exited $st on SIGTERM"
kill "$cpid" || fail "memcached is gone"
st=0
wait "$cpid" || st=$?
cpid=
[ "$st" -eq 0 ] || fail "memcached exited $st on SIGTERM"
