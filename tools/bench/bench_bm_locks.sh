#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# BENCH=bm_locks (tools/bench/run.sh, one test VM): the coherence
# protocol's locks (issue 18, §3.4.3 of the paper) two ways:
#
#   locks message     bm node -x: LOCK to the lock node, GRANTED back,
#                     UNLOCK (lock.c: a fair queue at the lock node)
#   locks one_sided   bm node -x -Y: the lock node's words taken with
#                     RDMA CMP_SWAP (exclusive) and FETCH_ADD (shared),
#                     given back with FETCH_ADD; no message, no queue
#
# Three nodes on rxe0.  Node 0 is the lock node and takes no locks (-o 0:
# -Y needs that; the same for both, so that they compare) but is home to
# a third of the pages; nodes 1 and 2 run BM_OPS (1000) reads and writes
# each, four in flight, 30 % writes, every read under its page's shared
# lock and every write under its exclusive one, on 8 pages (contended)
# and 64.  Each configuration BM_REPS (3) times, one after the other.
# JSON lines, keys locks, pages, rep:
#   lock_throughput_ops   nodes 1 and 2's operations per second, together
#                         (each node's operations over the time from its
#                         first to the end of its last, not the serving
#                         of the others until they are done)
#   lock_tries_taken      -Y: tries that found the lock taken (per node)
#   op_count, op_mean_us, op_p50_us, op_p99_us (bm lat: shared_lock and
#                         exclusive_lock, from asking to the grant; read
#                         and write, the operation under its lock)
#   linearizability_ops, linearizability_violations, lock_holds,
#                         mutual_exclusion_violations (bm check)
# JSON lines on stdout; progress on stderr.
set -eu
# b, addr, cluster(): three nodes (bm-cluster.sh)
. tools/bench/bm-cluster.sh
ops=${BM_OPS:-1000}
reps=${BM_REPS:-3}
out=/tmp/bm-locks-bench
mkdir -p $out
port=7200
for rep in $(seq 1 "$reps"); do
	for pages in 8 64; do
		for locks in message one_sided; do
			o=-x
			[ $locks = one_sided ] && o="-x -Y"
			n=$locks$pages.$rep
			cluster "$n" $port 0 "$ops" 4 30 "$o"
			keys="\"locks\":\"$locks\",\"rep\":$rep,"
			# nodes 1 and 2's rates: their operations over the time
			# their own took ("its own operations took S s")
			for i in 1 2; do
				echo "$ops $(sed -n 's/^bm: node [12]: its own operations took \([0-9.]*\) s$/\1/p' \
					$out/$n.$i.log)"
			done |
				awk -v k="$keys" -v p="$pages" -v c="${MRRC_COMMIT:-unknown}" \
					-v d="${MRRC_DATE:-unknown}" '
					NF == 2 && $2 > 0 { t += $1 / $2; m++ }
					END {
						if (m != 2) exit 1
						printf "{\"bench\":\"bm\",%s\"metric\":\"lock_throughput_ops\",\"value\":%.1f,\"unit\":\"ops/s\",\"nodes\":3,\"pages\":%s,\"inflight\":4,\"write_pct\":30,\"device\":\"rxe0\",\"commit\":\"%s\",\"date\":\"%s\"}\n", k, t, p, c, d
					}'
			if [ $locks = one_sided ]; then
				sed -n 's/^bm: node \([12]\): one-sided locks (-Y): \([0-9]*\) tries.*/\1 \2/p' \
					$out/$n.1.log $out/$n.2.log > $out/$n.tries
				[ "$(wc -l < $out/$n.tries)" = 2 ] || exit 1
				while read -r node tries; do
					printf '{"bench":"bm",%s"metric":"lock_tries_taken","value":%s,"unit":"tries","node":%s,"nodes":3,"pages":%s,"device":"rxe0","commit":"%s","date":"%s"}\n' \
						"$keys" "$tries" "$node" "$pages" \
						"${MRRC_COMMIT:-unknown}" "${MRRC_DATE:-unknown}"
				done < $out/$n.tries
			fi
			# (into a file first: a failed check fails the bench)
			$b/bm lat $out/$n.?.hist > $out/$n.lat
			$b/bm check $out/$n.?.hist > $out/$n.check
			cat $out/$n.lat $out/$n.check |
				sed "s/^{\"bench\":\"bm\",/{\"bench\":\"bm\",$keys/"
			port=$((port + 100))
		done
	done
done
