#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The tables of Documentation/benchmarks.rst, from the JSON lines that
`make bench` writes (build/bench/<name>.jsonl), kept as measured in
Documentation/data/<name>.jsonl (several runs, e.g. both kernels, may be
concatenated into one file).

A table in the page is the text between two comments:

    .. generated: reg kernel=6.12
    ...
    .. end generated

`NAME key=value ...` names a table below and its parameters.  Each
generated block ends with where its figures were measured (kernel,
accel, device, commit, date: the keys of the run in every line).

usage: bench-tables.py [--check] [--data DIR] [PAGE.rst]
  rewrites PAGE (default Documentation/benchmarks.rst) in place; with
  --check, changes nothing and exits 1 if PAGE is not what the data give.
"""
import argparse
import json
import os
import re
import statistics
import sys

TOP = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
SIZES = [4096, 16384, 65536, 131072, 262144, 1048576]
BEGIN = re.compile(r"^\.\. generated: (\S+)((?: \S+=\S+)*)\s*$")
END = ".. end generated"


class DataError(Exception):
    pass


def load(datadir, name):
    path = os.path.join(datadir, name + ".jsonl")
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except OSError as e:
        raise DataError(f"{path}: {e.strerror}") from e
    except ValueError as e:
        raise DataError(f"{path}: not JSON lines: {e}") from e


def short_kernel(k):
    """6.12.95+deb12-amd64 -> 6.12"""
    return ".".join(k.split(".")[:2])


def of_kernel(rows, kernel):
    if kernel is None:
        return rows
    sel = [r for r in rows if short_kernel(r.get("kernel", "")) == kernel]
    if not sel:
        raise DataError(f"no lines for kernel {kernel}")
    return sel


def pick(rows, **keys):
    """The value of the one line that has every key=value, else None."""
    hits = [r for r in rows if all(r.get(k) == v for k, v in keys.items())]
    if len(hits) > 1:
        raise DataError(f"{len(hits)} lines match {keys}")
    return hits[0]["value"] if hits else None


def pick_runs(rows, **keys):
    """The values of the lines that have every key=value, one per run (key
    "rep"; a file without it has one run)."""
    hits = [r for r in rows if all(r.get(k) == v for k, v in keys.items())]
    if len({r.get("rep") for r in hits}) != len(hits):
        raise DataError(f"two lines of one run match {keys}")
    runs = {r.get("rep") for r in rows}
    if hits and len(hits) != len(runs):
        raise DataError(f"{len(hits)} of {len(runs)} runs have {keys}")
    return [r["value"] for r in hits]


def pick_median(rows, **keys):
    """The median over the runs of pick_runs(), else None."""
    v = pick_runs(rows, **keys)
    return statistics.median(v) if v else None


def pick_chain(rows, chain, **keys):
    """pick() of a line with "chain": @chain; a line without the key (a run
    before chain_reg existed) counts as "on", the module's only way then."""
    v = pick(rows, chain=chain, **keys)
    if v is None and chain == "on":
        v = pick([r for r in rows if "chain" not in r], **keys)
    return v


def table(hdr, rows):
    w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(hdr)]
    line = "  ".join("=" * x for x in w)
    out = [line, "  ".join(h.ljust(x) for h, x in zip(hdr, w)).rstrip(), line]
    out += ["  ".join(c.ljust(x) for c, x in zip(r, w)).rstrip() for r in rows]
    return out + [line]


def where(rows):
    """Where the lines were measured, one sentence."""
    def keys(k):
        return sorted({str(r.get(k, "unknown")) for r in rows})
    dates = sorted({str(r.get("date", "unknown"))[:10] for r in rows})
    return ["", "*Measured:* kernel {}, accel {}, device {}, commit {}, {}.".format(
        ", ".join(keys("kernel")), ", ".join(keys("accel")),
        ", ".join(keys("device")), ", ".join(keys("commit")),
        ", ".join(dates))]


def us(ns):
    return "—" if ns is None else f"{ns / 1000:.1f}" if ns < 100e3 else f"{ns / 1000:.0f}"


def ratio(a, b):
    return "—" if a is None or b is None or not b else f"{a / b:.2f}"


def size_name(b):
    return f"{b // 1048576} MiB" if b >= 1048576 else f"{b // 1024} KiB"


def grouped(n):
    return f"{n:,.0f}".replace(",", " ")


def t_reg(datadir, kernel=None):
    rows = of_kernel(load(datadir, "reg"), kernel)
    body = []
    for s in SIZES:
        med = {m: pick(rows, metric="latency_median", mode=m, size_bytes=s,
                       regions=1, batch=1)
               for m in ("ordinary", "fast", "cached", "overlap")}
        b64 = pick(rows, metric="latency_median", mode="cached", size_bytes=s,
                   batch=64)
        if med["ordinary"] is None:
            continue
        body.append([size_name(s), us(med["ordinary"]), us(med["fast"]),
                     f'{med["cached"] / 1000:.2f}', f"{b64 / 1000:.2f}",
                     us(med["overlap"]), ratio(med["fast"], med["ordinary"]),
                     f'{ratio(med["ordinary"], med["cached"])} '
                     f'({ratio(med["ordinary"], b64)})'])
    if not body:
        raise DataError("reg: no latency_median lines")
    return table(["size", "ordinary", "fast", "cached", "cached ×64",
                  "overlap", "fast/ord.", "ord./cached (×64)"], body) + where(rows)


def t_hits(datadir):
    rows = load(datadir, "reg")
    body = []
    for k in sorted({short_kernel(r["kernel"]) for r in rows},
                    key=lambda v: [int(x) for x in v.split(".")]):
        kr = of_kernel(rows, k)
        m = [pick(kr, metric="hit_latency_median", regions=n)
             for n in (10, 1000, 100000)]
        if None in m:
            continue
        body.append([k, us(m[0]), us(m[1]), f"{us(m[2])} ({m[2] / m[0]:.2f})"])
    return table(["kernel", "10", "1 000", "100 000 (ratio to 10)"], body) + where(rows)


def t_dereg(datadir, kernel=None):
    rows = of_kernel(load(datadir, "reg"), kernel)
    body = []
    for mode in ("ordinary", "fast"):
        for n in (1, 4, 16, 64, 256):
            b = pick(rows, metric="dereg_batch_median", mode=mode, regions=n)
            s = pick(rows, metric="dereg_singles_median", mode=mode, regions=n)
            if b is None or s is None:
                continue
            body.append([mode, str(n), us(b), us(s), f"{s / b:.1f}"])
    return table(["mode", "regions", "one batch (µs)", "N flushes (µs)",
                  "speedup"], body) + where(rows)


def t_evict(datadir):
    rows = [r for r in load(datadir, "reg") if r.get("mode") == "fast_evict"]
    body = []
    for k in sorted({short_kernel(r["kernel"]) for r in rows},
                    key=lambda v: [int(x) for x in v.split(".")]):
        kr = of_kernel(rows, k)
        for pol in ("lru", "mre"):
            v = [pick(kr, metric=m, policy=pol, inval=i)
                 for m, i in (("latency_median", "sync"), ("latency_median", "async"),
                              ("latency_mean", "sync"), ("latency_mean", "async"))]
            if None in v:
                continue
            body.append([k, pol.upper()] + [us(x) for x in v]
                        + [ratio(v[0], v[1])])
    return table(["kernel", "policy", "sync median", "async median",
                  "sync mean", "async mean", "sync/async"], body) + where(rows)


