#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# mrrc_blk's tests, as TAP into OUT/blk.tap (Documentation/mrrc_blk.rst).
#
#   blk.sh local OUT    one VM: mrrc_blksrv and the client on the same rxe
#                       device; the server is unloaded mid-I/O at the end
#   blk.sh serve        VM a of a pair: lend memory until b says "kill"
#                       (TCP port 7727), then unload mrrc_blksrv mid-I/O
#   blk.sh client OUT   VM b of a pair: the tests against VM a
#
# Both sides need mrrc.ko loaded (the test VM does that).  BLK_CYCLES
# attach/detach cycles (default 5); with kmemleak (the debug kernel) the
# VM's own end-of-run scan reports any leak.  BLK_QUICK=1 (for the slow
# debug kernel, the second pairing of make check) writes a smaller tree
# and runs three of the fio checks on 1 MiB instead of seven on 2 MiB;
# BLK_IO=0 (the debug lane) skips the file system and fio checks: the
# cycles, the server's and the RDMA device's departure remain.
set -u
mode=${1:?usage: blk.sh local OUT | serve | client OUT}
kdir=$(dirname "$MRRC_KO")
ctl_port=7727
cycles=${BLK_CYCLES:-5}
quick=${BLK_QUICK:-0}
io=${BLK_IO:-1}
fio_size=2M
[ "$quick" = 0 ] || fio_size=1M
size_mb=64
export PATH="$PATH:/usr/sbin:/sbin"

if [ "$mode" = serve ]; then
	insmod "$kdir/mrrc_blksrv.ko" size_mb=$size_mb || exit 1
	# b's "kill" (or "done" when it ends early); bounded if b never says.
	msg=$(timeout 900 busybox nc -l -p $ctl_port)
	echo "blk serve: b says '$msg'"
	st=0
	rmmod mrrc_blksrv || st=1
	exit $st
fi

out=${2:?usage: blk.sh $mode OUT}
mkdir -p "$out"
tap=$out/blk.tap
: > "$tap"
n=0 failed=0
ok() {	# ok STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $n - $2" >> "$tap"
	else
		echo "not ok $n - $2" >> "$tap"
		failed=$((failed + 1))
	fi
}
note() { echo "# $*" >> "$tap"; }
t_start=$(date +%s)
elapsed() { note "$1: $(($(date +%s) - t_start)) s"; t_start=$(date +%s); }
log=$out/blk.log
: > "$log"
run() { "$@" >> "$log" 2>&1; }
work=$(mktemp -d)
cd "$work" || exit 1

if [ "$mode" = local ]; then
	peer=10.211.0.1
	insmod "$kdir/mrrc_blksrv.ko" size_mb=$size_mb
	ok $? "mrrc_blksrv loads (size_mb=$size_mb)"
	kill_server() { rmmod mrrc_blksrv; }
	say_done() { :; }
else
	peer=$MRRC_LINK_PEER
	kill_server() { echo kill | timeout 10 busybox nc "$peer" $ctl_port; }
	said=
	say_done() {
		[ -n "$said" ] || echo done | timeout 10 busybox nc "$peer" $ctl_port
	}
	trap 'say_done' EXIT
fi

insmod "$kdir/mrrc_blk.ko" nr_queues=2
ok $? "mrrc_blk loads"
dev=

# ---- bad requests: clean errors, nothing attached ----------------------
expect_err() {	# expect_err WHAT ERRNO-TEXT ARGS...
	what=$1 want=$2
	shift 2
	mrrc blk "$@" > "$out/err.out" 2> "$out/err.txt"
	st=$?
	grep -q "$want" "$out/err.txt"
	ok $(( st == 0 || $? != 0 )) "$what: fails with '$want'"
	cat "$out/err.txt" >> "$log"
}
expect_err "attach to a host name" "Invalid argument" attach not-an-address
expect_err "attach with port 0" "Invalid argument" attach "$peer:0"
expect_err "attach with depth 257" "Invalid argument" attach "$peer" -d 257
# In a pair, b may get here before a's link or rxe device answers: until
# then the attach fails with "No route to host" or "timed out", not with a
# refusal.  Wait (60 s at most) for the peer's CM to answer at all.
if [ "$mode" != local ]; then
	until=$(($(date +%s) + 60))
	while [ "$(date +%s)" -lt $until ]; do
		mrrc blk attach "$peer:7799" > /dev/null 2> "$out/err.txt"
		grep -q "No route to host\|timed out" "$out/err.txt" || break
		cat "$out/err.txt" >> "$log"
		sleep 2
	done
