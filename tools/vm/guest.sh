#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Test VM stage 2, PID 1 on the host's read-only root (init has mounted
# tmpfs on /tmp, /run, /var/tmp, /root, /mnt): rdma_rxe on a veth pair
# (or on the link of a VM pair), mrrc.ko, then the command from
# $MRRC_RUN/cmd.  Its exit status (or 125 if the dmesg scan found a kernel
# problem) goes to $MRRC_RUN/status; then power off.
export PATH=$MRRC_REPO/build/tools:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb
run=$MRRC_RUN

mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
hostname mrrc-vm
ulimit -c 0

finish() {
	echo "$1" > "$run/status"
	sync
	# PID 1 must not exit while the power goes off, and once it is going
	# the host's root (and /bin/sleep on it) may be gone: start first.
	sleep 60 &
	echo o > /proc/sysrq-trigger
	wait
}

# rxe0 on a veth pair (one VM), or on the virtio-net link to the other VM
# of a pair (MRRC_LINK_IP set, see pair.sh).
setup() {
	ip link set lo up &&
	modprobe rdma_rxe &&
	modprobe ib_uverbs &&
	modprobe rdma_cm &&
	modprobe rdma_ucm || return 1	# librdmacm, for the hostile peer
	if [ -n "${MRRC_LINK_IP:-}" ]; then
		modprobe virtio_net || return 1
		dev=
		for d in /sys/bus/virtio/drivers/virtio_net/virtio*/net/*; do
			[ -e "$d" ] && dev=${d##*/}
		done
		[ -n "$dev" ] || { echo "no virtio-net device"; return 1; }
		ip addr add "$MRRC_LINK_IP/24" dev "$dev" &&
		ip link set "$dev" up &&
		rdma link add rxe0 type rxe netdev "$dev" || return 1
	else
		ip link add veth0 type veth peer name veth1 &&
		ip addr add 10.211.0.1/24 dev veth0 &&
		ip link set veth0 up &&
		ip link set veth1 up &&
		rdma link add rxe0 type rxe netdev veth0 || return 1
	fi
	# shellcheck disable=SC2046 # one word per parameter
	insmod "$MRRC_KO" $(echo "${MRRC_KO_PARAMS:-}" | tr ',' ' ')
}

if ! setup > "$run/setup.log" 2>&1; then
	cat "$run/setup.log"
	echo "vm: setup failed"
	dmesg | tail -30
	finish 124
fi

cd "$(cat "$run/cwd")" || finish 124
export MRRC_KO MRRC_REPO MRRC_KVER MRRC_ACCEL MRRC_LINK_IP MRRC_LINK_PEER
sh -c "$(cat "$run/cmd")" < /dev/null
status=$?

# Kernel problems fail the run whatever the command said.
if [ -w /sys/kernel/debug/kmemleak ]; then
	echo scan > /sys/kernel/debug/kmemleak
	sleep 5
	echo scan > /sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak >> "$run/kmemleak"
fi
dmesg > "$run/dmesg"
if "$MRRC_REPO/tools/vm/dmesg-scan.sh" "$run/dmesg" "$run/kmemleak"; then
	finish "$status"
else
	finish 125
fi