def t_post(datadir, kernel=None, file="reg"):
    """Registration inside a POST: what a hit and a miss add per operation
    to the held POSTs measured beside them (from DATA/<file>.jsonl)."""
    rows = of_kernel(load(datadir, file), kernel)
    body = []
    ordinary = pick(rows, metric="latency_median", mode="ordinary",
                    size_bytes=4096, batch=1, regions=1)

    def frac(add):
        if add is None:
            return "—"
        f = add / ordinary
        return f"1/{1 / f:.0f}" if 0 < f < 0.5 else f"{f:.2f}"

    waited = any(r.get("chain") == "off" for r in rows)
    for b in (1, 16, 64):
        def v(metric, mode):
            return pick(rows, metric=metric, mode=mode, size_bytes=4096, batch=b)

        def m(metric, mode, chain="on"):
            return pick_chain(rows, chain, metric=metric, mode=mode,
                              size_bytes=4096, batch=b)
        held = v("latency_median", "post_held")
        if held is None or not ordinary:
            continue
        hit = v("added_latency_median", "hit_in_post")
        mheld = m("latency_median", "post_held_beside_miss")
        miss = m("added_latency_median", "miss_in_post")
        row = [str(b), us(held), us(hit), frac(hit), us(mheld),
               us(miss), frac(miss)]
        if waited:
            wmiss = m("added_latency_median", "miss_in_post", "off")
            row += [us(wmiss), frac(wmiss)]
        body.append(row)
    if not body:
        raise DataError("reg: no post_held lines")
    hdr = ["batch", "held / op", "hit adds", "of ordinary",
           "held / op", "miss adds", "of ordinary"]
    if waited:
        hdr += ["waited miss adds", "of ordinary"]
    return table(hdr, body) + [
        "", f"(An ordinary 4 KiB register + release cycle: {us(ordinary)} µs "
        "in this run.)"] + where(rows)


def t_cold_write(datadir, kernel=None, file="reg"):
    """A buffer made usable and written once: miss in the POST vs ordinary."""
    rows = of_kernel(load(datadir, file), kernel)
    body = []
    waited = any(r.get("chain") == "off" for r in rows)
    for s in SIZES:
        m = pick_chain(rows, "on", metric="latency_median", mode="miss_write",
                       size_bytes=s)
        o = pick(rows, metric="latency_median", mode="ordinary_write", size_bytes=s)
        if m is None or o is None:
            continue
        row = [size_name(s), us(o), us(m), ratio(m, o)]
        if waited:
            w = pick(rows, chain="off", metric="latency_median",
                     mode="miss_write", size_bytes=s)
            row += [us(w), ratio(w, o)]
        body.append(row)
    if not body:
        raise DataError("reg: no miss_write lines")
    hdr = ["size", "ordinary reg + write (µs)", "miss in POST (µs)",
           "miss/ordinary"]
    if waited:
        hdr += ["waited miss (µs)", "waited/ordinary"]
    return table(hdr, body) + where(rows)


def t_ops_chain(datadir, kernel=None, file="ops-chain"):
    """SEND (a RECV exposure per message) and WRITE through the module with
    chain_reg on and off, in one run (DATA/<file>.jsonl)."""
    rows = of_kernel(load(datadir, file), kernel)
    body = []
    for op in ("send", "write"):
        for s in sorted({r["size_bytes"] for r in rows if r.get("op") == op}):
            def v(metric, batch, chain):
                return pick(rows, path="mrrc", op=op, size_bytes=s,
                            metric=metric, batch=batch, chain=chain)
            cells = [op, grouped(s) if s < 1024 else size_name(s)]
            lon, loff = v("latency", 1, "on"), v("latency", 1, "off")
            cells += ["—" if lon is None else f"{lon:.0f}",
                      "—" if loff is None else f"{loff:.0f}"]
            for b in (1, 16):
                on, off = v("throughput", b, "on"), v("throughput", b, "off")
                cells += ["—" if on is None else grouped(on),
                          "—" if off is None else grouped(off), ratio(on, off)]
            body.append(cells)
    if not body:
        raise DataError(f"{file}: no lines")
    return table(["op", "size", "lat. on (µs)", "lat. off", "b1 on (ops/s)",
                  "b1 off", "on/off", "b16 on", "b16 off", "on/off"],
                 body) + where(rows)


def t_ops_conn(datadir, kernel=None, file="ops-conn"):
    """WRITE, READ and SEND through the module on shared and on isolated
    connections (MRRC_CONN_ISOLATED), and the time to make and close a
    connected pair, in one run (DATA/<file>.jsonl)."""
    rows = of_kernel(load(datadir, file), kernel)
    body = []

    def pair(metric):
        sh = pick(rows, metric=metric, conn="shared")
        iso = pick(rows, metric=metric, conn="isolated")
        return ["—" if sh is None else f"{sh:.1f} ms",
                "—" if iso is None else f"{iso:.1f} ms", ratio(iso, sh)]
    body.append(["pair", "setup"] + pair("pair_setup") + ["", "", ""])
    body.append(["pair", "close"] + pair("pair_close") + ["", "", ""])
    for op in ("write", "read", "send"):
        for s in sorted({r["size_bytes"] for r in rows if r.get("op") == op}):
            def v(metric, batch, conn):
                return pick(rows, path="mrrc", op=op, size_bytes=s,
                            metric=metric, batch=batch, conn=conn)
            ls, li = v("latency", 1, "shared"), v("latency", 1, "isolated")
            ts, ti = v("throughput", 16, "shared"), v("throughput", 16, "isolated")
            body.append([op, grouped(s) if s < 1024 else size_name(s),
                         "—" if ls is None else f"{ls:.0f} µs",
                         "—" if li is None else f"{li:.0f} µs", ratio(li, ls),
                         "—" if ts is None else grouped(ts),
                         "—" if ti is None else grouped(ti), ratio(ti, ts)])
    if len(body) == 2:
        raise DataError(f"{file}: no operations")
    return table(["op", "size", "lat. shared", "lat. isolated", "iso/sh",
                  "b16 shared (ops/s)", "b16 isolated", "iso/sh"],
                 body) + where(rows)


