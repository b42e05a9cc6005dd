#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The figures of Documentation/benchmarks.rst, drawn with gnuplot from the
# measured JSON lines in Documentation/data/ (the same data as the page's
# tables, tools/bench/bench-tables.py):
#
#   reg-<kernel>.png    register + release cycle against buffer size,
#                       per mode (ordinary, fast, cached, cached x64,
#                       overlap), log-log
#   dereg-<kernel>.png  one FLUSH of N regions against N flushes
#   frrwp-<kernel>.png  FRRWP against the traditional transaction
#   kv-get.png          GET throughput of memcached and mrrcd's paths
#                       against value size, 1 and 8 clients, 90 % GETs
#   blk.png             mrrc_blk against nvme-rdma: IOPS and p50 latency
#                       per fio job, on the newest kernel measured
#   redy-migration.png  a Redy cache's read and write latency over a
#                       migration, optimised and baseline
#   redy-slo.png        random SLOs against what the chosen configuration
#                       delivered
#   bm-fix.png          the buffer manager's FIX throughput and p99
#                       latency against the working set, per tier
#   bm-fix-mrrcd.png    the same for the host's 9p file alone and with
#                       mrrcd in front (TCP, one-sided GETs), and the
#                       Redy cache, from one later run (bm-mrrcd.jsonl)
#
# usage: plot-bench.sh [DATADIR [OUTDIR]]   (default: Documentation/data,
#                                            build/doc/figures)
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
data=${1:-$top/Documentation/data}
out=${2:-$top/build/doc/figures}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Columns for gnuplot: one file per (figure, series).
python3 - "$data" "$tmp" <<'PY'
import json, os, sys
data, tmp = sys.argv[1:]

def load(name):
    p = os.path.join(data, name + ".jsonl")
    return [json.loads(l) for l in open(p) if l.strip()] if os.path.exists(p) else []

def short(k):
    return ".".join(k.split(".")[:2])

def put(name, pts):
    with open(os.path.join(tmp, name), "w") as f:
        for p in sorted(pts):
            f.write(" ".join(str(x) for x in p) + "\n")

reg = load("reg")
kernels = sorted({short(r["kernel"]) for r in reg})
for k in kernels:
    kr = [r for r in reg if short(r["kernel"]) == k]
    for m, batch in (("ordinary", 1), ("fast", 1), ("cached", 1),
                     ("cached", 64), ("overlap", 1)):
        put(f"reg-{k}-{m}-{batch}",
            [(r["size_bytes"] / 1024, r["value"] / 1000) for r in kr
             if r["metric"] == "latency_median" and r["mode"] == m
             and r["batch"] == batch and r["regions"] == 1])
    for m in ("ordinary", "fast"):
        for what in ("batch", "singles"):
            put(f"dereg-{k}-{m}-{what}",
                [(r["regions"], r["value"] / 1000) for r in kr
                 if r["metric"] == f"dereg_{what}_median" and r["mode"] == m])
with open(os.path.join(tmp, "kernels"), "w") as f:
    f.write(" ".join(kernels))

fr = load("frrwp")
fkernels = sorted({short(r["kernel"]) for r in fr})
for k in fkernels:
    for op in ("write", "read"):
        for m in ("traditional", "frrwp", "frrwp_warm"):
            put(f"frrwp-{k}-{op}-{m}",
                [(r["pages"], r["value"]) for r in fr
                 if short(r["kernel"]) == k and r["metric"] == "latency_median"
                 and r["op"] == op and r["mode"] == m])
with open(os.path.join(tmp, "frrwp-kernels"), "w") as f:
    f.write(" ".join(fkernels))

kv = load("kv")
for nc in (1, 8):
    for system, path, meta in (("memcached", "tcp", "none"), ("mrrcd", "tcp", "none"),
                               ("mrrcd", "two_sided", "none"), ("mrrcd", "one_sided", "none"),
                               ("mrrcd", "one_sided", "faa"), ("mrrcd", "one_sided", "sample")):
        put(f"kv-{nc}-{system}-{path}-{meta}",
            [(r["value_bytes"], r["value"]) for r in kv
             if r["metric"] == "throughput_ops" and r["op"] == "get"
             and r["clients"] == nc and r["get_ratio"] == 0.9
             and r["system"] == system and r["path"] == path
             and r["metadata"] == meta])
with open(os.path.join(tmp, "kv"), "w") as f:
    f.write("1" if kv else "")

