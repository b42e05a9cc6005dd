#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Two test VMs joined by a virtual Ethernet link: VM "a" (10.212.0.1,
# kernel KVER_A) runs CMD_A and VM "b" (10.212.0.2, kernel KVER_B) runs
# CMD_B, at the same time.  Each has its own kernel, its own mrrc.ko and
# rxe0 on its virtio-net device; the link is a pair of unix datagram
# sockets on the host.  In each guest MRRC_LINK_IP is its own address and
# MRRC_LINK_PEER the other's.  Output lines are prefixed "a| " and "b| ".
#
# Exits with b's status if that is not 0, else with a's (each as run.sh
# reports it: 125 for a kernel problem, 124 for a VM that failed).  CMD_A
# is expected to finish on its own once CMD_B is done.
#
# usage: pair.sh KVER_A KVER_B CMD_A CMD_B
# environment: VM_TIMEOUT (default 1200), VM_SMP (default 1), VM_MEM (1G),
#              VM_DMESG_DIR (keep each guest's kernel log there as a.dmesg
#              and b.dmesg), VM_MODPARAMS (see run.sh)
set -u

here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 4 ] || { echo "usage: pair.sh KVER_A KVER_B CMD_A CMD_B" >&2; exit 2; }
# Unix socket paths are short: keep them out of a deep build directory.
sock=$(mktemp -d /tmp/mrrc-link.XXXXXX)
trap 'rm -rf "$sock"' EXIT

vm() {	# vm NAME IP PEER MAC LOCAL REMOTE KVER CMD
	{
		VM_SMP=${VM_SMP:-1} VM_MEM=${VM_MEM:-1G} \
		VM_TIMEOUT=${VM_TIMEOUT:-1200} \
		VM_LINK_IP=$2 VM_LINK_PEER=$3 VM_LINK_MAC=$4 \
		VM_LINK_LOCAL=$5 VM_LINK_REMOTE=$6 \
		VM_DMESG=${VM_DMESG_DIR:+$VM_DMESG_DIR/$1.dmesg} \
			"$here/run.sh" "$7" "$8" 2>&1
		echo $? > "$sock/$1.status"
	} | sed -u "s/^/$1| /"
}

vm a 10.212.0.1 10.212.0.2 52:54:00:12:02:01 "$sock/a" "$sock/b" "$1" "$3" &
vm b 10.212.0.2 10.212.0.1 52:54:00:12:02:02 "$sock/b" "$sock/a" "$2" "$4" &
wait

a=$(cat "$sock/a.status" 2>/dev/null || echo 124)
b=$(cat "$sock/b.status" 2>/dev/null || echo 124)
echo "pair: a exited $a, b exited $b"
[ "$b" -ne 0 ] && exit "$b"
exit "$a"