fi
expect_err "attach to a port with no server" "Connection refused" \
	attach "$peer:7799"
expect_err "detach of no device" "no device" detach mrrcb9
[ -z "$(ls /sys/block | grep mrrcb)" ]
ok $? "no device left by the failed attaches"

# ---- attach -------------------------------------------------------------
attach() {
	dev=$(mrrc blk attach "$peer" "$@" 2>> "$log")
	[ -n "$dev" ] && [ -b "$dev" ]
}
# In a pair, a may still be loading mrrc_blksrv: try for 60 s.
i=0
until attach -q 2 || [ $i -ge 30 ]; do
	sleep 2
	i=$((i + 1))
done
[ -n "$dev" ]
ok $? "attach $peer prints the new device ($dev)"
name=${dev#/dev/}
[ "$(cat /sys/block/$name/size 2> /dev/null)" = $((size_mb * 2048)) ]
ok $? "the device has the server's size ($size_mb MiB)"
[ "$(cat /sys/block/$name/mrrc/state 2> /dev/null)" = live ] &&
	[ "$(cat /sys/block/$name/mrrc/queues 2> /dev/null)" = "2 64" ]
ok $? "sysfs: state live, 2 queues of 64"
mrrc -j blk list | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[0]["state"]=="live"' 2>> "$log"
ok $? "mrrc -j blk list: valid JSON, the device live"

# ---- a file system: write a tree, check it, verify it after remount ----
fs_test() {
	run mkfs.ext4 -q -F "$dev" || return 1
	mkdir -p /mnt/blk && run mount "$dev" /mnt/blk || return 1
	tree="$MRRC_REPO/kmod $MRRC_REPO/Documentation"
	[ "$quick" = 0 ] || tree=$MRRC_REPO/kmod/blk
	# shellcheck disable=SC2086
	cp -r $tree /mnt/blk/ &&
		dd if=/dev/urandom of=/mnt/blk/random bs=1M count=4 2> /dev/null &&
		(cd /mnt/blk && find . -type f ! -name sums -exec sha256sum {} + > sums) ||
		{ umount /mnt/blk; return 1; }
	run umount /mnt/blk || return 1
	run fsck.ext4 -fn "$dev" || return 1
	run mount "$dev" /mnt/blk || return 1
	(cd /mnt/blk && sha256sum --quiet -c sums) >> "$log" 2>&1
	st=$?
	run umount /mnt/blk || st=1
	return $st
}
elapsed "set-up and bad requests"
if [ "$io" = 1 ]; then
fs_test
ok $? "ext4: mkfs, a tree of files, umount, fsck clean, remount, checksums match"
elapsed "file system"

# ---- fio with crc32c verification ----------------------------------------
fio_verify() {	# fio_verify BS IODEPTH [more fio options]
	bs=$1 qd=$2
	shift 2
	run timeout 300 fio --name=verify --filename="$dev" --rw=randwrite \
		--bs="$bs" --iodepth="$qd" --ioengine=libaio --direct=1 \
		--size=$fio_size --offset=8M --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --verify_state_save=0 "$@"
}
cfgs="4k 1|4k 32|128k 32|512 4"
[ "$quick" = 0 ] || cfgs="4k 32"
IFS='|'
set -- $cfgs
unset IFS
for cfg in "$@"; do
	# shellcheck disable=SC2086
	fio_verify $cfg
	ok $? "fio verify=crc32c bs=${cfg% *} iodepth=${cfg#* }, direct"
done
fio_verify 16k 4 --direct=0 --fsync=4
ok $? "fio verify=crc32c bs=16k, buffered with fsync (FLUSH)"
fio_verify 4k 8 --sync=1 --ioengine=psync
ok $? "fio verify=crc32c bs=4k, O_SYNC writes (FUA)"

st=/sys/block/$name/mrrc/stats
blkstat() { awk -v k="$1" '$1 == k { print $2 }' "$st"; }
hits=$(( $(blkstat hit_exact) + $(blkstat hit_subset) + $(blkstat hit_span) ))
req=$(blkstat reg_requests)
note "registration cache: $hits hits in $req requests, $(blkstat miss) misses, $(blkstat overlap) overlaps; pool: $(blkstat pool_hits) hits, $(blkstat pool_misses) misses"
[ "$hits" -gt 0 ] && [ "$(blkstat errors)" = 0 ] && [ "$(blkstat flushes)" -gt 0 ] &&
	[ "$(blkstat fua)" -gt 0 ]
ok $? "stats: cache hits, flushes and FUA writes seen, no error"
elapsed "fio"
else
note "file system and fio checks skipped (BLK_IO=0)"
fi

# ---- detach, unload with a device attached, cycles ----------------------
mrrc blk detach "$name" 2>> "$log" && [ ! -e "$dev" ]
ok $? "detach removes $dev"
attach -q 1 && rmmod mrrc_blk && [ ! -e /sys/block/$name ]
ok $? "rmmod mrrc_blk with a device attached detaches it"
insmod "$kdir/mrrc_blk.ko" nr_queues=2
i=0 good=0
while [ $i -lt "$cycles" ]; do
	if attach && dd if="$dev" of=/dev/null bs=4k count=16 iflag=direct 2> /dev/null &&
	   mrrc blk detach "$dev" 2>> "$log"; then
		good=$((good + 1))
	fi
	i=$((i + 1))
done
[ $good -eq "$cycles" ] && [ -z "$(ls /sys/block | grep mrrcb)" ]
ok $? "$cycles attach/read/detach cycles"
elapsed "detach, unload, cycles"

# ---- the server goes away mid-I/O ----------------------------------------
attach -q 2
ok $? "attach again for the failure test"
fio --name=doomed --filename="$dev" --rw=randrw --bs=4k --iodepth=16 \
	--ioengine=libaio --direct=1 --size=16M --time_based --runtime=120 \
	> "$out/doomed.txt" 2>&1 &
fio_pid=$!
sleep 3
t0=$(date +%s)
kill_server
said=1
# fio must stop on an I/O error soon: RC retries end within seconds.
i=0
while kill -0 $fio_pid 2> /dev/null && [ $i -lt 90 ]; do
	sleep 1
	i=$((i + 1))
done
if kill -0 $fio_pid 2> /dev/null; then
	kill -KILL $fio_pid
	ok 1 "I/O fails after the server went away (fio still running after 90 s)"
else
	wait $fio_pid
	fst=$?
	note "fio stopped $(($(date +%s) - t0)) s after the server went, status $fst"
	[ $fst -ne 0 ] && grep -q "Input/output error\|error=5\|err= *5" "$out/doomed.txt"
	ok $? "I/O fails with EIO after the server went away"
fi
cat "$out/doomed.txt" >> "$log"
[ "$(cat /sys/block/$name/mrrc/state 2> /dev/null)" = failed ]
ok $? "sysfs state: failed"
dd if="$dev" of=/dev/null bs=4k count=1 iflag=direct 2> /dev/null
ok $(( $? == 0 )) "new I/O fails at once"
timeout 60 mrrc blk detach "$name" 2>> "$log" && [ ! -e "$dev" ]
ok $? "the failed device detaches"
rmmod mrrc_blk
ok $? "mrrc_blk unloads"
elapsed "server gone"

# ---- the RDMA device goes away (one VM: the server's and the client's) --
if [ "$mode" = local ]; then
	netdev=$(rdma link show rxe0/1 2> /dev/null | sed -n 's/.* netdev \([^ ]*\).*/\1/p')
	insmod "$kdir/mrrc_blksrv.ko" size_mb=$size_mb &&
		insmod "$kdir/mrrc_blk.ko" && attach -q 2
	ok $? "attach before the RDMA device is removed"
	timeout 60 rdma link delete rxe0
	ok $? "rdma link delete rxe0 with a device attached returns"
	[ ! -e /sys/block/$name ]
	ok $? "the device was detached with the RDMA device"
	rmmod mrrc_blk && rmmod mrrc_blksrv
	ok $? "both modules unload after the device removal"
	[ -z "$netdev" ] || rdma link add rxe0 type rxe netdev "$netdev"
	ok $? "rxe0 back on $netdev"
	elapsed "device removal"
fi

echo "1..$n" >> "$tap"
cd / && rm -rf "$work"
cat "$tap"
[ $failed -eq 0 ]
