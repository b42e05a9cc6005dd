#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# BENCH=bm (tools/bench/run.sh, one test VM): the buffer manager's
# coherence protocol (issue 18, begun).  Three nodes (processes with a
# /dev/mrrc context each, on the VM's rxe device) run BM_OPS (34000)
# random reads and writes each, BM_WRITE_PCT (50) % writes, on BM_PAGES
# (8) pages homed round-robin, 4 in flight per node; then `bm check`:
#
#   linearizability_ops, linearizability_violations  (keys nodes, pages)
#   coherence_throughput_ops  the cluster's operations per second (keys
#                             nodes, pages, write_pct, inflight)
#   op_mean_us, op_p50_us, op_p99_us, op_count  (`bm lat`: keys op read or
#                             write, where local or remote, inflight,
#                             write_pct) of those operations, and of
#                             BM_LAT_OPS (6000) run by node 0 alone, one
#                             at a time, the others only serving
#                             (histories 1); then the same with locks
#                             (keys locking 1, lock_node 0: the access
#                             node, as in the paper, or 1), where bm lat
#                             also gives op shared_lock and
#                             exclusive_lock, the time to get one
#   coherence_throughput_ops  also with locks (key locking 1; BM_LOCK_OPS
#                             (6000) per node), and with one-sided reads
#                             (key one_sided 1, as many operations) beside
#                             the same run without them (one_sided 0,
#                             ops BM_LOCK_OPS); and
#                             bm lat of BM_LAT_OPS reads by node 0 alone
#                             with -R (op one_sided_read, write_pct 0)
#   dht_throughput_ops        the hash table's operations per second at
#                             its access node, per phase (insert, lookup,
#                             update, lookup_again, erase; keys nodes 1-3,
#                             keys, pages, local_keys), and `bm lat` of
#                             its Malloc, Free, Read and Write (keys > 0)
#
# Then the buffer manager's frame pool under load (`bm fix`): BM_FIX_OPS
# (50000) FIX/UNFIX of Zipf-chosen pages (theta 0.99), 10 % of them
# exclusive and dirty, BM_FRAMES (256) frames of 4 KiB, working sets of 2,
# 4 and 8 times the frames, with the pages in each tier:
#
#   tier file, file tmpfs   a file in the guest's memory (its page cache)
#   tier file, file 9p      a file on the host's file system, through
#                           virtio-9p without a guest cache: every read
#                           and write goes to the host
#   tier rfile, file tmpfs  a file on another node (in the guest's
#                           memory) through its file server, bm fserve,
#                           on rxe0: FReadF and FPrintF, a SEND and an
#                           answer per page (two-sided)
#   tier rfile_rdma         the same file, its pages read with RDMA READs
#                           from the server's export of it (one-sided),
#                           written back through the server
#   tier rfile_rdma_rw      read with RDMA READs and written back with
#                           RDMA WRITEs (a writable export)
#   tier remote             a Redy cache (redymgr, one redyd on rxe0)
#                           created from the file; the manager's model
#                           has one configuration, one-sided with one
#                           connection, batch and depth 1 (a FIX waits
#                           for one page)
#   tier mrrcd, file 9p     the 9p file with an mrrcd (-m 64, on the same
#                           node) in front of it, over TCP: write-through,
#                           a page the daemon has is read from it
#                           (tier_hit_ratio: the share of the frame
#                           pool's reads the daemon served)
#   tier mrrcd_rdma, file 9p  the same over rxe0, GETs one-sided
#
#   throughput_ops, fix_p99_us, fix_p50_us, fix_mean_us, hit_ratio (keys
#   tier, file, frames, pages, ws_factor, page_size, write_pct,
#   zipf_theta, ops, seed, threads; redy_cfg for the remote tier)
#
# and at working set 4 the tmpfs, 9p and rfile_rdma tiers again with four
# threads sharing the frames (bm fix -j 4, threads 4).
#
# JSON lines on stdout; progress on stderr.
set -eu
# b, addr, cluster(): three nodes (bm-cluster.sh)
. tools/bench/bm-cluster.sh
ops=${BM_OPS:-34000}
pages=${BM_PAGES:-8}
wpct=${BM_WRITE_PCT:-50}
out=/tmp/bm-bench
mkdir -p $out
t0=$(date +%s.%N)
cluster all 7950 "$ops" "$ops" 4 "$wpct"
t1=$(date +%s.%N)
$b/bm check $out/all.?.hist
$b/bm lat $out/all.?.hist
# the paper's §6.1 Read and Write: node 0 alone, one at a time, on pages
# homed at itself (local) and at the two others (remote)
cluster one 7850 "${BM_LAT_OPS:-6000}" 0 1 "$wpct"
$b/bm lat $out/one.0.hist
# and with the paper's locks: a shared lock around each read and an
# exclusive one around each write, at node 0 itself (the paper's setting)
# or at node 1
cluster onelk 7750 "${BM_LAT_OPS:-6000}" 0 1 "$wpct" "-x -l 0"
$b/bm lat $out/onelk.0.hist
cluster onelk1 7650 "${BM_LAT_OPS:-6000}" 0 1 "$wpct" "-x -l 1"
$b/bm lat $out/onelk1.0.hist
# and one-sided reads (-R), reads only (write_pct 0: alone, a node that
# writes a page keeps its copy, and its reads of it are hits): every
# remote read an RDMA READ of the home's table, without its CPU (key
# one_sided 1, op one_sided_read)
cluster one1s 7450 "${BM_LAT_OPS:-6000}" 0 1 0 "-R"
$b/bm lat $out/one1s.0.hist
# the three nodes again, with locks at node 0
lops=${BM_LOCK_OPS:-6000}
t2=$(date +%s.%N)
cluster locked 7550 "$lops" "$lops" 4 "$wpct" "-x"
t3=$(date +%s.%N)
$b/bm check $out/locked.?.hist
# and with one-sided reads, against the same run without them (the same
# operations: the first run's are more, and its rate is not comparable)
t6=$(date +%s.%N)
cluster twosided 7250 "$lops" "$lops" 4 "$wpct"
t7=$(date +%s.%N)
$b/bm check $out/twosided.?.hist
t4=$(date +%s.%N)
cluster onesided 7350 "$lops" "$lops" 4 "$wpct" "-R"
t5=$(date +%s.%N)
$b/bm check $out/onesided.?.hist
# the hash table (§4; the paper's §6.2.1): node 0 its access node with
# BM_DHT_KEYS (1200) keys, inserted, looked up, updated, looked up again
# and erased, their values Malloc'd over 1, 2 or 3 nodes (as many pages
# as keys: node 0's own share is 1/nodes); then Malloc and Free, local
# and remote, from its history
dkeys=${BM_DHT_KEYS:-1200}
for nn in 1 2 3; do
	pids=
	i=0
	while [ $i -lt $nn ]; do
		kk=0
		[ $i = 0 ] && kk=$dkeys
		$b/bm node -i $i -n $nn -a $addr -p $((8400 + nn * 100)) -P "$dkeys" \
			-k 4 -K $kk -H $out/dht$nn.$i.hist > $out/dht$nn.$i.json \
			2> $out/dht$nn.$i.log &
		pids="$pids $!"
		k=0
		until grep -q listening $out/dht$nn.$i.log 2> /dev/null; do
			k=$((k + 1))
			[ $k -lt 100 ] || { cat $out/dht$nn.$i.log >&2; exit 1; }
			sleep 0.1
		done
		i=$((i + 1))
	done
	for p in $pids; do
		wait "$p"
	done
	cat $out/dht$nn.?.log >&2
	cat $out/dht$nn.0.json
	$b/bm check $out/dht$nn.?.hist > /dev/null
	$b/bm lat $out/dht$nn.0.hist
