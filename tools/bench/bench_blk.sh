#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# BENCH=blk: mrrc_blk against NVMe over RDMA, in two test VMs on the rxe
# link (tools/vm/pair.sh, started by tools/bench/run.sh).  VM a lends
# BLK_MB MiB twice: through mrrc_blksrv (one-sided: a's CPU is not on the
# data path) and as a brd RAM disk exported by Debian's nvmet-rdma (NVMe
# over RDMA: a's target CPU serves every command).  VM b attaches both,
# mrrc_blk with `mrrc blk attach` and nvme-rdma with nvme-cli, and runs
# the same fio jobs on each (libaio, O_DIRECT, one job, time-based):
#
#   rw         bs_bytes  iodepth
#   randread   4096      1, 32
#   randwrite  4096      1, 32
#   read       131072    16
#   write      131072    16
#
# BLK_ROUNDS rounds (default 3) of BLK_SECONDS seconds (default 8, after
# 1 s of ramp); a round runs every job on both devices, alternating which
# goes first, and each figure is the median over the rounds.
#
# JSON lines (written by the client to the file named): metrics iops,
# bw_mbps (MB/s, 10^6 bytes), lat_p50_us and lat_p99_us (fio's total
# latency, submission to completion); for mrrc_blk also iops_vs_nvme_rdma
# (its iops over nvme-rdma's, same job, same run), reg_hit_ratio
# (registrations served from the cache over all, in the job's rounds) and
# the pool counters pool_hits, pool_misses, reg_wrs; keys device
# (mrrc_blk, nvme_rdma), rw, bs_bytes, iodepth, seconds, rounds, queues,
# size_mib, server_kernel, and the run's (kernel, accel, commit, date).
#
# usage: bench_blk.sh serve          (VM a)
#        bench_blk.sh client OUT     (VM b; OUT: the JSON lines)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
kdir=$(dirname "${MRRC_KO:?bench_blk: not in a test VM}")
ctl_port=7727
nqn=nqn.2026-11.org.mrrc:bench
mb=${BLK_MB:-128}
export PATH="$top/build/tools:$PATH:/usr/sbin:/sbin"
usage="usage: bench_blk serve | bench_blk client OUT"

fail() {
	echo "bench_blk: $*" >&2
	exit 1
}

serve() {
	ip=${MRRC_LINK_IP:?bench_blk serve: not in a VM pair}
	insmod "$kdir/mrrc_blksrv.ko" size_mb="$mb" || fail "mrrc_blksrv"
	modprobe brd rd_nr=1 rd_size=$((mb * 1024)) || fail "brd"
	modprobe nvmet-rdma || fail "nvmet-rdma"
	mountpoint -q /sys/kernel/config ||
		mount -t configfs none /sys/kernel/config || fail "configfs"
	c=/sys/kernel/config/nvmet
	mkdir "$c/subsystems/$nqn"
	echo 1 > "$c/subsystems/$nqn/attr_allow_any_host"
	mkdir "$c/subsystems/$nqn/namespaces/1"
	echo /dev/ram0 > "$c/subsystems/$nqn/namespaces/1/device_path"
	echo 1 > "$c/subsystems/$nqn/namespaces/1/enable"
	mkdir "$c/ports/1"
	echo rdma > "$c/ports/1/addr_trtype"
	echo ipv4 > "$c/ports/1/addr_adrfam"
	echo "$ip" > "$c/ports/1/addr_traddr"
	echo 4420 > "$c/ports/1/addr_trsvcid"
	ln -s "$c/subsystems/$nqn" "$c/ports/1/subsystems/$nqn"
	echo "bench_blk: serving $mb MiB twice on $ip (mrrc_blksrv :7726, nvmet-rdma :4420)"
	msg=$(timeout 5400 busybox nc -l -p $ctl_port) || true
	echo "bench_blk: b says '$msg'"
	rm "$c/ports/1/subsystems/$nqn"
	rmdir "$c/ports/1"
	echo 0 > "$c/subsystems/$nqn/namespaces/1/enable"
	rmdir "$c/subsystems/$nqn/namespaces/1"
	rmdir "$c/subsystems/$nqn"
	st=0
	rmmod nvmet-rdma nvmet brd || st=1
	rmmod mrrc_blksrv || st=1
	rmmod mrrc || st=1
	exit $st
}

# The counters of mrrc_blk's stats file, as "key value" lines.
blkstats() { cat "/sys/block/${mdev#/dev/}/mrrc/stats"; }

