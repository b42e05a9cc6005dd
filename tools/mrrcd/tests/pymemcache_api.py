#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""pymemcache's API against mrrcd (MRRCD_PORT): every call a client makes,
unchanged, with the results memcached gives."""
import os

from pymemcache import serde
from pymemcache.client.base import Client
from pymemcache.exceptions import (MemcacheClientError,
                                   MemcacheIllegalInputError,
                                   MemcacheServerError,
                                   MemcacheUnknownCommandError)

PORT = int(os.environ["MRRCD_PORT"])


def client(**kw):
    return Client(("127.0.0.1", PORT), connect_timeout=5, timeout=10, **kw)


def main():
    c = client()
    assert c.flush_all() is True
    assert c.version().startswith(b"1.6")

    # set/get, flags through a serde, binary values
    assert c.set("a", b"1") is True
    assert c.get("a") == b"1"
    assert c.get("missing") is None
    assert c.get("missing", default=b"d") == b"d"
    blob = bytes(range(256)) * 10 + b"\r\nEND\r\n"
    assert c.set("blob", blob) is True
    assert c.get("blob") == blob

    p = client(serde=serde.pickle_serde)
    p.set("obj", {"x": [1, 2, 3]})
    assert p.get("obj") == {"x": [1, 2, 3]}
    p.set("int", 42)
    assert p.get("int") == 42

    # many keys
    assert c.set_many({"m1": b"x", "m2": b"y", "m3": b"z"}) == []
    assert c.get_many(["m1", "m2", "m3", "nope"]) == \
        {"m1": b"x", "m2": b"y", "m3": b"z"}
    many = {"k%d" % i: b"v%d" % i for i in range(500)}
    assert c.set_many(many) == []
    assert c.get_many(list(many)) == many
    assert c.delete_many(["m1", "m2"]) is True
    assert c.get_many(["m1", "m2", "m3"]) == {"m3": b"z"}

    # add, replace, append, prepend (noreply=False to see the results)
    assert c.add("a", b"2", noreply=False) is False
    assert c.add("new", b"n", noreply=False) is True
    assert c.replace("nope", b"x", noreply=False) is False
    assert c.replace("new", b"r", noreply=False) is True
    assert c.append("new", b">>", noreply=False) is True
    assert c.prepend("new", b"<<", noreply=False) is True
    assert c.get("new") == b"<<r>>"
    assert c.append("nope", b"x", noreply=False) is False

    # gets / cas
    val, cas = c.gets("new")
    assert val == b"<<r>>" and cas
    assert c.cas("new", b"c1", cas) is True
    assert c.cas("new", b"c2", cas) is False
    assert c.cas("nope", b"c2", cas) is None
    assert c.get("new") == b"c1"
    got = c.gets_many(["new", "a"])
    assert got["new"][0] == b"c1" and got["a"][0] == b"1"

    # incr / decr, 64-bit wrap, decr floors at 0, non-numeric
    assert c.set("n", b"10") is True
    assert c.incr("n", 5) == 15
    assert c.decr("n", 20) == 0
    assert c.incr("nope", 1) is None
    assert c.set("n", b"18446744073709551615") is True
    assert c.incr("n", 1) == 0
    try:
        c.incr("blob", 1)
        raise AssertionError("incr on a non-number succeeded")
    except MemcacheClientError as e:
        assert b"non-numeric" in str(e).encode() or "non-numeric" in str(e)

    # delete, touch, expiry
    assert c.delete("a", noreply=False) is True
    assert c.delete("a", noreply=False) is False
    assert c.touch("new", 100, noreply=False) is True
    assert c.touch("nope", 100, noreply=False) is False
    assert c.set("gone", b"x", expire=-1) is True
    assert c.get("gone") is None

    # limits: keys (checked by the client), values (by the server)
    try:
        c.set("k" * 251, b"x")
        raise AssertionError("a 251-byte key was accepted")
    except MemcacheIllegalInputError:
        pass
    big = b"b" * (1024 * 1024 - 64 - 3)
    assert c.set("big", big, noreply=False) is True
    assert c.get("big") == big
    try:
        c.set("big", big + b"x", noreply=False)
        raise AssertionError("an item over 1 MiB was accepted")
    except MemcacheServerError as e:
        assert "too large" in str(e)
    # as memcached: the failed set took the old value away
    assert c.get("big") is None

    # stats
    st = c.stats()
    for name in (b"pid", b"uptime", b"curr_items", b"total_items", b"bytes",
                 b"curr_connections", b"cmd_get", b"cmd_set", b"get_hits",
                 b"get_misses", b"evictions", b"limit_maxbytes"):
        assert name in st, name
    assert st[b"threads"] == 1
    assert c.stats("settings")[b"udpport"] == 0

    # not implemented: said so, the connection stays usable
    try:
        c.cache_memlimit(100)
        raise AssertionError("cache_memlimit unexpectedly worked")
    except MemcacheUnknownCommandError:
        pass
    assert c.get("new") == b"c1"

    assert c.flush_all(noreply=False) is True
    assert c.get("new") is None
    c.quit()
    p.close()
    print("pymemcache: all API checks passed")


if __name__ == "__main__":
    main()  # (a failed assert: its traceback, exit status 1)
