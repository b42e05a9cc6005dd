#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The memory limit (mrrcd -m MB, MRRCD_PORT, MRRCD_PID): store far more
than the limit, in several sizes; evictions are counted, the item bytes
and the daemon's resident memory stay bounded, recent items are there.

    memlimit.py MB"""
import os
import sys

from pymemcache.client.base import Client

PORT = int(os.environ["MRRCD_PORT"])
PID = int(os.environ["MRRCD_PID"])


def rss_kib():
    with open("/proc/%d/status" % PID) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def main(mb):
    limit = mb << 20
    c = Client(("127.0.0.1", PORT), connect_timeout=5, timeout=20)
    st = c.stats()
    assert st[b"limit_maxbytes"] == limit, st[b"limit_maxbytes"]
    written = 0
    sizes = (100, 3000, 40000, 300000)
    n = 0
    while written < 6 * limit:
        size = sizes[n % len(sizes)]
        val = (b"%d:" % n) + b"v" * size
        assert c.set("fill-%d" % n, val, noreply=False) is True
        written += len(val)
        n += 1
        if n % 500 == 0:
            st = c.stats()
            assert st[b"bytes"] <= limit, st[b"bytes"]
    st = c.stats()
    assert st[b"evictions"] > 0, st
    assert st[b"bytes"] <= limit
    assert st[b"curr_items"] < n
    assert st[b"total_items"] == n
    # Per class (stats items, stats slabs), the same totals.
    items = c.stats("items")
    slabs = c.stats("slabs")

    def total(d, field):
        return sum(v for k, v in d.items() if k.endswith(b":" + field))
    assert total(items, b"number") == st[b"curr_items"], items
    assert total(items, b"evicted") == st[b"evictions"], items
    assert total(slabs, b"used_chunks") == st[b"curr_items"], slabs
    # The last of each size was just stored: it is there.
    for k in range(n - len(sizes), n):
        v = c.get("fill-%d" % k)
        assert v is not None and v.startswith(b"%d:" % k), k
    # Resident memory: the arena plus buffers and the index's private
    # copy, never the 6x written.
    rss = rss_kib() * 1024
    assert rss < limit + (24 << 20), "RSS %d for a %d limit" % (rss, limit)
    print("memlimit: -m %d: wrote %d MiB in %d items, %d evictions, "
          "%d items left, %d bytes, RSS %d KiB" %
          (mb, written >> 20, n, st[b"evictions"], st[b"curr_items"],
           st[b"bytes"], rss >> 10))


if __name__ == "__main__":
    main(int(sys.argv[1]))  # (a failed assert: its traceback, exit status 1)
