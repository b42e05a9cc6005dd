#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Test VM stage 2, PID 1 on the host's read-only root (init has mounted
# tmpfs on /tmp, /run, /var/tmp, /root, /mnt): rdma_rxe on a veth pair, mrrc.ko, then the command from
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
	echo o > /proc/sysrq-trigger
	sleep 30
}

setup() {
	ip link set lo up &&
	modprobe rdma_rxe &&
	modprobe ib_uverbs &&
	modprobe rdma_cm &&
	ip link add veth0 type veth peer name veth1 &&
	ip addr add 10.211.0.1/24 dev veth0 &&
	ip link set veth0 up &&
	ip link set veth1 up &&
	rdma link add rxe0 type rxe netdev veth0 &&
	insmod "$MRRC_KO"
}

if ! setup > "$run/setup.log" 2>&1; then
	cat "$run/setup.log"
	echo "vm: setup failed"
	dmesg | tail -30
	finish 124
fi

cd "$(cat "$run/cwd")" || finish 124
export MRRC_KO MRRC_REPO MRRC_KVER
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
