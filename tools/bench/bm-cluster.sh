# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh disable=SC2154	# (pages, out: the caller's)
# Sourced by bench_bm.sh, bench_bm_pages.sh, bench_bm_bufmgr.sh and
# bench_bm_locks.sh (run from the repository's top, as tools/bench/run.sh
# runs them), which set pages and out (where the histories and logs go)
# before they call cluster().
b=build/tools
addr=10.211.0.1
trap 'kill $(jobs -p) 2> /dev/null || :' EXIT
#
# cluster NAME PORT OPS_NODE0 OPS_OTHERS INFLIGHT WRITE_PCT [OPTIONS]:
# three bm nodes, histories in $out/NAME.?.hist, their JSON lines in
# $out/NAME.?.json; 0 if all three exit 0.
cluster() {
	pids=
	for i in 0 1 2; do
		o=$4
		[ $i = 0 ] && o=$3
		# shellcheck disable=SC2086	# (options, split on purpose)
		$b/bm node -i $i -n 3 -a $addr -p "$2" -P "$pages" -k "$5" -o "$o" \
			-w "$6" -s 3 ${7:-} -H $out/$1.$i.hist > $out/$1.$i.json \
			2> $out/$1.$i.log &
		pids="$pids $!"
		k=0
		until grep -q listening $out/$1.$i.log 2> /dev/null; do
			k=$((k + 1))
			[ $k -lt 100 ] || { cat $out/$1.$i.log >&2; return 1; }
			sleep 0.1
		done
	done
	st=0
	for p in $pids; do
		wait "$p" || st=1
	done
	cat $out/$1.?.log >&2
	return $st
}