client() {
	out=${1:?$usage}
	peer=${MRRC_LINK_PEER:?bench_blk client: not in a VM pair}
	rounds=${BLK_ROUNDS:-3}
	secs=${BLK_SECONDS:-8}
	queues=${BLK_QUEUES:-2}
	trap 'echo done | timeout 10 busybox nc "$peer" $ctl_port || true' EXIT
	insmod "$kdir/mrrc_blk.ko" || fail "mrrc_blk"
	modprobe nvme-rdma || fail "nvme-rdma"
	i=0
	until mdev=$(mrrc blk attach "$peer" -q "$queues" -d 64); do
		i=$((i + 1))
		[ $i -lt 30 ] || fail "mrrc blk attach $peer"
		sleep 2
	done
	host=nqn.2014-08.org.nvmexpress:uuid:$(cat /proc/sys/kernel/random/uuid)
	nvme connect -t rdma -a "$peer" -s 4420 -n "$nqn" --hostnqn="$host" \
		--nr-io-queues="$queues" > /dev/null || fail "nvme connect"
	# The namespace's disk: nvmeXnY (nvmeXcYnZ are the hidden per-path
	# disks of native multipath); VM b has no other NVMe device.
	ndev=
	for i in 1 2 3 4 5 6 7 8 9 10; do
		for b in /sys/block/nvme*n*; do
			case ${b##*/} in
			*c*|'nvme*n*') continue ;;
			esac
			[ -b "/dev/${b##*/}" ] && ndev=/dev/${b##*/}
		done
		[ -n "$ndev" ] && break
		sleep 1
	done
	[ -n "$ndev" ] || fail "no namespace block device for $nqn"
	echo "bench_blk: mrrc_blk $mdev, nvme-rdma $ndev, $queues queues each"

	work=$(mktemp -d)
	r=0
	while [ $r -lt "$rounds" ]; do
		for job in "randread 4096 1" "randread 4096 32" \
			   "randwrite 4096 1" "randwrite 4096 32" \
			   "read 131072 16" "write 131072 16"; do
			set -- $job
			order="mrrc_blk nvme_rdma"
			[ $((r % 2)) -eq 0 ] || order="nvme_rdma mrrc_blk"
			for dev in $order; do
				f=$mdev
				[ $dev = mrrc_blk ] || f=$ndev
				tag=$work/$dev.$1.$2.$3.$r
				[ $dev = nvme_rdma ] || blkstats > "$tag.before"
				[ -b "$f" ] || fail "$f: not a block device"
				fio --name=b --filename="$f" --rw="$1" --bs="$2" \
					--allow_file_create=0 \
					--iodepth="$3" --ioengine=libaio --direct=1 \
					--size=$((mb - 16))M --time_based \
					--runtime="$secs" --ramp_time=1 \
					--lat_percentiles=1 --output-format=json \
					> "$tag.json" || fail "fio $dev $job"
				[ $dev = nvme_rdma ] || blkstats > "$tag.after"
				echo "bench_blk: round $r $dev $job done"
			done
		done
		r=$((r + 1))
	done
	python3 - "$work" "$out" "$rounds" "$secs" "$queues" "$mb" <<'EOF'
import glob, json, os, statistics, sys
work, out, rounds, secs, queues, mb = sys.argv[1:]
run = {k: os.environ.get(v, "") for k, v in
       (("commit", "MRRC_COMMIT"), ("date", "MRRC_DATE"),
        ("server_kernel", "MRRC_KVER_SERVER"))}
def stats(path):
    d = {}
    for line in open(path):
        k, v = line.split()
        d[k] = int(v)
    return d
res = {}
for p in sorted(glob.glob(work + "/*.json")):
    dev, rw, bs, qd, r = os.path.basename(p)[:-5].split(".")
    j = json.load(open(p))["jobs"][0]
    side = j["read"] if rw in ("randread", "read") else j["write"]
    pct = side["lat_ns"].get("percentile", {})
    m = {"iops": side["iops"], "bw_mbps": side["bw_bytes"] / 1e6,
         "lat_p50_us": pct.get("50.000000", 0) / 1e3,
         "lat_p99_us": pct.get("99.000000", 0) / 1e3}
    if dev == "mrrc_blk":
        a = stats(p[:-5] + ".after")
        b = stats(p[:-5] + ".before")
        dlt = {k: a[k] - b[k] for k in a}
        hits = dlt["hit_exact"] + dlt["hit_subset"] + dlt["hit_span"]
        m["reg_hit_ratio"] = hits / dlt["reg_requests"] if dlt["reg_requests"] else 0
        for k in ("pool_hits", "pool_misses", "reg_wrs"):
            m[k] = dlt[k]
    res.setdefault((dev, rw, int(bs), int(qd)), []).append(m)
units = {"iops": "ops/s", "bw_mbps": "MB/s", "lat_p50_us": "us",
         "lat_p99_us": "us", "reg_hit_ratio": "ratio", "pool_hits": "count",
         "pool_misses": "count", "reg_wrs": "count", "iops_vs_nvme_rdma": "x"}
with open(out, "w") as f:
    for (dev, rw, bs, qd), ms in sorted(res.items()):
        med = {k: statistics.median(m[k] for m in ms) for k in ms[0]}
        other = res.get(("nvme_rdma", rw, bs, qd))
        if dev == "mrrc_blk" and other:
            nv = statistics.median(m["iops"] for m in other)
            med["iops_vs_nvme_rdma"] = med["iops"] / nv if nv else 0
        for k, v in med.items():
            line = {"bench": "blk", "metric": k, "value": round(v, 4),
                    "unit": units[k], "device": dev, "rw": rw,
                    "bs_bytes": bs, "iodepth": qd, "seconds": int(secs),
                    "rounds": int(rounds), "queues": int(queues),
                    "size_mib": int(mb), **run}
            f.write(json.dumps(line) + "\n")
            print(json.dumps(line))
EOF
	rm -rf "$work"
	nvme disconnect -n "$nqn" > /dev/null || true
	mrrc blk detach "$mdev"
	rmmod mrrc_blk nvme_rdma
}

case ${1:-} in
serve) serve ;;
client) shift; client "$@" ;;
*) echo "$usage" >&2; exit 2 ;;
esac
