#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Print the QEMU accelerator the test VM uses on this machine: "kvm" if a
# guest really boots under KVM, else "tcg" (one TCG thread per vCPU) or
# "tcg-single" (one TCG thread for all vCPUs).  VM_ACCEL=kvm|tcg|tcg-single
# forces one.
#
# QEMU before 8.1 can translate a block from guest code that another vCPU
# thread is rewriting and keep the stale translation (fixed upstream by
# "accel/tcg: Always lock pages before translation").  The kernel rewrites
# its own text at run time (static keys, ftrace, kprobes, alternatives),
# and a vCPU then runs an int3 that is no longer there: "Oops: int3", RIP
# one byte into a NOP, faults inside the slab allocator.  A single TCG
# thread cannot race with itself, so with such a QEMU "tcg" means
# "tcg-single".
#
# A /dev/kvm node proves nothing: on some machines (nested virtualisation)
# a KVM guest hangs at kernel entry, or QEMU aborts with -cpu host.  So the
# probe boots a Debian kernel under KVM with no root file system and waits
# (VM_ACCEL_PROBE_TIMEOUT, default 40 s) for it to reach the "VFS: Unable
# to mount root fs" panic, which proves the whole early boot ran.  The
# answer is remembered per machine, QEMU version and host kernel in
# $MRRC_CACHE (default /var/cache/mrrc); delete accel-* there to probe
# again.
#
# usage: accel.sh [KVER]   (the kernel to probe with; default: newest)
set -u

# tcg: multi-threaded TCG unless this QEMU has the stale-translation race
tcg() {
	v=$(qemu-system-x86_64 --version 2>/dev/null | sed -n \
		'1s/.*version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
	set -- $v
	if [ "$#" -eq 2 ] && { [ "$1" -lt 8 ] ||
		{ [ "$1" -eq 8 ] && [ "$2" -lt 1 ]; }; }; then
		echo tcg-single
	else
		echo tcg
	fi
}

case "${VM_ACCEL:-}" in
kvm|tcg|tcg-single) echo "$VM_ACCEL"; exit 0 ;;
'') ;;
*) echo "accel: VM_ACCEL must be kvm, tcg or tcg-single, not '$VM_ACCEL'" >&2
	exit 2 ;;
esac

if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
	tcg
	exit 0
fi

cache=${MRRC_CACHE:-/var/cache/mrrc}
key=$( { cat /etc/machine-id 2>/dev/null; uname -r;
	qemu-system-x86_64 --version 2>/dev/null | head -1;
	grep -m1 '^model name' /proc/cpuinfo; } | sha256sum | cut -c1-10)
memo=$cache/accel-$key
if [ -s "$memo" ]; then
	if [ "$(cat "$memo")" = kvm ]; then echo kvm; else tcg; fi
	exit 0
fi

kver=${1:-$(ls /boot/vmlinuz-* 2>/dev/null | grep -v -- '-mrrc-dbg-' |
	sed 's|/boot/vmlinuz-||' | sort -V | tail -1)}
[ -n "$kver" ] || { tcg; exit 0; }
out=$(mktemp)
timeout -k 5 "${VM_ACCEL_PROBE_TIMEOUT:-40}" qemu-system-x86_64 -nographic \
	-no-reboot -nic none -machine q35,accel=kvm -cpu host -smp 1 -m 256M \
	-kernel "/boot/vmlinuz-$kver" \
	-append "console=ttyS0 panic=-1 root=/dev/nonexistent" \
	< /dev/null > "$out" 2>&1
if grep -q 'Unable to mount root fs\|Kernel panic - not syncing' "$out"; then
	accel=kvm
else
	accel=tcg
	echo "accel: KVM probe did not boot (hang or abort), using TCG:" >&2
	tr -d '\r' < "$out" | tail -3 | sed 's/^/accel:   /' >&2
fi
rm -f "$out"
mkdir -p "$cache" && echo "$accel" > "$memo.tmp" && mv "$memo.tmp" "$memo"
if [ "$accel" = kvm ]; then echo kvm; else tcg; fi