def t_lockless(datadir, file="lockless"):
    """Hits with module parameter lockless_hit off and on, two rounds each
    in one run (DATA/<file>.jsonl, bench_reg lockless): per request, and
    as a fraction of the ordinary 4 KiB register + release cycle measured
    in the same run."""
    rows = load(datadir, file)
    ord4k = pick(rows, mode="ordinary", metric="latency_median")
    if not ord4k:
        raise DataError(f"{file}: no ordinary cycle")
    body = []

    def cell(v):
        return "—" if v is None else f"{v:.0f} ns (1/{ord4k / v:.0f})" if v > 0 else f"{v:.0f} ns"

    def both(on, **keys):
        vals = [pick(rows, lockless=on, round=r, **keys) for r in (1, 2)]
        return None if None in vals else vals

    cases = [("REG, 1 per ioctl, 10 regions", "cached", "hit_latency_median", 1, 10),
             ("REG, 1 per ioctl, 1 000 regions", "cached", "hit_latency_median", 1, 1000),
             ("REG, 64 per ioctl", "cached", "latency_median", 64, 1)]
    cases += [(f"added in a POST of {b}", "hit_in_post", "added_latency_median", b, 1)
              for b in (1, 16, 64)]
    for name, mode, metric, batch, regions in cases:
        k = dict(mode=mode, metric=metric, batch=batch, regions=regions)
        off, on = both("off", **k), both("on", **k)
        if off is None or on is None:
            raise DataError(f"{file}: no lines for {name}")
        mo, mn = sum(off) / 2, sum(on) / 2
        # A negative "added" is noise: no ratio of it.
        body.append([name, " / ".join(cell(v) for v in off),
                     " / ".join(cell(v) for v in on),
                     ratio(mn, mo) if min(off + on) > 0 else "—"])
    # Threads sharing the context, 64 per ioctl (runs after 02a5a6d).
    for t in sorted({r["threads"] for r in rows if "threads" in r}):
        k = dict(metric="hits_per_second", threads=t)
        off, on = both("off", **k), both("on", **k)
        if off is None or on is None:
            raise DataError(f"{file}: no lines for {t} threads")
        body.append([f"REG, 64 per ioctl, {t} thread{'s' if t > 1 else ''} (hits/s)",
                     " / ".join(grouped(v) for v in off),
                     " / ".join(grouped(v) for v in on),
                     ratio(sum(on), sum(off))])
    return table(["hit", "off (rounds 1 / 2)", "on (rounds 1 / 2)", "on/off"],
                 body) + where(rows)


def t_ops(datadir):
    # Isolated connections have a table of their own (ops_conn).
    rows = [r for r in load(datadir, "ops")
            if r.get("conn", "shared") == "shared"]
    body = []
    for op in ("write", "read", "send"):
        for s in sorted({r["size_bytes"] for r in rows if r["op"] == op}):
            def v(path, metric, batch):
                return pick(rows, path=path, op=op, size_bytes=s,
                            metric=metric, batch=batch)
            lm, lv = v("mrrc", "latency", 1), v("verbs", "latency", 1)
            cells = [op, grouped(s) if s < 1024 else size_name(s),
                     "—" if lm is None else f"{lm:.0f}",
                     "—" if lv is None else f"{lv:.0f}"]
            for b in (1, 16):
                m, p = v("mrrc", "throughput", b), v("verbs", "throughput", b)
                cells += ["—" if m is None else grouped(m),
                          "—" if p is None else grouped(p), ratio(m, p)]
            body.append(cells)
    return table(["op", "size", "lat. mrrc", "lat. pt", "b1 mrrc", "b1 verbs",
                  "ratio", "b16 mrrc", "b16 verbs", "ratio"], body) + where(rows)


def t_frrwp(datadir, kernel=None):
    rows = of_kernel(load(datadir, "frrwp"), kernel)
    body = []
    for p in sorted({r["pages"] for r in rows}):
        cells = [str(p)]
        for op in ("write", "read"):
            t, f, w = (pick(rows, metric="latency_median", op=op, pages=p, mode=m)
                       for m in ("traditional", "frrwp", "frrwp_warm"))
            cut = "—" if t is None or f is None else f"{(1 - f / t) * 100:.0f} %"
            cells += [grouped(x) if x is not None else "—" for x in (t, f, w)] + [cut]
        body.append(cells)
    return table(["pages", "write trad.", "frrwp", "warm", "cut", "read trad.",
                  "frrwp", "warm", "cut"], body) + where(rows)


def t_peers(datadir):
    rows = load(datadir, "peers")
    body = []
    for system in ("mrrc", "ucx"):
        for cache in ("on", "off"):
            for phase in ("steady", "churn"):
                def v(metric, size):
                    return pick_median(rows, metric=metric, system=system,
                                       cache=cache, phase=phase,
                                       size_bytes=size)
                cells = [system, cache, phase]
                for size in (4096, 65536, 1048576):
                    t, p50 = v("throughput_mbps", size), v("latency_p50_ns", size)
                    cells.append("—" if t is None else
                                 f"{t:.1f} ({p50 / 1000:.0f})")
                # every run's stale hits; the most pages any run pinned
                def worst(metric, size, f):
                    x = pick_runs(rows, metric=metric, system=system,
                                  cache=cache, phase=phase, size_bytes=size)
                    return f(x) if x else None
                stale = [worst("stale_hits", s, sum) for s in (4096, 65536, 1048576)]
                pinned = [worst("pinned_pages", s, max) for s in (4096, 65536, 1048576)]
                if None in stale:
                    continue
                cells.append(f"{sum(stale):.0f}")
                cells.append(" / ".join(f"{x:.0f}" for x in pinned))
                body.append(cells)
    return table(["system", "cache", "phase", "4 KiB MB/s (p50 µs)",
                  "64 KiB", "1 MiB", "stale", "pinned pages"], body) + where(rows)


KV_CONFIGS = [("memcached", "tcp", "none"), ("mrrcd", "tcp", "none"),
              ("mrrcd", "two_sided", "none"), ("mrrcd", "one_sided", "none"),
              ("mrrcd", "one_sided", "faa"), ("mrrcd", "one_sided", "sample")]


def t_kv(datadir, clients="1", get_ratio="0.9", op="get", kernel=None):
    """mrrcd against memcached in two VMs (BENCH=kv): for one client
    count, GET share and operation, per configuration and value size the
    throughput in ops/s with mrrcd's over memcached's (×mc), and the p50
    and p99 latencies in µs."""
    rows = of_kernel(load(datadir, "kv"), kernel)
    try:
        nc, ratio = int(clients), float(get_ratio)
    except ValueError as e:
        raise DataError(f"kv: clients={clients} get_ratio={get_ratio}") from e
    if op not in ("get", "set"):
        raise DataError(f"kv: op={op}: get or set")
    rows = [r for r in rows if r.get("clients") == nc
            and r.get("get_ratio") == ratio and r.get("op") == op]
    sizes = sorted({r["value_bytes"] for r in rows})
    body = []
    for system, path, meta in KV_CONFIGS:
        def v(metric, size):
            return pick(rows, metric=metric, system=system, path=path,
                        metadata=meta, value_bytes=size)
        cells = [system, path, meta]
        for size in sizes:
            t, x = v("throughput_ops", size), v("throughput_vs_memcached", size)
            p50, p99 = v("latency_p50_ns", size), v("latency_p99_ns", size)
            cells.append("—" if t is None else grouped(t))
            cells.append("—" if x is None else f"{x:.2f}")
            cells.append("—" if p50 is None else
                         f"{p50 / 1000:.0f} / {p99 / 1000:.0f}")
        if set(cells[3:]) != {"—"}:
            body.append(cells)
    if not body:
        raise DataError(f"kv: no lines for clients={nc} get_ratio={ratio} op={op}")
    names = [grouped(b) + " B" if b < 1024 else size_name(b) for b in sizes]
    hdr = [h for n in names for h in (f"{n} ops/s", "×mc", "p50 / p99 µs")]
    return table(["system", "path", "metadata"] + hdr, body) + where(rows)


BLK_JOBS = [("randread", 4096, 1), ("randread", 4096, 32),
            ("randwrite", 4096, 1), ("randwrite", 4096, 32),
            ("read", 131072, 16), ("write", 131072, 16)]


