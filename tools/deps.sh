#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Install what mrrc needs from Debian's archive and extract the kselftest
# harness and checkpatch.pl from linux-source-6.1 into build/.  Idempotent:
# prints nothing and touches nothing when everything is already there.
#
# Linux 6.12 (the second supported guest kernel, and the source of the
# debug guest kernel) comes from bookworm-backports; this script adds that
# suite when it is missing.  It says what it will change on the host (the
# packages, the apt source, the default boot kernel) before it does.
#
# usage: deps.sh BUILD_DIR
set -eu

build=$1
pkgs="gcc g++ make pkg-config cpio xz-utils kmod iproute2 busybox-static
qemu-system-x86 linux-image-amd64 linux-headers-amd64 linux-source-6.1
rdma-core ibverbs-utils perftest ibverbs-providers libibverbs-dev librdmacm-dev
libcmocka-dev sparse valgrind dkms man-db python3-docutils gnuplot-nox
bc bison flex libelf-dev libssl-dev debootstrap git
libmemcached-tools python3-pymemcache libucx-dev ucx-utils
fio nvme-cli e2fsprogs"
# Packages that come with a system service mrrc does not want running:
# only their programs are used (BENCH=kv starts its own memcached in the
# test VM).  memcached's postinst starts memcached on 127.0.0.1:11211, the
# port of mrrcd.service, and fails the whole install when that start
# fails (port taken; in a chroot, it would leave a daemon running in it).
# These are installed apart, with a policy-rc.d(8) that forbids every
# start (exit 101: invoke-rc.d and deb-systemd-invoke both obey it, so
# the postinst starts nothing and succeeds), then disabled at boot.
svc_pkgs="memcached"
# From bookworm-backports.
bpo_pkgs="linux-source-6.12"

# Ours (a marker line) out of the way and the administrator's own back,
# whenever this runs: also after a run killed while it installed.
prc=/usr/sbin/policy-rc.d
prc_restore() {
	if [ -f "$prc" ] && grep -qx '# mrrc tools/deps.sh: temporary' "$prc"; then
		rm -f "$prc"
	fi
	[ ! -e "$prc.mrrc-saved" ] || mv -f "$prc.mrrc-saved" "$prc"
}
prc_restore

installed() {
	dpkg-query -W -f '${Status}\n' "$1" 2>/dev/null | grep -q 'ok installed'
}
missing=
for p in $pkgs; do
	installed "$p" || missing="$missing $p"
done
svc_missing=
for p in $svc_pkgs; do
	installed "$p" || svc_missing="$svc_missing $p"
done
bpo_missing=
for p in $bpo_pkgs; do
	installed "$p" || bpo_missing="$bpo_missing $p"
done
ls /lib/modules/6.12.*/build/Makefile > /dev/null 2>&1 ||
	bpo_missing="$bpo_missing linux-image-amd64 linux-headers-amd64"

mkdir -p "$build"
[ -n "$missing$svc_missing$bpo_missing" ] || missing_none=1

apt_update() {
	apt-get update -q > "$build/apt.log" 2>&1 || {
		cat "$build/apt.log" >&2
		echo "deps: apt-get update failed" >&2
		exit 1
	}
}

apt_install() {
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends "$@" > "$build/apt.log" 2>&1 || {
		cat "$build/apt.log" >&2
		echo "deps: apt-get install $* failed" >&2
		exit 1
	}
}

# apt_install_nostart PKG...: apt_install with no service started, nor
# enabled at boot.  An administrator's own /usr/sbin/policy-rc.d is set
# aside meanwhile and put back afterwards.
apt_install_nostart() {
	[ ! -e "$prc" ] || mv "$prc" "$prc.mrrc-saved"
	trap prc_restore EXIT
	trap 'exit 130' INT TERM
	printf '#!/bin/sh\n# mrrc tools/deps.sh: temporary\nexit 101\n' > "$prc"
	chmod 755 "$prc"
	apt_install "$@"
	prc_restore
	trap - EXIT INT TERM
	for p in "$@"; do
		[ -x "/etc/init.d/$p" ] || [ -e "/lib/systemd/system/$p.service" ] ||
			continue
		update-rc.d "$p" disable > /dev/null 2>&1 || true
		deb-systemd-helper disable "$p.service" > /dev/null 2>&1 || true
	done
}

if [ -z "${missing_none:-}" ]; then
	# Say what changes on this machine before changing it.
	echo "deps: this installs Debian packages with apt-get:$missing$svc_missing${bpo_missing:+ (from bookworm-backports:$bpo_missing)}"
	[ -z "$svc_missing" ] ||
		echo "deps: the services of$svc_missing are neither started nor enabled at boot"
	if [ -n "$bpo_missing" ] &&
	   ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		echo "deps: it adds the bookworm-backports suite to apt's sources:" \
			"/etc/apt/sources.list.d/mrrc-bookworm-backports.sources"
		add_bpo=1
	fi
	case $bpo_missing in
	*linux-image-amd64*)
		echo "deps: Linux 6.12 from bookworm-backports becomes the host's" \
			"default boot kernel (6.1 stays installed: choose it in GRUB" \
			"or set GRUB_DEFAULT to keep it); the test VMs boot both" ;;
	esac
	if [ -n "${add_bpo:-}" ]; then
		cat > /etc/apt/sources.list.d/mrrc-bookworm-backports.sources <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	fi
	apt_update
	if [ -n "$missing" ]; then
		apt_install $missing
		# Keep the 6.1 kernel when the backports metapackage replaces it.
		apt-mark manual $(dpkg-query -W -f '${Package}\n' \
			'linux-image-6.1.*' 'linux-headers-6.1.*' 2>/dev/null) \
			> /dev/null 2>&1 || true
	fi
	[ -z "$svc_missing" ] || apt_install_nostart $svc_missing
	[ -z "$bpo_missing" ] || apt_install -t bookworm-backports $bpo_missing
fi

# The kselftest harness and checkpatch.pl, from Debian's kernel source.
lt=$build/linux-tools
if [ ! -f "$lt/scripts/checkpatch.pl" ] ||
   [ ! -f "$lt/tools/testing/selftests/kselftest_harness.h" ]; then
	echo "deps: extracting kselftest harness and checkpatch.pl from linux-source-6.1"
	rm -rf "$lt.tmp"
	mkdir -p "$lt.tmp"
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$lt.tmp" \
		--strip-components=1 \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
		linux-source-6.1/tools/testing/selftests/kselftest.h \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
	rm -rf "$lt"
	mv "$lt.tmp" "$lt"
fi
