#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""An Ethernet hub for test VMs (tools/vm/trio.sh), on unix datagram sockets.

usage: hub.py DIR N

VM i (0 <= i < N) binds DIR/vm<i> and sends its frames to DIR/hub<i>
(QEMU's -netdev dgram); the hub sends every frame it gets from one VM to
all the others: one shared segment, as on a wire.  Each VM's frames wait
in a queue of their own while its socket is full (a unix datagram socket
holds few: net.unix.max_dgram_qlen), so a slow VM slows nobody else;
frames for a VM whose socket is not bound yet, or beyond QUEUE_MAX
waiting, are lost, as a wire would lose them (TCP and RDMA retransmit).
Ends when its parent does, or when killed.
"""
import collections
import os
import selectors
import socket
import sys

QUEUE_MAX = 4096


def main():
    if len(sys.argv) != 3 or not sys.argv[2].isdigit() or not 2 <= int(sys.argv[2]) <= 8:
        sys.exit("usage: hub.py DIR N (2..8)")
    path, n = sys.argv[1], int(sys.argv[2])
    parent = os.getppid()
    sel = selectors.DefaultSelector()
    for i in range(n):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.bind(os.path.join(path, f"hub{i}"))
        sel.register(s, selectors.EVENT_READ, ("in", i))
    out = [None] * n
    queue = [collections.deque() for _ in range(n)]
    lost = 0

    def connect(j):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            s.connect(os.path.join(path, f"vm{j}"))
        except OSError:
            s.close()
            return None
        s.setblocking(False)
        return s

    def flush(j):
        nonlocal lost
        while queue[j]:
            try:
                out[j].send(queue[j][0])
            except BlockingIOError:
                if sel.get_map().get(out[j].fileno()) is None:
                    sel.register(out[j], selectors.EVENT_WRITE, ("out", j))
                return
            except OSError:     # the VM went away: so do its frames
                lost += len(queue[j])
                queue[j].clear()
                break
            queue[j].popleft()
        if out[j] is not None and sel.get_map().get(out[j].fileno()) is not None:
            sel.unregister(out[j])

    while os.getppid() == parent:
        for key, _ in sel.select(timeout=1.0):
            kind, i = key.data
            if kind == "out":
                flush(i)
                continue
            frame = key.fileobj.recv(65536)
            for j in range(n):
                if j == i:
                    continue
                if out[j] is None:
                    out[j] = connect(j)
                    if out[j] is None:
                        lost += 1
                        continue
                if len(queue[j]) >= QUEUE_MAX:
                    lost += 1
                    continue
                queue[j].append(frame)
                if len(queue[j]) == 1:
                    flush(j)


if __name__ == "__main__":
    main()