def t_blk(datadir, kernel=None):
    """mrrc_blk against nvme-rdma in two VMs (BENCH=blk): per fio job the
    IOPS of both and mrrc_blk's over nvme-rdma's (×nvme), the bandwidth,
    the p50 / p99 latencies in µs, and mrrc_blk's registration-cache hit
    ratio over the job's rounds."""
    rows = of_kernel(load(datadir, "blk"), kernel)
    body = []
    for rw, bs, qd in BLK_JOBS:
        def v(metric, dev):
            return pick(rows, metric=metric, device=dev, rw=rw,
                        bs_bytes=bs, iodepth=qd)
        m, n = v("iops", "mrrc_blk"), v("iops", "nvme_rdma")
        if m is None and n is None:
            continue
        cells = [rw, size_name(bs), str(qd)]
        for dev in ("mrrc_blk", "nvme_rdma"):
            i, bw = v("iops", dev), v("bw_mbps", dev)
            p50, p99 = v("lat_p50_us", dev), v("lat_p99_us", dev)
            cells.append("—" if i is None else grouped(i))
            cells.append("—" if bw is None else f"{bw:.1f}")
            cells.append("—" if p50 is None else f"{p50:.0f} / {p99:.0f}")
        x, h = v("iops_vs_nvme_rdma", "mrrc_blk"), v("reg_hit_ratio", "mrrc_blk")
        cells.append("—" if x is None else f"{x:.2f}")
        cells.append("—" if h is None else f"{100 * h:.2f} %")
        body.append(cells)
    if not body:
        raise DataError("blk: no lines")
    return table(["rw", "bs", "QD", "mrrc_blk IOPS", "MB/s", "p50 / p99 µs",
                  "nvme-rdma IOPS", "MB/s", "p50 / p99 µs", "×nvme",
                  "cache hits"], body) + where(rows)


def t_redy_slo(datadir):
    """Redy's SLO accuracy (BENCH=redy): the random SLOs met by the
    configuration the search picked, by latency, by throughput, and the
    client and server threads it chose, per planning (the model planning
    for z standard deviations of run-to-run noise, and on the means, z =
    0, in the same run); the mean search time on the measured model and
    on the paper-size synthetic one per algorithm, with the leaves each
    read."""
    rows = load(datadir, "redy")
    zs = sorted({r["plan_z"] for r in rows if r["metric"] == "slo_met_fraction"},
                reverse=True)
    body = []
    for metric, name in (("slo_met_fraction", "SLOs met (both)"),
                         ("slo_latency_met_fraction", "latency SLO met"),
                         ("slo_throughput_met_fraction", "throughput SLO met"),
                         ("slo_threads_mean", "threads chosen (s + c), mean")):
        cells = [name]
        for z in zs:
            v = pick(rows, metric=metric, plan_z=z)
            n = [r["slos"] for r in rows if r["metric"] == metric
                 and r["plan_z"] == z]
            cells.append("—" if v is None else f"{v:.2f}" if metric == "slo_threads_mean"
                         else f"{100 * v:.0f} % of {n[0]}")
        body.append(cells)
    cells = ["search, measured model"]
    for z in zs:
        v = pick(rows, metric="search_ms_mean", model="measured", plan_z=z)
        lv = [r["leaves"] for r in rows if r["metric"] == "search_ms_mean"
              and r.get("model") == "measured" and r["plan_z"] == z]
        cells.append("—" if v is None else f"{v * 1000:.1f} µs ({lv[0]} leaves)")
    body.append(cells)
    for algo in ("bounded", "fig10", "exhaustive"):
        hit = [r for r in rows if r["metric"] == "search_ms_mean"
               and r.get("model") == "synthetic" and r.get("algorithm") == algo]
        if hit:
            r = hit[0]
            body.append([f"search, {algo}, synthetic ({grouped(r['leaves'])} leaves)",
                         f"{r['value']:.3f} ms, {grouped(r['leaves_read_mean'])} leaves read"]
                        + [""] * (len(zs) - 1))
    if not rows or not zs:
        raise DataError("redy: no lines")
    return table([""] + [f"planned for {z:g} σ" if z else "planned on the means"
                         for z in zs], body) + where(rows)


def t_redy_model(datadir):
    """The measured leaves of Redy's model: throughput and mean latency
    per configuration (s server threads, c clients, b per batch, q in
    flight)."""
    rows = [r for r in load(datadir, "redy") if r["metric"] == "model_throughput_ops"]
    body = []
    for r in rows:
        lat = pick(load(datadir, "redy"), metric="model_latency_ns",
                   server_threads=r["server_threads"],
                   client_threads=r["client_threads"], batch=r["batch"],
                   queue_depth=r["queue_depth"])
        body.append([str(r["server_threads"]), str(r["client_threads"]),
                     str(r["batch"]), str(r["queue_depth"]), grouped(r["value"]),
                     us(lat)])
    if not body:
        raise DataError("redy: no model lines")
    return table(["s", "c", "b", "q", "requests/s", "mean µs"], body) + where(rows)


def t_redy_migration(datadir):
    """A cache's regions migrating (BENCH=redy): per mode and operation
    the mean latency before the notice, while regions move and after;
    the worst single request while they move; and how long it took."""
    rows = [r for r in load(datadir, "redy")
            if r["metric"] == "migration_latency_mean_ns"]
    body = []
    for mode in ("optimized", "baseline"):
        for op in ("read", "write"):
            sel = [r for r in rows if r["mode"] == mode and r["op"] == op]
            if not sel:
                continue
            t0, t1 = sel[0]["notice_ms"], sel[0]["migrated_ms"]
            def mean(lo, hi):
                x = [r for r in sel if lo <= r["t_ms"] < hi]
                n = sum(r["ops"] for r in x)
                return sum(r["value"] * r["ops"] for r in x) / n if n else None
            during = [r for r in sel if t0 <= r["t_ms"] < t1]
            worst = max((r["latency_max_ns"] for r in during), default=None)
            body.append([mode, op, us(mean(0, t0)), us(mean(t0, t1)),
                         us(mean(t1, 1e12)), us(worst),
                         f"{(t1 - t0) / 1000:.2f} s, {sel[0]['regions']} regions"])
    if not body:
        raise DataError("redy: no migration lines")
    return table(["mode", "op", "before µs", "moving µs", "after µs",
                  "worst µs", "migration"], body) + where(rows)


