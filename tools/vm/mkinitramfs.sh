#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Build the test VM's initramfs for kernel $1 into $2: static busybox, the
# modules needed to mount the host's / over virtio-9p, and tools/vm/init.
set -eu

kver=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkdir -p "$tmp/bin" "$tmp/lib/modules" "$tmp/dev" "$tmp/proc" "$tmp/sys" \
	 "$tmp/newroot"
cp /bin/busybox "$tmp/bin/busybox"
cp "$here/init" "$tmp/init"
chmod 755 "$tmp/init"

# Module dependencies in load order; decompress .ko.xz/.ko.zst because the
# initramfs loads them with busybox insmod.
: > "$tmp/lib/modules/order"
for m in virtio_pci 9pnet_virtio 9p; do
	modprobe -S "$kver" --show-depends "$m" 2>/dev/null |
		awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r ko; do
	base=$(basename "$ko")
	case "$base" in
	*.ko.xz)  xz -dc "$ko" > "$tmp/lib/modules/${base%.xz}"; base=${base%.xz} ;;
	*.ko.zst) zstd -qdc "$ko" > "$tmp/lib/modules/${base%.zst}"; base=${base%.zst} ;;
	*)        cp "$ko" "$tmp/lib/modules/$base" ;;
	esac
	echo "$base" >> "$tmp/lib/modules/order"
done

(cd "$tmp" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"
