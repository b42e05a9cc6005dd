#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# What `make run` shows in the test VM: the RDMA device, the module's view
# of it, and mrrcd serving over RDMA: a SET, a two-sided GET and a
# one-sided GET of the same item, then the daemon's counters.
set -eu
b=$MRRC_REPO/build/tools
addr=10.211.0.1
rdma link show
echo
"$b/mrrc" info
echo
"$b/mrrcd" -R $addr &
pid=$!
trap 'kill $pid 2> /dev/null || :' EXIT
i=0
until "$b/mrrckv" cmd version > /dev/null 2>&1; do
	i=$((i + 1))
	[ $i -lt 50 ] || { echo "mrrcd did not start" >&2; exit 1; }
	sleep 0.2
done
kv="$b/mrrckv -r -s $addr"
echo "mrrcd -R $addr: TCP and RDMA on port 11211"
$kv set greeting "hello over RDMA"
printf '  two-sided GET (SEND/RECV): %s\n' "$($kv get greeting)"
printf '  one-sided GET (RDMA READ, FETCH_AND_ADD): %s\n' \
	"$($kv -m faa oget greeting)"
printf '  TCP GET: %s\n' "$("$b/mrrckv" get greeting)"
"$b/mrrckv" cmd stats | grep -E 'STAT (get_hits|curr_items|rdma_)' | sed 's/^/  /'
kill $pid
wait $pid
trap - EXIT
echo "mrrcd stopped cleanly"
