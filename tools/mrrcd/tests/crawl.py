#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""The expiry crawler (MRRCD_PORT): items that expire, and items that
flush_all covers, are reclaimed with no request naming them (no get, no
eviction), their memory returned; live items stay; ``stats items`` and
``stats slabs`` count them per class and add up to ``stats``.

    crawl.py"""
import os
import socket
import time

from pymemcache.client.base import Client

PORT = int(os.environ["MRRCD_PORT"])
WAIT = 60       # seconds for a sweep (it takes at most 4 here)


def per_class(st, field):
    return sum(v for k, v in st.items()
               if k.startswith(b"items:") and k.endswith(b":" + field))


def wait_for(c, what, cond):
    deadline = time.monotonic() + WAIT
    while True:
        st = c.stats()
        if cond(st):
            return st
        assert time.monotonic() < deadline, "%s: not after %d s: %s" % (
            what, WAIT, st)
        time.sleep(0.5)


def main():
    c = Client(("127.0.0.1", PORT), connect_timeout=5, timeout=20)
    for i in range(100):
        assert c.set("long-%d" % i, b"l" * 100, noreply=False)
    items = c.stats("items")
    assert per_class(items, b"number") == 100, items
    slabs = c.stats("slabs")
    assert sum(v for k, v in slabs.items()
               if k.endswith(b":used_chunks")) == 100, slabs
    # Then nothing but stats until they are gone: only the crawler can
    # reclaim them.
    for i in range(200):
        assert c.set("short-%d" % i, b"s" * (i * 37 % 500), expire=2,
                     noreply=False)
    st = wait_for(c, "the expired items reclaimed",
                  lambda st: st[b"curr_items"] == 100)
    assert st[b"cmd_get"] == 0, st
    assert st[b"reclaimed"] == st[b"crawler_reclaimed"] == 200, st
    assert st[b"crawler_items_checked"] >= 300, st
    items = c.stats("items")
    assert per_class(items, b"crawler_reclaimed") == 200, items
    assert per_class(items, b"number") == 100, items
    assert per_class(items, b"evicted") == 0, items
    for i in range(0, 100, 9):
        assert c.get("long-%d" % i) == b"l" * 100, i
    # flush_all is lazy; the crawler returns the memory all the same.
    assert c.flush_all(noreply=False)
    st = wait_for(c, "the flushed items reclaimed",
                  lambda st: st[b"curr_items"] == 0)
    assert st[b"bytes"] == 0, st
    assert st[b"crawler_reclaimed"] == 300, st
    # stats reset: counters go, what is stored stays counted.
    assert c.set("after", b"x", noreply=False)
    with socket.create_connection(("127.0.0.1", PORT), timeout=20) as r:
        r.sendall(b"stats reset\r\n")
        assert r.recv(64) == b"RESET\r\n"
    st = c.stats()
    items = c.stats("items")
    assert st[b"crawler_reclaimed"] == 0 and st[b"curr_items"] == 1, st
    assert per_class(items, b"number") == 1, items
    assert per_class(items, b"crawler_reclaimed") == 0, items
    print("crawl: 200 expired and 100 flushed items reclaimed, no lookup")


if __name__ == "__main__":
    main()  # (a failed assert: its traceback, exit status 1)