blk = load("blk")
# One kernel: the newest measured (both VMs run it).
bk = max((short(r["kernel"]) for r in blk),
         key=lambda k: [int(x) for x in k.split(".")], default=None)
blk = [r for r in blk if short(r["kernel"]) == bk]
def bv(metric, dev, rw, bs, qd):
    v = [r["value"] for r in blk if r["metric"] == metric and r["device"] == dev
         and r["rw"] == rw and r["bs_bytes"] == bs and r["iodepth"] == qd]
    return v[0] if v else "NaN"
with open(os.path.join(tmp, "blk"), "w") as f:
    for rw, bs, qd in (("randread", 4096, 1), ("randread", 4096, 32),
                       ("randwrite", 4096, 1), ("randwrite", 4096, 32),
                       ("read", 131072, 16), ("write", 131072, 16)):
        if not blk:
            break
        f.write(f'"{rw} {bs // 1024}K QD{qd}" ' + " ".join(
            str(bv(m, d, rw, bs, qd)) for m in ("iops", "lat_p50_us")
            for d in ("mrrc_blk", "nvme_rdma")) + "\n")

redy = load("redy")
for mode in ("optimized", "baseline"):
    for op in ("read", "write"):
        put(f"redy-mig-{mode}-{op}",
            [(r["t_ms"] / 1000, r["value"] / 1000) for r in redy
             if r["metric"] == "migration_latency_mean_ns"
             and r["mode"] == mode and r["op"] == op])
marks = [r for r in redy if r["metric"] == "migration_latency_mean_ns"
         and r["mode"] == "optimized"]
with open(os.path.join(tmp, "redy-mig"), "w") as f:
    if marks:
        f.write(f'{marks[0]["notice_ms"] / 1000} {marks[0]["migrated_ms"] / 1000}\n')
bm = load("bm")
for name, tier, fs in (("tmpfs", "file", "tmpfs"), ("9p", "file", "9p"),
                       ("rfile", "rfile", "tmpfs"), ("rfile_rdma", "rfile_rdma", "tmpfs"),
                       ("rfile_rdma_rw", "rfile_rdma_rw", "tmpfs"),
                       ("remote", "remote", "none")):
    for metric in ("throughput_ops", "fix_p99_us"):
        put(f"bm-{metric}-{name}",
            [(r["ws_factor"], r["value"]) for r in bm
             if r["metric"] == metric and r.get("tier") == tier
             and r.get("file") == fs and r.get("threads", 1) == 1])
bmk = load("bm-mrrcd")
for name, tier, fs in (("9p", "file", "9p"), ("mrrcd", "mrrcd", "9p"),
                       ("mrrcd_rdma", "mrrcd_rdma", "9p"), ("remote", "remote", "none")):
    for metric in ("throughput_ops", "fix_p99_us"):
        put(f"bmk-{metric}-{name}",
            [(r["ws_factor"], r["value"]) for r in bmk
             if r["metric"] == metric and r.get("tier") == tier
             and r.get("file") == fs and r.get("threads", 1) == 1])

slo = [r for r in redy if r["metric"] == "slo_met"]
for name, sel in (("plan", lambda r: r.get("plan_z", 0) > 0),
                  ("mean", lambda r: r.get("plan_z", 0) == 0)):
    put(f"redy-slo-lat-{name}", [(r["slo_latency_ns"] / 1000, r["latency_mean_ns"] / 1000)
                                 for r in slo if sel(r)])
    put(f"redy-slo-tput-{name}", [(r["slo_throughput_ops"], r["throughput_ops"])
                                  for r in slo if sel(r)])
PY

style='set terminal pngcairo size 800,480 noenhanced font ",10"
set grid
set key top left
set style data linespoints'

for k in $(cat "$tmp/kernels"); do
	d="$tmp/reg-$k"
	gnuplot <<GP
$style
set output "$out/reg-$k.png"
set title "Register + release of one buffer, Linux $k, rxe (median)"
set logscale xy
set xlabel "buffer size (KiB)"
set ylabel "µs per request"
plot "$d-ordinary-1" title "ordinary (ib_reg_user_mr)", \
     "$d-fast-1" title "fast (FRWR pool)", \
     "$d-overlap-1" title "overlap (half cached)", \
     "$d-cached-1" title "cached, 1 per ioctl", \
     "$d-cached-64" title "cached, 64 per ioctl"
GP
	d="$tmp/dereg-$k"
	gnuplot <<GP
