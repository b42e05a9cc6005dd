#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The debug guest kernel (KASAN, KFENCE, lockdep, kmemleak, fault
# injection, rdma_rxe built in), from Debian's linux-source-6.12.
#
# The kernel is keyed by what it is made of: the recipe version below
# (bump it when the build steps change), tools/vm/debug.config and the
# linux-source-6.12 package version.  Its
# release is <version>-mrrc-dbg-<key>; it is built once per machine into
# $MRRC_CACHE (default /var/cache/mrrc) and installed like a Debian kernel
# (/boot/vmlinuz-<release>, /lib/modules/<release> with build -> the tree),
# so every clone of the repository on the machine reuses it.
#
# usage: debug-kernel.sh            build if absent, print the release
#        debug-kernel.sh --key      print the cache key only
#        debug-kernel.sh --release  print the release if built, else fail
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${MRRC_CACHE:-/var/cache/mrrc}
tarball=/usr/src/linux-source-6.12.tar.xz
frag=$here/debug.config

srcver=$(dpkg-query -W -f '${Version}' linux-source-6.12 2>/dev/null || true)
[ -n "$srcver" ] && [ -r "$tarball" ] || {
	echo "debug-kernel: linux-source-6.12 is not installed (make deps)" >&2
	exit 1
}
recipe=1
key=$( { echo "recipe $recipe"; cat "$frag"; echo "$srcver"; } | sha256sum | cut -c1-10)
dir=$cache/debug-$key

case "${1:-}" in
--key)
	echo "$key"
	exit 0 ;;
--release)
	[ -f "$dir/done" ] && cat "$dir/release" || exit 1
	exit 0 ;;
esac

if [ -f "$dir/done" ]; then
	rel=$(cat "$dir/release")
	if [ -f "/boot/vmlinuz-$rel" ] && [ -f "/lib/modules/$rel/build/Makefile" ]; then
		echo "$rel"
		exit 0
	fi
fi

# One build at a time per machine.
mkdir -p "$cache"
exec 9> "$cache/debug.lock"
flock 9
if [ -f "$dir/done" ] && [ -f "/boot/vmlinuz-$(cat "$dir/release")" ]; then
	cat "$dir/release"
	exit 0
fi

t0=$(date +%s)
echo "debug-kernel: building $key from linux-source-6.12 $srcver into $dir (about 15 min on 2 cores)" >&2
rm -rf "$dir"
mkdir -p "$dir"
log=$dir/build.log
{
	tar -xJf "$tarball" -C "$dir"
	src=$dir/linux-source-6.12
	cd "$src"
	make defconfig
	./scripts/config --set-str LOCALVERSION "-mrrc-dbg-$key" \
		--disable LOCALVERSION_AUTO
	./scripts/kconfig/merge_config.sh -m .config \
		kernel/configs/kvm_guest.config "$frag"
	make olddefconfig
	# Every option of the fragment must have survived olddefconfig.
	bad=$(grep -E '^CONFIG_[A-Z0-9_]+=[ym]$' "$frag" | while read -r l; do
		grep -qx "$l" .config || echo "$l"; done)
	if [ -n "$bad" ]; then
		echo "debug-kernel: options not set after olddefconfig: $bad"
		exit 1
	fi
	make -j"$(($(nproc) + 1))" bzImage modules
	make -s kernelrelease > "$dir/release"
	rel=$(cat "$dir/release")
	make modules_install INSTALL_MOD_STRIP=1
	ln -sfn "$src" "/lib/modules/$rel/build"
	cp arch/x86/boot/bzImage "/boot/vmlinuz-$rel"
	cp .config "/boot/config-$rel"
} > "$log" 2>&1 || {
	tail -60 "$log" >&2
	echo "debug-kernel: build failed, log in $log" >&2
	exit 1
}
touch "$dir/done"
echo "debug-kernel: built $(cat "$dir/release") in $(($(date +%s) - t0)) s" >&2
cat "$dir/release"
