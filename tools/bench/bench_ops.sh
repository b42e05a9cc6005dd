#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# BENCH=ops: WRITE / READ / SEND latency and throughput through the module
# (mrrc_ops), then the same operations through plain user-space
# libibverbs on the same device: perftest's ib_{write,read,send}_{lat,bw}
# as the reference.  JSON lines on stdout, each as soon as it is measured,
# with the keys of the run as tools/bench/benchjson.c writes them.
#
# perftest's latency tools ping-pong and report half the round trip (the
# send tools one way); mrrc_ops reports post-to-completion.  Compare
# latencies with that in mind; throughputs compare directly.
#
# usage: bench_ops.sh [-d DEV]: on RDMA device DEV (default $MRRC_DEV, else
# rxe0), whose network device has the address 10.211.0.1.
set -eu
dir=$(dirname "$0")
usage="usage: bench_ops [-d DEV]"
while getopts d:h o; do
	case $o in
	d) MRRC_DEV=$OPTARG ;;
	h) echo "$usage"; exit 0 ;;
	*) echo "$usage" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { echo "$usage" >&2; exit 2; }
dev=${MRRC_DEV-rxe0}
# One date for the lines of mrrc_ops and of perftest.
MRRC_DATE=${MRRC_DATE:-$(date -u +%Y-%m-%dT%H:%M:%SZ)}
export MRRC_DATE
"$dir/mrrc_ops" -d "$dev"
# The same on isolated connections (a PD and a cache each: "conn").
"$dir/mrrc_ops" -d "$dev" isolated

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

addr=10.211.0.1
port=18700
json() {
	printf '{"bench":"ops","metric":"%s","value":%s,"unit":"%s","path":"verbs","op":"%s","size_bytes":%s,"batch":%s%s}\n' \
		"$@" "$run_keys"
}
# run TOOL ARGS...: server and client of one perftest tool; client output.
run() {
	port=$((port + 1))
	"$@" -d "$dev" -p "$port" > /dev/null 2>&1 &
	srv=$!
	sleep 1
	out=$("$@" -d "$dev" -p "$port" "$addr" 2>/dev/null) || true
	wait "$srv" 2>/dev/null || true
	echo "$out"
}
for op in write read send; do
	for size in 64 512 4096 16384 65536; do
		# t_typical (perftest's median), not t_avg: under emulation
		# perftest's average of the write and send ping-pongs has come
		# out as "inf".  Anything but a number is reported, not recorded.
		lat=$(run "ib_${op}_lat" -s "$size" -n 300 -F |
			awk '$1 == "'"$size"'" { print $5; exit }')
		case $lat in
		[0-9]*[0-9] | [0-9])
			case $lat in *[!0-9.]*) lat= ;; esac ;;
		*) lat= ;;
		esac
		if [ -n "$lat" ]; then
			json latency "$lat" us "$op" "$size" 1
		else
			echo "bench_ops: ib_${op}_lat -s $size: no latency" >&2
		fi
		for batch in 1 16; do
			extra=
			[ "$batch" -gt 1 ] && extra="--post_list=$batch"
			# A run that moved nothing (perftest prints a rate of 0
			# when its connection failed) is retried once, then
			# reported on stderr, never recorded as a measurement.
			for try in 1 2; do
				# shellcheck disable=SC2086
				mpps=$(run "ib_${op}_bw" -s "$size" -n 4000 -F $extra |
					awk '$1 == "'"$size"'" && $5 > 0 { print $5; exit }')
				[ -n "$mpps" ] && break
			done
			if [ -n "$mpps" ]; then
				json throughput \
					"$(awk "BEGIN { printf \"%.0f\", $mpps * 1000000 }")" \
					ops_per_s "$op" "$size" "$batch"
			else
				echo "bench_ops: ib_${op}_bw -s $size batch $batch: no rate" >&2
			fi
		done
	done
done
