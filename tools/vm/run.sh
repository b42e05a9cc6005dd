#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Run a command in a fresh test VM: kernel $KVER under QEMU (KVM where a
# guest boots under it, else TCG: see accel.sh),
# root = the host's / read-only over virtio-9p, the repository read-write at
# the same path, rdma_rxe up as rxe0 and mrrc.ko loaded.  Exits with the
# command's status, 125 if the kernel log shows a problem, 124 if the VM
# failed or timed out.
#
# usage: run.sh KVER COMMAND...
# environment: VM_ACCEL (kvm|tcg, default: probed by accel.sh),
#              VM_TIMEOUT (seconds, default 1800), VM_MEM (default 2G),
#              VM_SMP (default 2; 1 under tcg-single), VM_APPEND (extra kernel parameters),
#              VM_DMESG (a file to keep the guest's kernel log in),
#              VM_MODPARAMS (mrrc.ko parameters, comma-separated, e.g.
#              ack_timeout=21,keepalive_ms=500);
#              VM_LINK_LOCAL, VM_LINK_REMOTE (unix datagram socket paths),
#              VM_LINK_IP, VM_LINK_PEER, VM_LINK_MAC: a virtio-net link to
#              another VM (see pair.sh), with rxe0 on it instead of veth0
set -eu

repo=$(cd "$(dirname "$0")/../.." && pwd)
kver=$1
shift
build=$repo/build
initrd=$build/vm/initramfs-$kver.cpio.gz
ko=$build/kmod/$kver/mrrc.ko

case "$repo" in
*[!A-Za-z0-9/._+-]*)
	echo "vm: repository path '$repo' has characters the kernel command line cannot carry" >&2
	exit 124 ;;
esac
for f in "/boot/vmlinuz-$kver" "$initrd" "$ko"; do
	[ -r "$f" ] || { echo "vm: missing $f (run make deps all)" >&2; exit 124; }
done

# shared/ beside the repository (papers, traces) is visible at the same
# path, read-only, even where the guest's tmpfs would hide it.
shared=$(cd "$repo/.." && pwd)/shared
share_args=
if [ -d "$shared" ]; then
	case "$shared" in
	*[!A-Za-z0-9/._+-]*) ;;
	*) share_args="-fsdev local,id=shared,path=$shared,security_model=none,readonly=on,multidevs=remap -device virtio-9p-pci,fsdev=shared,mount_tag=shared" ;;
	esac
fi

# A virtual link to another VM: each QEMU binds its own datagram socket
# and sends to the other's, so neither has to start first.
link_args=
link_env=
if [ -n "${VM_LINK_LOCAL:-}" ]; then
	link_args="-netdev dgram,id=link,local.type=unix,local.path=$VM_LINK_LOCAL,remote.type=unix,remote.path=$VM_LINK_REMOTE -device virtio-net-pci,netdev=link,mac=$VM_LINK_MAC"
	link_env="MRRC_LINK_IP=$VM_LINK_IP MRRC_LINK_PEER=$VM_LINK_PEER"
fi

accel=$("$repo/tools/vm/accel.sh" "$kver") || exit 124
smp=${VM_SMP:-2}
case $accel in
kvm) cpu="-accel kvm -cpu host" ;;
tcg-single)
	# One emulation thread runs the vCPUs in turn, each until it is
	# kicked (100 ms): a vCPU spinning on a lock or a completion the
	# other should deliver burns its whole turn.  One vCPU avoids that.
	cpu="-accel tcg,thread=single -cpu max,la57=off"
	smp=${VM_SMP:-1} ;;
*) cpu="-accel tcg,thread=multi -cpu max,la57=off" ;;
esac

# KFENCE wherever the kernel has it (Debian's 6.12 builds it in but off):
# it catches use-after-free and out-of-bounds at almost no cost.
kfence=
if grep -qx 'CONFIG_KFENCE=y' "/boot/config-$kver" 2>/dev/null; then
	kfence="kfence.sample_interval=10"
fi

mkdir -p "$build/vm"
run=$(mktemp -d "$build/vm/run.XXXXXX")
trap 'rm -rf "$run"' EXIT
printf '%s\n' "$*" > "$run/cmd"
pwd > "$run/cwd"

# tsc=unstable: under TCG the clocksource watchdog marks the TSC unstable
# at a random moment, and the kernel then live-patches the sched_clock
# static branches; a vCPU hitting a site mid-patch took an int3 oops on
# 6.12 ("Oops: int3" in ttwu_do_activate).  Marking it unstable at boot
# takes that patching off the test's timeline.
timeout --foreground -k 10 "${VM_TIMEOUT:-1800}" \
	qemu-system-x86_64 -nographic -no-reboot -nic none \
	-machine q35 -bios qboot.rom $cpu -smp "$smp" -m "${VM_MEM:-2G}" \
	-kernel "/boot/vmlinuz-$kver" -initrd "$initrd" \
	-append "console=ttyS0 loglevel=3 edd=off tsc=unstable panic=-1 $kfence ${VM_APPEND:-} MRRC_ACCEL=$accel${VM_MODPARAMS:+ MRRC_KO_PARAMS=$VM_MODPARAMS} MRRC_REPO=$repo MRRC_RUN=$run MRRC_KO=$ko MRRC_KVER=$kver${share_args:+ MRRC_SHARED=$shared}${link_env:+ $link_env}" \
	-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
	-device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
	-fsdev local,id=repo,path="$repo",security_model=none,multidevs=remap \
	-device virtio-9p-pci,fsdev=repo,mount_tag=repo $share_args $link_args \
	< /dev/null | tr -d '\r' || true

[ -z "${VM_DMESG:-}" ] || cp "$run/dmesg" "$VM_DMESG" 2> /dev/null || true
if [ ! -s "$run/status" ]; then
	echo "vm: no exit status from the guest (crash, panic or timeout)" >&2
	exit 124
fi
exit "$(cat "$run/status")"