def t_bm_fix(datadir):
    """The buffer manager's frame pool per working set (BENCH=bm, `bm
    fix`): FIX + UNFIX per second and the p50 / p99 FIX latency with the
    pages in a file in the guest's memory, a file on the host through
    virtio-9p, a file on another node through its file server (bm
    fserve: FReadF and FPrintF, two-sided) and a Redy cache (one-sided);
    the remote tiers' throughput over the 9p file's."""
    rows = [r for r in load(datadir, "bm") if "tier" in r and r.get("threads", 1) == 1]
    tiers = (("file", "tmpfs"), ("file", "9p"), ("rfile", "tmpfs"),
             ("rfile_rdma", "tmpfs"), ("rfile_rdma_rw", "tmpfs"), ("remote", "none"))
    body = []
    for ws in sorted({r["ws_factor"] for r in rows}):
        def v(metric, tier, fs):
            return pick(rows, metric=metric, tier=tier, file=fs, ws_factor=ws)
        pages = next(r["pages"] for r in rows if r["ws_factor"] == ws)
        hit = v("hit_ratio", "remote", "none")
        cells = [f"{ws}× ({pages})", "—" if hit is None else f"{100 * hit:.0f} %"]
        for t in tiers:
            ops, p99 = (v(m, *t) for m in ("throughput_ops", "fix_p99_us"))
            cells.append("—" if ops is None else grouped(ops))
            cells.append("—" if p99 is None else f"{p99:.0f}")
        nine = v("throughput_ops", "file", "9p")
        cells.append(ratio(v("throughput_ops", "rfile", "tmpfs"), nine))
        cells.append(ratio(v("throughput_ops", "rfile_rdma", "tmpfs"), nine))
        cells.append(ratio(v("throughput_ops", "rfile_rdma_rw", "tmpfs"), nine))
        cells.append(ratio(v("throughput_ops", "remote", "none"), nine))
        body.append(cells)
    if not body:
        raise DataError("bm: no `bm fix` lines")
    return table(["working set (pages)", "hits", "tmpfs file ops/s", "p99 µs",
                  "9p file ops/s", "p99 µs", "fserve ops/s", "p99 µs",
                  "fserve READ ops/s", "p99 µs", "fserve READ+WRITE ops/s", "p99 µs",
                  "Redy ops/s", "p99 µs", "fserve ÷ 9p", "fserve READ ÷ 9p",
                  "fserve R+W ÷ 9p", "Redy ÷ 9p"],
                 body) + where(rows)


def t_bm_fix_mrrcd(datadir):
    """The frame pool over the host's 9p file with mrrcd in front of it
    (BENCH=bm, `bm fix -t mrrcd|mrrcd_rdma`), against the 9p file alone
    and the Redy cache in the same run (data/bm-mrrcd.jsonl, the `bm fix`
    lines of a later run than bm.jsonl's): FIX + UNFIX per second, p99
    FIX, and the share of the pool's reads the daemon served."""
    rows = [r for r in load(datadir, "bm-mrrcd") if "tier" in r and r.get("threads", 1) == 1]
    body = []
    for ws in sorted({r["ws_factor"] for r in rows if r["tier"].startswith("mrrcd")}):
        def v(metric, tier, fs):
            return pick(rows, metric=metric, tier=tier, file=fs, ws_factor=ws)
        pages = next(r["pages"] for r in rows if r["ws_factor"] == ws)
        cells = [f"{ws}× ({pages})"]
        for t in (("file", "9p"), ("mrrcd", "9p"), ("mrrcd_rdma", "9p"),
                  ("remote", "none")):
            ops, p99 = (v(m, *t) for m in ("throughput_ops", "fix_p99_us"))
            cells.append("—" if ops is None else grouped(ops))
            cells.append("—" if p99 is None else f"{p99:.0f}")
            if t[0].startswith("mrrcd"):
                share = v("tier_hit_ratio", *t)
                cells.append("—" if share is None else f"{100 * share:.0f} %")
        nine = v("throughput_ops", "file", "9p")
        for t in (("mrrcd", "9p"), ("mrrcd_rdma", "9p"), ("remote", "none")):
            cells.append(ratio(v("throughput_ops", *t), nine))
        body.append(cells)
    if not body:
        raise DataError("bm: no `bm fix -t mrrcd` lines")
    return table(["working set (pages)", "9p file ops/s", "p99 µs",
                  "+ mrrcd TCP ops/s", "p99 µs", "from mrrcd",
                  "+ mrrcd one-sided ops/s", "p99 µs", "from mrrcd",
                  "Redy ops/s", "p99 µs", "TCP ÷ 9p", "one-sided ÷ 9p",
                  "Redy ÷ 9p"], body) + where(rows)


def t_bm_fix_threads(datadir):
    """The frame pool shared by several threads (`bm fix -j`): FIX + UNFIX
    per second and p99 FIX latency per tier at one working set, one
    thread against several, measured in the same run."""
    rows = [r for r in load(datadir, "bm") if "tier" in r and "threads" in r]
    many = sorted({r["threads"] for r in rows} - {1})
    body = []
    for ws in sorted({r["ws_factor"] for r in rows if r["threads"] > 1}):
        for tier, fs in (("file", "tmpfs"), ("file", "9p"), ("rfile_rdma", "tmpfs")):
            def v(metric, n):
                return pick(rows, metric=metric, tier=tier, file=fs, ws_factor=ws,
                            threads=n)
            for n in many:
                one, m = v("throughput_ops", 1), v("throughput_ops", n)
                if one is None or m is None:
                    continue
                body.append([f"{tier} ({fs})", f"{ws}×", grouped(one),
                             f"{v('fix_p99_us', 1):.0f}", str(n), grouped(m),
                             f"{v('fix_p99_us', n):.0f}", ratio(m, one)])
    if not body:
        raise DataError("bm: no `bm fix -j` lines")
    return table(["tier", "working set", "1 thread ops/s", "p99 µs", "threads",
                  "ops/s", "p99 µs", "÷ 1 thread"], body) + where(rows)


def t_bm_lat(datadir):
    """Read and Write over the coherence protocol (BENCH=bm, `bm lat`):
    per run, kind and where the page's home (for a lock: the lock node)
    is, how many, and the mean, p50 and p99 in µs."""
    rows = [r for r in load(datadir, "bm") if r["metric"].startswith("op_")
            and r.get("page_bytes", 8) == 8]
    body = []
    dht = sorted({r.get("keys", 0) for r in rows} - {0})
    # (histories, keys, nodes, locking, lock node, one-sided, name)
    runs = [(1, 0, None, 0, 0, 0, "node 0 alone, 1 in flight"),
            (1, 0, None, 0, 0, 1, "the same, reads only, one-sided (-R -w 0)"),
            (1, 0, None, 1, 0, 0, "the same, locks at node 0 (-x)"),
            (1, 0, None, 1, 1, 0, "the same, locks at node 1 (-x -l 1)"),
            (3, 0, None, 0, 0, 0, "three nodes, 4 in flight each")]
    runs += [(1, k, 3, 0, 0, 0, f"hash table, {k} keys on 3 nodes") for k in dht]
    ops = ("malloc", "read", "one_sided_read", "write", "free", "shared_lock",
           "exclusive_lock")
    for hist, keys, nodes, locking, lnode, onesided, name in runs:
        sel_rows = [r for r in rows if r.get("keys", 0) == keys
                    and (not nodes or r["nodes"] == nodes)
                    and r.get("locking", 0) == locking
                    and r.get("lock_node", 0) == lnode
                    and r.get("one_sided", 0) == onesided]
        for op in ops:
            for w in ("local", "remote"):
                def v(metric):
                    return pick(sel_rows, metric=metric, op=op, where=w,
                                histories=hist)
                n = v("op_count")
                if n is None:
                    continue
                body.append([name, op.replace("_", " "), w, grouped(n),
                             f"{v('op_mean_us'):.1f}", f"{v('op_p50_us'):.1f}",
                             f"{v('op_p99_us'):.0f}"])
    if not body:
        raise DataError("bm: no `bm lat` lines")
    return table(["run", "op", "home", "ops", "mean µs", "p50 µs", "p99 µs"],
                 body) + where(rows)