$style
set output "$out/dereg-$k.png"
set title "Deregistering N one-page regions, Linux $k, rxe (median)"
set logscale xy
set xlabel "regions"
set ylabel "µs"
plot "$d-fast-singles" title "fast, N flushes", \
     "$d-fast-batch" title "fast, one batch (one LOCAL_INV chain)", \
     "$d-ordinary-singles" title "ordinary, N flushes", \
     "$d-ordinary-batch" title "ordinary, one batch"
GP
done

for k in $(cat "$tmp/frrwp-kernels"); do
	d="$tmp/frrwp-$k"
	gnuplot <<GP
$style
set output "$out/frrwp-$k.png"
set title "One transaction into an unregistered buffer, Linux $k, rxe (median)"
set logscale x 2
set xlabel "pages"
set ylabel "µs per transaction"
set yrange [0:*]
plot "$d-write-traditional" title "write, traditional (export, reply, revoke)", \
     "$d-write-frrwp" title "write, FRRWP", \
     "$d-write-frrwp_warm" title "write, FRRWP, nothing to register", \
     "$d-read-traditional" title "read, traditional" dt 2, \
     "$d-read-frrwp" title "read, FRRWP" dt 2
GP
done
if [ -s "$tmp/kv" ]; then
	gnuplot <<GP
$style
set output "$out/kv-get.png"
set terminal pngcairo size 1000,520 noenhanced font ",10"
set multiplot layout 1,2 title "GET throughput, 90 % GETs, Zipf keys, two VMs on rxe (BENCH=kv)"
set logscale x 2
set xlabel "value bytes"
set ylabel "GETs per second"
set yrange [0:*]
set key below
do for [nc in "1 8"] {
	set title nc." client(s)"
	d = "$tmp/kv-".nc
	plot d."-memcached-tcp-none" title "memcached, TCP" lw 2, \
	     d."-mrrcd-tcp-none" title "mrrcd, TCP", \
	     d."-mrrcd-two_sided-none" title "mrrcd, two-sided RDMA", \
	     d."-mrrcd-one_sided-none" title "mrrcd, one-sided" lw 2, \
	     d."-mrrcd-one_sided-faa" title "one-sided + FAA" dt 2, \
	     d."-mrrcd-one_sided-sample" title "one-sided + FAA 1 in 8" dt 3
}
unset multiplot
GP
fi
if [ -s "$tmp/blk" ]; then
	gnuplot <<GP
$style
set output "$out/blk.png"
set terminal pngcairo size 1000,480 noenhanced font ",10"
set multiplot layout 1,2 title "mrrc_blk against nvme-rdma, fio, two VMs on rxe (BENCH=blk)"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -30
set key top right
set yrange [0:*]
set title "IOPS (higher is better)"
plot "$tmp/blk" using 2:xtic(1) title "mrrc_blk", "" using 3 title "nvme-rdma"
set title "p50 latency, ms (lower is better)"
set logscale y
set yrange [*:*]
plot "$tmp/blk" using (\$4/1000):xtic(1) title "mrrc_blk", "" using (\$5/1000) title "nvme-rdma"
unset multiplot
GP
fi
if [ -s "$tmp/redy-mig" ]; then
	read -r notice moved < "$tmp/redy-mig"
	gnuplot <<GP
$style
set terminal pngcairo size 1000,480 noenhanced font ",10"
set output "$out/redy-migration.png"
set multiplot layout 1,2 title "A Redy cache's regions migrating (BENCH=redy): mean latency per 50 ms"
set style data lines
set xlabel "time (s); notice at $notice s"
set ylabel "µs"
set logscale y
set arrow 1 from $notice, graph 0 to $notice, graph 1 nohead dt 2
set title "reads"
plot "$tmp/redy-mig-optimized-read" title "unpaused reads" lw 2, \
     "$tmp/redy-mig-baseline-read" title "baseline (paused)"
set title "writes"
plot "$tmp/redy-mig-optimized-write" title "pause-on-migration writes" lw 2, \
     "$tmp/redy-mig-baseline-write" title "baseline (paused)"
unset multiplot
GP
fi
if [ -s "$tmp/redy-slo-lat-plan" ] || [ -s "$tmp/redy-slo-lat-mean" ]; then
	gnuplot <<GP
$style
set terminal pngcairo size 1000,480 noenhanced font ",10"
set output "$out/redy-slo.png"
set multiplot layout 1,2 title "Random SLOs and what the chosen configuration delivered (BENCH=redy)"
set style data points
set logscale xy
set key top left
set title "latency: met below the line"
set xlabel "SLO mean latency (µs)"
set ylabel "measured mean latency (µs)"
plot "$tmp/redy-slo-lat-plan" title "planned for the noise" pt 7, \
     "$tmp/redy-slo-lat-mean" title "planned on the means" pt 6, \
     x title "measured = SLO" with lines
