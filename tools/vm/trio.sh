#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Three test VMs on one shared virtual Ethernet segment: VM "a"
# (10.213.0.1, kernel KVER_A) runs CMD_A, "b" (10.213.0.2) CMD_B and "c"
# (10.213.0.3) CMD_C, at the same time.  Each has its own kernel, its own
# mrrc.ko and rxe0 on its virtio-net device; the segment is tools/vm/hub.py
# on the host, which passes every frame from one VM to the other two.  In
# each guest MRRC_LINK_IP is its own address and MRRC_LINK_PEER the other
# two, comma-separated.  Output lines are prefixed "a| ", "b| ", "c| ".
#
# Exits with the first status of a, b, c that is not 0 (each as run.sh
# reports it: 125 for a kernel problem, 124 for a VM that failed).
#
# usage: trio.sh KVER_A KVER_B KVER_C CMD_A CMD_B CMD_C
# environment: as pair.sh (VM_TIMEOUT, VM_SMP 1, VM_MEM 1G, VM_DMESG_DIR
#              for a.dmesg, b.dmesg and c.dmesg, VM_MODPARAMS)
set -u

here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 6 ] || {
	echo "usage: trio.sh KVER_A KVER_B KVER_C CMD_A CMD_B CMD_C" >&2
	exit 2
}
# Unix socket paths are short: keep them out of a deep build directory.
sock=$(mktemp -d /tmp/mrrc-seg.XXXXXX)
python3 "$here/hub.py" "$sock" 3 &
hub=$!
trap 'kill $hub 2> /dev/null; rm -rf "$sock"' EXIT
trap 'exit 143' TERM INT HUP
k=0
until [ -S "$sock/hub2" ] || [ $k -ge 50 ]; do
	sleep 0.1
	k=$((k + 1))
done
[ -S "$sock/hub2" ] || { echo "trio: the hub did not start" >&2; exit 124; }

vm() {	# vm NAME INDEX KVER CMD
	ip=10.213.0.$(($2 + 1))
	peers=$(for i in 1 2 3; do [ $i = $(($2 + 1)) ] || echo 10.213.0.$i; done |
		paste -sd,)
	{
		VM_SMP=${VM_SMP:-1} VM_MEM=${VM_MEM:-1G} \
		VM_TIMEOUT=${VM_TIMEOUT:-1200} \
		VM_LINK_IP=$ip VM_LINK_PEER=$peers VM_LINK_MAC=52:54:00:12:03:0$(($2 + 1)) \
		VM_LINK_LOCAL=$sock/vm$2 VM_LINK_REMOTE=$sock/hub$2 \
		VM_DMESG=${VM_DMESG_DIR:+$VM_DMESG_DIR/$1.dmesg} \
			"$here/run.sh" "$3" "$4" 2>&1
		echo $? > "$sock/$1.status"
	} | sed -u "s/^/$1| /"
}

vm a 0 "$1" "$4" &
pa=$!
vm b 1 "$2" "$5" &
pb=$!
vm c 2 "$3" "$6" &
pc=$!
wait $pa $pb $pc

st=0
for v in a b c; do
	s=$(cat "$sock/$v.status" 2>/dev/null || echo 124)
	echo "trio: $v exited $s"
	[ "$st" -ne 0 ] || st=$s
done
exit "$st"
