#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `make check-fresh`: CI of the README.  Builds a minimal Debian 12 root
# with debootstrap (minbase plus git, make, gcc, sudo), clones this
# repository's HEAD into it and runs the README's two commands there, as
# root, exactly as a new user would: `make run`, then `make check`.  Both
# must succeed the first time.  Nothing of the host's build state is
# visible inside: not build/, not the installed kernels, not the debug
# kernel cache (it is built anew, which dominates the run time).
#
# environment: FRESH_ROOT (default /var/tmp/mrrc-fresh; wiped first),
#              FRESH_MIRROR (default http://deb.debian.org/debian),
#              FRESH_SECURITY_MIRROR (default: FRESH_MIRROR's host,
#              debian-security),
#              FRESH_KEEP=1 keeps the root afterwards for inspection.
# Logs: build/check-fresh/{debootstrap,run,check}.log
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
root=${FRESH_ROOT:-/var/tmp/mrrc-fresh}
mirror=${FRESH_MIRROR:-http://deb.debian.org/debian}
logs=$top/build/check-fresh
mkdir -p "$logs"

command -v debootstrap > /dev/null || {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap > "$logs/apt.log" 2>&1 ||
		{ cat "$logs/apt.log"; exit 1; }
}

mounts=
cleanup() {
	local m
	for m in $mounts; do
		umount -l "$root$m" 2> /dev/null
	done
	[ -n "${FRESH_KEEP:-}" ] || rm -rf --one-file-system "$root"
}
trap cleanup EXIT

step() {	# step NAME COMMAND...: time a step, its output in NAME.log
	local name=$1 t0 st
	shift
	t0=$(date +%s)
	echo "check-fresh: $name ..."
	"$@" > "$logs/$name.log" 2>&1
	st=$?
	echo "check-fresh: $name: exit $st after $(($(date +%s) - t0)) s"
	[ "$st" -eq 0 ] || { tail -40 "$logs/$name.log"; exit 1; }
}

rm -rf --one-file-system "$root"
step debootstrap debootstrap --variant=minbase \
	--include=git,make,gcc,sudo,ca-certificates bookworm "$root" "$mirror"

for m in /proc /sys /dev /dev/pts; do
	case $m in
	/proc) mount -t proc proc "$root$m" ;;
	/sys) mount -t sysfs sysfs "$root$m" ;;
	/dev) mount --bind /dev "$root$m" ;;
	/dev/pts) mount -t devpts devpts "$root$m" ;;
	esac || { echo "check-fresh: cannot mount $m"; exit 1; }
	mounts="$m $mounts"
done
cp /etc/resolv.conf "$root/etc/resolv.conf" 2> /dev/null
# The suites a Debian 12 installation has: debootstrap writes only the
# release itself.
sec=${FRESH_SECURITY_MIRROR:-${mirror%/debian}/debian-security}
cat > "$root/etc/apt/sources.list" <<EOF2
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $sec bookworm-security main
EOF2

git -C "$top" rev-parse HEAD > "$logs/commit"
step clone git clone -q "$top" "$root/src/mrrc"

in_root() {
	chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 /bin/sh -c "cd /src/mrrc && $*"
}
step run in_root make run
step check in_root make check
tail -1 "$logs/check.log"
echo "check-fresh: the README's two commands passed in a fresh root at $(cat "$logs/commit")"