set title "throughput: met above the line"
set xlabel "SLO throughput (requests/s)"
set ylabel "measured (requests/s)"
plot "$tmp/redy-slo-tput-plan" title "planned for the noise" pt 7, \
     "$tmp/redy-slo-tput-mean" title "planned on the means" pt 6, \
     x title "measured = SLO" with lines
unset multiplot
GP
fi
# the x axis of the frame pool's figures: the working set
wsaxis='set style data linespoints
set xlabel "working set (× the frames)"
set xtics ("2" 2, "4" 4, "8" 8)
set logscale x 2
set xrange [1.7:9.5]'
if [ -s "$tmp/bm-throughput_ops-remote" ]; then
	gnuplot <<GP
$style
set terminal pngcairo size 1000,420 noenhanced font ",10"
set output "$out/bm-fix.png"
set multiplot layout 1,2 title "The buffer manager's frame pool: Zipf 0.99, 10 % writes, 256 frames (BENCH=bm)"
$wsaxis
set key bottom left
set title "FIX + UNFIX per second"
set ylabel "ops/s"
set logscale y
set yrange [10:2e6]
plot "$tmp/bm-throughput_ops-tmpfs" title "file in the guest's memory (tmpfs)" pt 6, \
     "$tmp/bm-throughput_ops-9p" title "file on the host (virtio-9p)" pt 4, \
     "$tmp/bm-throughput_ops-rfile" title "file on another node (bm fserve, rxe)" pt 2, \
     "$tmp/bm-throughput_ops-rfile_rdma" title "the same, read with RDMA READ" pt 3, \
     "$tmp/bm-throughput_ops-rfile_rdma_rw" title "the same, RDMA READ and WRITE" pt 8, \
     "$tmp/bm-throughput_ops-remote" title "Redy cache (remote memory, rxe)" pt 7 lw 2
set title "p99 FIX latency"
set key top left
set ylabel "µs"
set yrange [10:1e6]
plot "$tmp/bm-fix_p99_us-tmpfs" title "file in the guest's memory (tmpfs)" pt 6, \
     "$tmp/bm-fix_p99_us-9p" title "file on the host (virtio-9p)" pt 4, \
     "$tmp/bm-fix_p99_us-rfile" title "file on another node (bm fserve, rxe)" pt 2, \
     "$tmp/bm-fix_p99_us-rfile_rdma" title "the same, read with RDMA READ" pt 3, \
     "$tmp/bm-fix_p99_us-rfile_rdma_rw" title "the same, RDMA READ and WRITE" pt 8, \
     "$tmp/bm-fix_p99_us-remote" title "Redy cache (remote memory, rxe)" pt 7 lw 2
unset multiplot
GP
fi
if [ -s "$tmp/bmk-throughput_ops-mrrcd" ]; then
	gnuplot <<GP
$style
set terminal pngcairo size 1000,420 noenhanced font ",10"
set output "$out/bm-fix-mrrcd.png"
set multiplot layout 1,2 title "The frame pool over the host's 9p file, with and without mrrcd in front (BENCH=bm)"
$wsaxis
set key top right
set title "FIX + UNFIX per second"
set ylabel "ops/s"
set yrange [0:28000]
plot "$tmp/bmk-throughput_ops-9p" title "9p file alone" pt 4, \
     "$tmp/bmk-throughput_ops-mrrcd" title "9p file, mrrcd in front (TCP)" pt 12, \
     "$tmp/bmk-throughput_ops-mrrcd_rdma" title "9p file, mrrcd in front (rxe, one-sided GETs)" pt 13, \
     "$tmp/bmk-throughput_ops-remote" title "Redy cache (rxe)" pt 7
set title "p99 FIX latency"
set key top right
set ylabel "µs"
set logscale y
set yrange [100:1e6]
plot "$tmp/bmk-fix_p99_us-9p" title "9p file alone" pt 4, \
     "$tmp/bmk-fix_p99_us-mrrcd" title "9p file, mrrcd in front (TCP)" pt 12, \
     "$tmp/bmk-fix_p99_us-mrrcd_rdma" title "9p file, mrrcd in front (rxe, one-sided GETs)" pt 13, \
     "$tmp/bmk-fix_p99_us-remote" title "Redy cache (rxe)" pt 7
unset multiplot
GP
fi
ls "$out"