done
fix_bench() {
	fops=${BM_FIX_OPS:-50000}
	frames=${BM_FRAMES:-256}
	printf '%s\n' 'redy-model 1 1 1 1 1 4096 10' '0 1 1 1 1000 1000' \
		> $out/fix-model.txt
	build/tools/redymgr -m $out/fix-model.txt -p 7929 -r 64 \
		> $out/redymgr.log 2>&1 &
	mgr=$!
	build/tools/redyd -a $addr -p 7940 -m $((frames * 8 * 4 / 1024 + 16)) -t 1 \
		> $out/redyd.log 2>&1 &
	srv=$!
	k=0
	until grep -q 'server threads, ports' $out/redyd.log; do
		k=$((k + 1))
		[ $k -lt 100 ] || { cat $out/redyd.log >&2; return 1; }
		sleep 0.1
	done
	build/tools/redy server -M 127.0.0.1:7929 A $addr 7940 \
		$((frames * 8 * 4 / 1024 + 16)) 1 1 >&2 || return 1
	$b/bm fserve -a $addr -p 7960 -f $out/pages-f.bin -s $((frames * 8 * 4096)) \
		2> $out/fserve.log &
	fsrv=$!
	k=0
	until grep -q serving $out/fserve.log; do
		k=$((k + 1))
		[ $k -lt 100 ] || { cat $out/fserve.log >&2; kill $srv $mgr $fsrv; return 1; }
		sleep 0.1
	done
	build/tools/mrrcd -p 7970 -R $addr -m 64 -v > $out/mrrcd.log 2>&1 &
	kvd=$!
	k=0
	until grep -q 'port 7970' $out/mrrcd.log; do
		k=$((k + 1))
		[ $k -lt 600 ] || { cat $out/mrrcd.log >&2; kill $srv $mgr $fsrv $kvd; return 1; }
		sleep 0.1
	done
	mkdir -p build/tmp
	for ws in 2 4 8; do
		for t in tmpfs 9p rfile rfile_rdma rfile_rdma_rw remote mrrcd \
			mrrcd_rdma; do
			case $t in
			tmpfs) set -- -t file -f $out/pages.bin -K tmpfs ;;
			9p) set -- -t file -f build/tmp/bm-pages.bin -K 9p ;;
			rfile) set -- -t rfile -R $addr:7960 -K tmpfs ;;
			rfile_rdma) set -- -t rfile_rdma -R $addr:7960 -K tmpfs ;;
			rfile_rdma_rw) set -- -t rfile_rdma_rw -R $addr:7960 -K tmpfs ;;
			remote) set -- -t remote -f $out/pages-r.bin -K none \
				-M 127.0.0.1:7929 ;;
			mrrcd) set -- -t mrrcd -f build/tmp/bm-pages-m.bin -K 9p \
				-R 127.0.0.1:7970 ;;
			mrrcd_rdma) set -- -t mrrcd_rdma -f build/tmp/bm-pages-m.bin \
				-K 9p -R $addr:7970 ;;
			esac
			$b/bm fix "$@" -F "$frames" -x $ws -w 10 -o "$fops" -s 1 ||
				return 1
			# and four threads sharing the frames: a file's calls
			# overlap (the 9p file's wait for the host), and the
			# file server's (a connection and an export each)
			case $ws/$t in
			4/tmpfs | 4/9p | 4/rfile_rdma)
				$b/bm fix "$@" -F "$frames" -x $ws -w 10 -o "$fops" \
					-s 1 -j 4 || return 1 ;;
			esac
		done
	done
	rm -f build/tmp/bm-pages.bin build/tmp/bm-pages-m.bin
	kill $srv $mgr $fsrv $kvd 2> /dev/null || :
	wait $srv $mgr $fsrv $kvd || :
	cat $out/fserve.log $out/mrrcd.log >&2
}
fix_bench
kernel=${MRRC_KVER:-$(uname -r)}
accel=$(sed -n 's/.*MRRC_ACCEL=\([^ ]*\).*/\1/p' /proc/cmdline)
for run in "0 $t0 $t1 $ops 0" "1 $t2 $t3 $lops 0" "0 $t6 $t7 $lops 0" \
	"0 $t4 $t5 $lops 1"; do
	# shellcheck disable=SC2086	# (five words, split on purpose)
	set -- $run
	printf '{"bench":"bm","metric":"coherence_throughput_ops","value":%s,"unit":"ops/s","nodes":3,"pages":%s,"write_pct":%s,"inflight":4,"locking":%s,"one_sided":%s,"ops":%s,"kernel":"%s","accel":"%s","device":"rxe0","commit":"%s","date":"%s"}\n' \
		"$(echo "$2 $3 $4" | awk '{ printf "%.0f", 3 * $3 / ($2 - $1) }')" \
		"$pages" "$wpct" "$1" "$5" "$4" "$kernel" "${accel:-unknown}" \
		"${MRRC_COMMIT:-unknown}" "${MRRC_DATE:-unknown}"
done