def t_bm_pages(datadir):
    """Pages of more than a word (BENCH=bm_pages, `bm node -B`, in
    data/bm-pages.jsonl): per page size, node 0 alone's reads and writes
    (p50 µs; local: homed at node 0, remote: at another, a write's round
    trip through the home; one-sided: an RDMA READ of the home's table),
    then three nodes' throughput, its ratio to 8-byte pages', and the
    check of their histories."""
    rows = load(datadir, "bm-pages")
    body = []
    for b in sorted({r["page_bytes"] for r in rows if "page_bytes" in r}):
        def v(metric, **k):
            return pick(rows, metric=metric, page_bytes=b, **k)

        def lat(op, where, one_sided=0):
            x = v("op_p50_us", op=op, where=where, histories=1, one_sided=one_sided)
            return "—" if x is None else f"{x:.1f}"
        ops = v("coherence_throughput_ops")
        base = pick(rows, metric="coherence_throughput_ops", page_bytes=8)
        checked = v("linearizability_ops", histories=3)
        bad = v("linearizability_violations", histories=3)
        body.append([grouped(b), lat("read", "local"), lat("write", "local"),
                     lat("write", "remote"), lat("one_sided_read", "remote", 1),
                     "—" if ops is None else grouped(ops), ratio(ops, base),
                     "—" if checked is None else grouped(checked),
                     "—" if bad is None else grouped(bad)])
    if not body:
        raise DataError("bm-pages: no lines with page_bytes")
    return table(["page bytes", "local read µs", "local write µs",
                  "remote write µs", "one-sided read µs", "3 nodes ops/s",
                  "÷ 8 bytes", "ops checked", "not linearizable"],
                 body) + where(rows)


def t_bm_bufmgr(datadir):
    """The buffer manager put together (BENCH=bm_bufmgr, `bm node -f -M
    -D|-F`, in data/bm-bufmgr.jsonl): per working set, the three nodes'
    reads and writes per second (summed) and the slowest node's p99,
    with every page kept in its home's memory (tier memory) against
    homes that keep as many as a node's frames and spill the rest to
    another node's memory (tier remote) or to a file on 9p (tier file),
    each the median of its repetitions (key rep), and the check of
    every run's histories."""
    rows = load(datadir, "bm-bufmgr")
    body = []
    for ws in sorted({r["ws_factor"] for r in rows if "ws_factor" in r}):
        def node_rows(tier, metric, rep):
            return [r for r in rows if r.get("ws_factor") == ws and r.get("tier") == tier
                    and r["metric"] == metric and r.get("rep", 1) == rep]

        reps = sorted({r.get("rep", 1) for r in rows if r.get("ws_factor") == ws})
        cells, ops = None, {}
        for tier in ("memory", "remote", "file"):
            thr, p99 = [], []
            for rep in reps:
                t = node_rows(tier, "throughput_ops", rep)
                q = node_rows(tier, "fix_p99_us", rep)
                if len(t) != 3 or len(q) != 3:
                    raise DataError(f"bm-bufmgr: {tier} at {ws}x, rep {rep}: not 3 nodes' lines")
                thr.append(sum(r["value"] for r in t))
                p99.append(max(r["value"] for r in q))
                if cells is None:
                    cells = [f"{ws}× ({t[0]['pages']})", grouped(t[0]["frames"]),
                             str(len(reps))]
            ops[tier] = statistics.median(thr)
            cells += [grouped(ops[tier]), f"{statistics.median(p99):.0f}"]
        cells.append(grouped(statistics.median(
            [sum(r["value"] for r in node_rows("file", "file_reads", rep)) for rep in reps])))
        bad = sum(r["value"] for r in rows if r.get("ws_factor") == ws
                  and r["metric"] == "linearizability_violations")
        checked = sum(r["value"] for r in rows if r.get("ws_factor") == ws
                      and r["metric"] == "linearizability_ops")
        body.append(cells + [ratio(ops["remote"], ops["memory"]),
                             ratio(ops["file"], ops["remote"]), grouped(checked),
                             grouped(bad)])
    if not body:
        raise DataError("bm-bufmgr: no lines")
    return table(["working set (pages)", "frames", "runs", "memory ops/s", "p99 µs",
                  "remote ops/s", "p99 µs", "file ops/s", "p99 µs",
                  "file tier: pages read back", "remote ÷ memory", "file ÷ remote",
                  "ops checked (all runs)", "not linearizable"], body) + where(rows)


def t_bm_locks(datadir):
    """The locks two ways (BENCH=bm_locks, `bm node -x` against `-x -Y`,
    in data/bm-locks.jsonl): per number of pages, nodes 1 and 2's
    operations per second and how long a lock took to get (p50, remote:
    node 0, the lock node, takes none), each the median of its
    repetitions, the tries that found a one-sided lock taken, and the
    checks."""
    rows = load(datadir, "bm-locks")

    def med(xs):
        if not xs:
            raise DataError("bm-locks: a configuration without lines")
        return statistics.median(xs)
    body = []
    for pages in sorted({r["pages"] for r in rows if r["metric"] == "lock_throughput_ops"}):
        cells, thr = [str(pages)], {}
        reps = sorted({r["rep"] for r in rows if r.get("pages") == pages and "rep" in r})
        for locks in ("message", "one_sided"):
            sel = [r for r in rows if r.get("pages") == pages and r.get("locks") == locks]
            thr[locks] = med([r["value"] for r in sel if r["metric"] == "lock_throughput_ops"])
            cells.append(grouped(thr[locks]))
            for op in ("exclusive_lock", "shared_lock"):
                cells.append(f"""{med([r["value"] for r in sel if r["metric"] == "op_p50_us"
                                       and r.get("op") == op and r.get("where") == "remote"]):.0f}""")
        tries = []
        for rep in reps:
            t = [r["value"] for r in rows if r.get("pages") == pages and r.get("rep") == rep
                 and r["metric"] == "lock_tries_taken"]
            if len(t) != 2:
                raise DataError(f"bm-locks: {pages} pages, rep {rep}: not 2 nodes' tries")
            tries.append(sum(t))
        sel = [r for r in rows if r.get("pages") == pages]
        cells += [grouped(med(tries)), ratio(thr["one_sided"], thr["message"]),
                  grouped(sum(r["value"] for r in sel if r["metric"] == "linearizability_ops")),
                  grouped(sum(r["value"] for r in sel if r["metric"] == "linearizability_violations")
                          + sum(r["value"] for r in sel
                                if r["metric"] == "mutual_exclusion_violations"))]
        body.append(cells)
    if not body:
        raise DataError("bm-locks: no lines")
    return table(["pages", "message ops/s", "exclusive p50 µs", "shared p50 µs",
                  "one-sided ops/s", "exclusive p50 µs", "shared p50 µs",
                  "tries found taken", "one-sided ÷ message", "ops checked (all runs)",
                  "violations"], body) + where(rows)


def t_bm_dht(datadir):
    """The hash table at its access node (BENCH=bm, `bm node -K`): per
    number of nodes, the share of its values in its own memory and the
    operations per second of each phase."""
    rows = [r for r in load(datadir, "bm") if r["metric"] == "dht_throughput_ops"]
    phases = ("insert", "lookup", "update", "lookup_again", "erase")
    body = []
    for nodes in sorted({r["nodes"] for r in rows}):
        sel = [r for r in rows if r["nodes"] == nodes and r["node"] == 0]
        if not sel:
            continue
        keys, local = sel[0]["keys"], sel[0]["local_keys"]
        cells = [str(nodes), f"{keys}", f"{100 * local / keys:.0f} %"]
        for ph in phases:
            x = pick(sel, phase=ph)
            cells.append("—" if x is None else grouped(x))
        body.append(cells)
    if not body:
        raise DataError("bm: no hash table lines")
    return table(["nodes", "keys", "own memory", "insert/s", "lookup/s",
                  "update/s", "lookup again/s", "erase/s"], body) + where(rows)


