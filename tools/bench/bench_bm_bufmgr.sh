#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# BENCH=bm_bufmgr (tools/bench/run.sh, one test VM): the buffer manager
# put together over the coherence protocol (bm node -f -M -D|-F, issue 18,
# §5 of the paper).  Three nodes on rxe0, pages of 4 KiB (-B 4096) homed
# round-robin, each node with BM_FRAMES (16) frames for copies of pages
# homed elsewhere (-f, 2Q); BM_OPS (2000) operations per node, four in
# flight, Zipf page choice (-z 0.99, the same popular pages at every
# node), 10 % writes; working sets of 2, 4 and 8 times the frames
# (ws_factor; pages = factor x frames).  A page not in the node's frames
# comes from its home:
#
#   tier memory       the home keeps every page it is home to in memory
#                     (the other nodes' frames, unbounded): no spill
#   tier remote       the home keeps BM_FRAMES of them in memory (-M) and
#                     spills the others to another node's memory: one
#                     file for the three homes at a file server (bm
#                     fserve, -F) on the guest's tmpfs, read and written
#                     with RDMA READs and WRITEs (-m) through rxe0
#   tier file, 9p     the home keeps BM_FRAMES of them in memory (-M) and
#                     the others in its file (-D) on the host's file
#                     system through virtio-9p (the closest this testbed
#                     has to the paper's SSD; BENCH=bm's 9p tier)
#
# Each configuration BM_REPS (3) times, the repetitions (key rep) one
# after the other, so that the testbed's drifts fall on all of them.
# JSON lines from every node (bm node's, keys node, frames, home_frames,
# pages, page_bytes, zipf_theta, write_pct, and here tier, file,
# ws_factor, rep): throughput_ops (the node's reads and writes per second),
# fix_mean_us, fix_p50_us, fix_p99_us, copy_reads, home_reads,
# file_reads, file_writes; and bm check's linearizability_ops and
# linearizability_violations of each run.
# JSON lines on stdout; progress on stderr.
set -eu
# b, addr, cluster(): three nodes (bm-cluster.sh)
. tools/bench/bm-cluster.sh
ops=${BM_OPS:-2000}
reps=${BM_REPS:-3}
frames=${BM_FRAMES:-16}
out=/tmp/bm-bufmgr-bench
files=build/tmp/bm-bufmgr
mkdir -p $out $files
port=7200
spill=$(mktemp /tmp/bm-bufmgr.XXXXXX)
$b/bm fserve -a $addr -p 7190 -f "$spill" -s $((8 * frames * 4096)) -I 600 \
	2> $out/fserve.log &
fsrv=$!
k=0
until grep -q serving $out/fserve.log; do
	k=$((k + 1))
	[ $k -lt 100 ] || { cat $out/fserve.log >&2; exit 1; }
	sleep 0.1
done
for rep in $(seq 1 "$reps"); do
for ws in 2 4 8; do
	pages=$((ws * frames))
	for tier in memory remote file; do
		o="-B 4096 -f $frames -z 0.99"
		case $tier in
		memory) fs=none ;;
		remote) o="$o -M $frames -F $addr:7190 -m" fs=fserve_rdma ;;
		file) o="$o -M $frames -D $files" fs=9p ;;
		esac
		n=$tier$ws.$rep
		cluster "$n" $port "$ops" "$ops" 4 10 "$o"
		if [ $tier = remote ] && [ "$(grep -l 'mapped, .* RDMA READs and WRITEs' $out/$n.?.log |
			wc -l)" != 3 ]; then
			echo "bench_bm_bufmgr: the remote tier not one-sided" >&2
			exit 1
		fi
		keys="\"tier\":\"$tier\",\"file\":\"$fs\",\"ws_factor\":$ws,\"rep\":$rep,"
		for i in 0 1 2; do
			sed "s/^{\"bench\":\"bm\",/{\"bench\":\"bm\",$keys/" $out/$n.$i.json
		done
		$b/bm check $out/$n.?.hist > $out/$n.check	# (a failed check fails the bench)
		sed "s/^{\"bench\":\"bm\",/{\"bench\":\"bm\",$keys/" $out/$n.check
		port=$((port + 100))
		[ $port -lt 9000 ] || port=7200
	done
done
done
kill $fsrv
wait $fsrv
cat $out/fserve.log >&2
rm -rf $files "$spill"