POLICIES = ("lru", "mre", "gdsf", "gdsf-batch")
UNBOUNDED = 1048576


def trace_cells(datadir, trace, model):
    """BENCH=trace's replays of @trace with the cost model @model ("papers",
    "rxe-ordinary", "rxe-fast"), MRE's default sections: {pages: {policy:
    line}}, "none"'s line, the unbounded cache's LRU line (UNBOUNDED pages,
    where no policy may have evicted anything, every policy costing the
    same), and the lines."""
    rows = [r for r in load(datadir, "trace")
            if r["trace"] == trace and r.get("cost_model", "papers") == model
            and not r.get("resort_pct")]
    cells, none = {}, None
    for r in rows:
        if r["policy"] == "none":
            if none is not None:
                raise DataError(f"trace: two 'none' lines of {trace}, {model}")
            none = r
            continue
        if r["policy"] in cells.setdefault(r["cache_pages"], {}):
            raise DataError(f"trace: two {r['policy']} lines of {trace}, {model}, {r['cache_pages']}")
        cells[r["cache_pages"]][r["policy"]] = r
    if none is None or UNBOUNDED not in cells or len(cells) < 2:
        raise DataError(f"trace: {trace}, {model}: 'none', the unbounded cache"
                        " or the sizes below it missing")
    if any(len(d) != len(POLICIES) for d in cells.values()):
        raise DataError(f"trace: {trace}, {model}: a policy is missing")
    u = cells.pop(UNBOUNDED)
    if (any(u[p]["evictions"] for p in POLICIES)
            or len({u[p]["cost_us"] for p in POLICIES}) != 1
            or max(cells) > UNBOUNDED):
        raise DataError(f"trace: {trace}, {model}: the unbounded cache is not")
    if none["cost_us"] <= u["lru"]["cost_us"]:
        raise DataError(f"trace: {trace}, {model}: no cache costs no more than"
                        " the unbounded one")
    return cells, none, u["lru"], rows


def secs(us):
    """Microseconds as seconds: three decimals below 1 s, two below 10 s,
    one above."""
    s = us / 1e6
    return f"{s:.3f}" if s < 1 else f"{s:.2f}" if s < 10 else f"{s:.1f}"


def t_trace_hits(datadir, trace):
    """Hit ratio (page hit ratio) per cache size and policy, and the
    deregistration batches of LRU and MRE, in the papers' model."""
    cells, none, u, rows = trace_cells(datadir, trace, "papers")
    body = [[grouped(c)] + [f'{d[p]["hit_ratio"]:.3f} ({d[p]["page_hit_ratio"]:.2f})'
                           for p in POLICIES]
            + [grouped(d["lru"]["dereg_batches"]), grouped(d["mre"]["dereg_batches"])]
            for c, d in sorted(cells.items())]
    return (table(["pages"] + list(POLICIES) + ["batches lru", "batches mre"], body)
            + ["", f"Unbounded ({grouped(UNBOUNDED)} pages): hit ratio {u['hit_ratio']:.3f}"
               f" ({u['page_hit_ratio']:.2f})."] + where(rows))


def t_trace_cost(datadir, trace, model):
    """Model cost per cache size and policy (seconds), each with its saving
    as a fraction of the unbounded cache's ((none - cost) / (none -
    unbounded)), and the cheapest policy (several when they cost the same)."""
    cells, none, u, rows = trace_cells(datadir, trace, model)
    n, unb = none["cost_us"], u["cost_us"]
    body = []
    for c, d in sorted(cells.items()):
        cost = {p: d[p]["cost_us"] for p in POLICIES}
        least = min(cost.values())
        best = [p for p in POLICIES if cost[p] == least]
        body.append([grouped(c)]
                    + [f"{secs(cost[p])} ({(n - cost[p]) / (n - unb):.2f})"
                       for p in POLICIES]
                    + [", ".join(best)])
    out = table(["pages"] + list(POLICIES) + ["cheapest"], body)
    out += ["", f"No cache: {secs(n)} s; unbounded ({grouped(UNBOUNDED)} pages):"
                f" {secs(unb)} s"
                + (f"; costs ``a,b,a',b',c'`` = {none['costs_ns']} ns." if model != "papers"
                   else ".")]
    return out + where(rows)


def t_trace_wins(datadir):
    """Per cost model and trace: at how many cache sizes (below the
    unbounded one) each policy costs the least (ties count for each), and
    how far gdsf-batch is from the cheapest other policy (its cost over
    theirs, less 1: negative where it is cheaper)."""
    models = ["papers"] + [m for m in MEASURED_MODELS
                           if any(r.get("cost_model") == m for r in load(datadir, "trace"))]
    body, src = [], []
    for model in models:
        for trace in ("cloudphysics", "cello", "httpd"):
            cells, _, _, rows = trace_cells(datadir, trace, model)
            src += rows
            wins = dict.fromkeys(POLICIES, 0)
            rel = []
            for d in cells.values():
                cost = {p: d[p]["cost_us"] for p in POLICIES}
                least = min(cost.values())
                for p in POLICIES:
                    wins[p] += cost[p] == least
                other = min(v for p, v in cost.items() if p != "gdsf-batch")
                rel.append(cost["gdsf-batch"] / other - 1)
            body.append([model, trace, str(len(cells))]
                        + [str(wins[p]) for p in POLICIES]
                        + [f"{min(rel) * 100:+.1f} … {max(rel) * 100:+.1f} %"])
    return table(["model", "trace", "sizes"] + [f"{p} least" for p in POLICIES]
                 + ["gdsf-batch vs best other"], body) + where(src)


def fitted_costs(rows, model):
    """The replay's a,b,a',b',c' (ns) from BENCH=reg's lines of one run.

    Model "rxe-MODE" (or just MODE), the benchmark's fit: a and b from
    single registrations, a' from single deregistrations, b' (per batch)
    and c' (per region) from the batch measurement, whose regions are one
    page each (so its per-region slope includes one a').

    Model "module-MODE", the figures the module measured itself in that run
    (cost_kernel_*, kmod/cost.c), with its a' of 0 as 1 ns: the replay's 0
    would keep the default."""
    kind, _, mode = model.rpartition("-")
    if kind == "module":
        m = {r["metric"]: r["value"] for r in rows
             if r["metric"].startswith("cost_kernel_") and r.get("mode") == mode}
        try:
            v = (max(1, m["cost_kernel_a_ns"]), max(1, m["cost_kernel_b_ns"]), 1,
                 max(1, m["cost_kernel_batch_b_ns"]), max(1, m["cost_kernel_batch_c_ns"]))
        except KeyError:
            return None
        return ",".join(str(round(x)) for x in v)
    if kind not in ("", "rxe"):
        return None
    m = {r["metric"]: r["value"] for r in rows
         if r["metric"].startswith("cost_model_") and r.get("mode") == mode}
    try:
        a2 = m["cost_model_a2_ns"]
        v = (m["cost_model_a_ns"], m["cost_model_b_ns"], a2,
             max(1, m["cost_model_batch_b_ns"]), max(1, m["cost_model_batch_c_ns"] - a2))
    except KeyError:
        return None
    return ",".join(str(round(x)) for x in v)


def t_trace_models(datadir):
    """The measured cost models the replays used (their "costs_ns": a, b,
    a', b', c' in ns), in µs, and where BENCH=reg measured them (the run of
    Documentation/data/reg.jsonl whose fit gives the same constants)."""
    rows = [r for r in load(datadir, "trace") if r.get("cost_model", "papers") != "papers"]
    body, src = [], []
    for model in MEASURED_MODELS:
        costs = {r["costs_ns"] for r in rows if r["cost_model"] == model}
        if not costs and model.startswith("module-"):
            continue
        if len(costs) != 1:
            raise DataError(f"trace: {len(costs)} cost models for {model}")
        c = costs.pop()
        file = "reg" if model.startswith("rxe-") else "reg-costs"
        reg = load(datadir, file)
        runs = [k for k in sorted({(r.get("kernel"), r.get("commit")) for r in reg})
                if fitted_costs([r for r in reg if (r.get("kernel"), r.get("commit")) == k],
                                model) == c]
        if not runs:
            raise DataError(f"trace: {model}'s costs {c} are no run's of {file}.jsonl")
        prefix = "cost_model_" if model.startswith("rxe-") else "cost_kernel_"
        src += [r for r in reg if (r.get("kernel"), r.get("commit")) == runs[0]
                and r["metric"].startswith(prefix)]
        a, b, a2, b2, c2 = (int(x) for x in c.split(","))
        body.append([model] + [f"{v / 1000:.3g} µs" for v in (a, b, a2, b2, c2)])
    return table(["model", "a", "b", "a'", "b' (batch)", "c' (per region)"], body) + where(src)


MEASURED_MODELS = ("rxe-ordinary", "rxe-fast", "module-ordinary", "module-fast")


def t_costs(datadir, kernel=None, file="reg-costs"):
    """The cost figures the module measured itself (cost_kernel_*) beside
    the benchmark's fit of the same run (cost_model_*), per mode."""
    rows = of_kernel(load(datadir, file), kernel)
    body = []
    for mode in ("ordinary", "fast"):
        bench = [pick(rows, metric="cost_model_" + m, mode=mode)
                 for m in ("a_ns", "b_ns", "batch_b_ns", "batch_c_ns")]
        mod = [pick(rows, metric="cost_kernel_" + m, mode=mode)
               for m in ("a_ns", "b_ns", "batch_b_ns", "batch_c_ns")]
        if None in bench + mod:
            raise DataError(f"{file}: {mode}: no cost_model_ or cost_kernel_ lines")
        for name, x, y in zip(("a (per page)", "b (per registration)",
                               "b' (per batch)", "c' (per region)"), bench, mod):
            body.append([mode, name, f"{x / 1000:.3g}", f"{y / 1000:.3g}", ratio(y, x)])
    return table(["mode", "figure", "BENCH=reg fit (µs)", "module (µs)",
                  "module/fit"], body) + where(rows)


def t_trace_sections(datadir):
    """MRE's resorting section and eviction segment varied (papers' model):
    hit ratio / cost (s) at the sizes bench_trace.sh sweeps them at."""
    rows = [r for r in load(datadir, "trace")
            if r.get("resort_pct") and r.get("cost_model", "papers") == "papers"]
    if not rows:
        raise DataError("trace: no section sweep")
    sens = {}
    for r in rows:
        d = sens.setdefault((r["resort_pct"], r["evict_pct"]), {})
        if r["trace"] in d:
            raise DataError(f"trace: two section lines of {r['trace']} at"
                            f" {r['resort_pct']} / {r['evict_pct']}")
        d[r["trace"]] = r
    body = [[str(rp), str(ep)] + [f'{d[t]["hit_ratio"]:.3f} / {d[t]["cost_us"] / 1e6:.3f}'
                                  if t in d else "—" for t in ("httpd", "cloudphysics")]
            for (rp, ep), d in sorted(sens.items())]
    sizes = {t: sorted({r["cache_pages"] for r in rows if r["trace"] == t})
             for t in ("httpd", "cloudphysics")}
    return (table(["resort %", "evict %", "httpd", "cloudphysics"], body)
            + ["", "Sizes: " + "; ".join(f"{t} {', '.join(grouped(c) for c in v)} pages"
                                        for t, v in sizes.items() if v) + "."]
            + where(rows))


TABLES = {"bm_fix": t_bm_fix, "bm_fix_mrrcd": t_bm_fix_mrrcd, "bm_fix_threads": t_bm_fix_threads, "bm_lat": t_bm_lat, "bm_pages": t_bm_pages, "bm_bufmgr": t_bm_bufmgr, "bm_locks": t_bm_locks, "bm_dht": t_bm_dht, "redy_slo": t_redy_slo, "redy_model": t_redy_model,
          "redy_migration": t_redy_migration, "kv": t_kv, "blk": t_blk, "peers": t_peers, "reg": t_reg, "costs": t_costs, "hits": t_hits, "dereg": t_dereg, "evict": t_evict,
          "ops": t_ops, "frrwp": t_frrwp, "post": t_post, "cold_write": t_cold_write,
          "ops_chain": t_ops_chain, "ops_conn": t_ops_conn,
          "lockless": t_lockless,
          "trace_hits": t_trace_hits, "trace_cost": t_trace_cost,
          "trace_sections": t_trace_sections, "trace_models": t_trace_models,
          "trace_wins": t_trace_wins}


def render(text, datadir):
    out, lines, i = [], text.split("\n"), 0
    while i < len(lines):
        m = BEGIN.match(lines[i])
        out.append(lines[i])
        i += 1
        if not m:
            continue
        name, args = m.group(1), dict(a.split("=", 1) for a in m.group(2).split())
        if name not in TABLES:
            raise DataError(f"line {i}: no table '{name}'")
        j = i
        while j < len(lines) and lines[j] != END:
            j += 1
        if j == len(lines):
            raise DataError(f"line {i}: '{END}' missing")
        try:
            gen = TABLES[name](datadir, **args)
        except TypeError as e:
            raise DataError(f"line {i}: {name}: {e}") from e
        out += [""] + gen + [""]
        i = j
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--costs", nargs=3, metavar=("REG_JSONL", "MODE", "KERNEL"),
                    help="print the replay's a,b,a',b',c' fitted by BENCH=reg"
                    " (bench_trace.sh) and exit")
    ap.add_argument("--data", default=os.path.join(TOP, "Documentation", "data"))
    ap.add_argument("page", nargs="?",
                    default=os.path.join(TOP, "Documentation", "benchmarks.rst"))
    a = ap.parse_args()
    if a.costs:
        path, mode, kernel = a.costs
        with open(path) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        c = fitted_costs([r for r in rows if r.get("kernel") == kernel], mode)
        if c is None:
            print(f"bench-tables: {path}: no {mode} cost model of {kernel}", file=sys.stderr)
            return 2
        print(c)
        return 0
    with open(a.page) as f:
        old = f.read()
    try:
        new = render(old, a.data)
    except DataError as e:
        print(f"bench-tables: {a.page}: {e}", file=sys.stderr)
        return 2
    if a.check:
        if new != old:
            print(f"bench-tables: {a.page} differs from what {a.data} gives; "
                  f"run tools/bench/bench-tables.py", file=sys.stderr)
            return 1
        return 0
    if new != old:
        with open(a.page, "w") as f:
            f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
