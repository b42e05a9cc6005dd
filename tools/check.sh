#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `make check`: every test of the project.  Each check prints one
# PASS/FAIL/SKIP line; the last line is "N passed, N failed, N skipped".
# Logs go to build/check/.  Exits non-zero if anything failed.
#
#   static   W=1 module build and sparse on every installed Debian kernel,
#            checkpatch --strict, uapi header standalone, userspace -Werror
#   unit     cmocka tests of libmrrc and the tool, plain, under ASan+UBSan
#            and under valgrind
#   vm       the kselftest programs in the test VM on every installed
#            kernel, each TAP result counted, plus the dmesg scan; the
#            remote selftests between two VMs (oldest and newest kernel,
#            each way round)
#   debug    the debug guest kernel (KASAN, KFENCE, lockdep, kmemleak,
#            fault injection; tools/vm/debug-kernel.sh builds it once per
#            machine): the single-VM selftests with their long loops
#            shortened (MRRC_TEST_QUICK), the fault-injection sweep and a
#            short seeded fuzz run.  With MRRC_CHECK_FULL=1 (make
#            check-full) the loops whole, the two-VM suites with the debug
#            kernel on each side and a longer fuzz run.
#
# Every VM uses KVM where a guest boots under it, TCG otherwise
# (tools/vm/accel.sh; VM_ACCEL=kvm|tcg|tcg-single forces one).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
B=$top/build
# Warnings are errors in every build of the check (the Makefile's WERROR).
export WERROR=1
# Builds use every core (the VM sections run one VM per core anyway).
J=-j$(nproc)
L=$B/check
rm -rf "$L"
mkdir -p "$L"

pass=0 fail=0 skip=0
start=$(date +%s)
mark=
section() {	# section TITLE: report how long the previous one took
	local now
	now=$(date +%s)
	[ -z "$mark" ] || echo "   (section took $((now - mark)) s)"
	mark=$now
	echo "== $1"
}
. tools/check-lib.sh
# Fails if the log of a command that succeeded has warnings in it.
no_warnings() {
	local out st
	out=$("$@" 2>&1)
	st=$?
	printf '%s\n' "$out"
	[ "$st" -eq 0 ] || return "$st"
	! printf '%s\n' "$out" | grep -v 'Skipping BTF' | grep -qiE 'warning|error'
}
# Count the results of kselftest TAP files.
tap() {
	local prefix=$1 f line
	shift
	for f in "$@"; do
		[ -f "$f" ] || continue
		while IFS= read -r line; do
			case $line in
			"ok "*"# SKIP"*) result SKIP "$prefix ${line#ok }" ;;
			"ok "*) result PASS "$prefix ${line#ok }" ;;
			"not ok "*) result FAIL "$prefix ${line#not ok }" "$f" ;;
			esac
		done < "$f"
	done
}

# A program must have reported (a TAP plan), whatever the exit status said.
reported() {	# reported NAME TAPFILE LOG
	grep -q '^1\.\.[1-9]' "$2" 2>/dev/null ||
		result FAIL "$1 produced no TAP results" "$3"
}
# The status of tools/vm/run.sh or pair.sh.
vm_status() {	# vm_status PREFIX STATUS LOG PASS-TEXT
	case $2 in
	0) result PASS "$1 $4" ;;
	125) result FAIL "$1 dmesg scan: kernel problems reported" "$3" ;;
	124) result FAIL "$1 VM boot, setup or timeout" "$3" ;;
	*) result FAIL "$1 VM run exited $2" "$3" ;;
	esac
}

KVERS=$(make -s --no-print-directory -f Makefile print-kvers)
[ -n "$KVERS" ] || { echo "check: no Debian kernel with headers installed"; exit 1; }

section "static checks"
for k in $KVERS; do
	rm -rf "$B/kmod/$k"
	check "kmod W=1 build, no warnings ($k)" no_warnings make -s $J module KVER="$k"
	rm -rf "$B/sparse/$k" && mkdir -p "$B/sparse/$k/selftests" &&
		cp -a Kbuild VERSION kmod uapi "$B/sparse/$k/" &&
		cp -a selftests/ktest "$B/sparse/$k/selftests/"
	check "sparse C=2, no warnings ($k)" no_warnings \
		make -s $J -C "/lib/modules/$k/build" M="$B/sparse/$k" C=2 W=1 \
		MRRC_KTEST=m modules
done
# Clean means no finding of any level: CHECKs count too.
checkpatch_clean() {
	local out
	out=$(perl "$B/linux-tools/scripts/checkpatch.pl" --strict --no-tree \
		--terse --show-types -f "$@" 2>&1)
	printf '%s\n' "$out"
	! printf '%s\n' "$out" |
		grep -v '^total: 0 errors, 0 warnings, 0 checks' | grep -q .
}
check "checkpatch --strict kmod/ uapi/ selftests/ktest/" checkpatch_clean \
	kmod/*.c kmod/*.h kmod/blk/*.c kmod/blk/*.h uapi/*.h selftests/ktest/*.c
# DKMS in a private tree: what `make dkms-install` ships must build.
VERSION=$(cat VERSION)
dkms_build() {
	local d=$B/dkms v=$VERSION
	rm -rf "$d" && mkdir -p "$d/tree" &&
	make -s dkms-install DESTDIR="$d/root" DKMS_SRC=/src/mrrc-$v &&
	test -f "$d/root/usr/lib/modules-load.d/mrrc.conf" &&
	test -f "$d/root/usr/lib/udev/rules.d/90-mrrc.rules" &&
	dkms --dkmstree "$d/tree" --sourcetree "$d/root/src" add -m mrrc -v "$v" &&
	for k in $KVERS; do
		dkms --dkmstree "$d/tree" --sourcetree "$d/root/src" build \
			-m mrrc -v "$v" -k "$k" || return 1
		ls "$d/tree/mrrc/$v/$k/x86_64/module/"mrrc.ko* \
		   "$d/tree/mrrc/$v/$k/x86_64/module/"mrrc_blk.ko* \
		   "$d/tree/mrrc/$v/$k/x86_64/module/"mrrc_blksrv.ko* || return 1
		modinfo -F version "$d/tree/mrrc/$v/$k/x86_64/module/"mrrc.ko* |
			grep -qx "$v" || return 1
	done
}
check "dkms build from the installed source ($(echo $KVERS))" dkms_build
check "uapi header compiles standalone (C, -pedantic)" \
	gcc -fsyntax-only -Wall -Wextra -Werror -pedantic -std=c99 -x c uapi/mrrc_abi.h
check "uapi header compiles standalone (C++)" \
	g++ -fsyntax-only -Wall -Wextra -Werror -x c++ uapi/mrrc_abi.h
check "userspace builds with -Wall -Wextra -Werror" \
	make -s $J lib tools selftests unit-tests examples
check "library exports only versioned mrrc_ symbols" \
	sh -c "nm -D --defined-only $B/lib/libmrrc.so | awk '\$2 == \"T\" { print \$3 }' |
		grep -v '^mrrc_[a-z_0-9]*@@\{0,1\}MRRC_0\.[0-9]*\$' | grep . && exit 1 || exit 0"
check "libmrrc.a links into a shared library (no symbol versions in it)" \
	gcc -shared -o "$B/lib/whole-archive.so" -Wl,--whole-archive \
		"$B/lib/libmrrc.a" -Wl,--no-whole-archive
# make install PREFIX=/usr into a staging root, as a package would.
install_ok() {
	local d=$B/destdir pc
	pc="env PKG_CONFIG_LIBDIR=$d/usr/lib/pkgconfig pkg-config"
	rm -rf "$d" && make -s install DESTDIR="$d" PREFIX=/usr &&
	test -f "$d/usr/include/mrrc/libmrrc.h" &&
	test -f "$d/usr/include/mrrc/mrrc_version.h" &&
	test -f "$d/usr/lib/libmrrc.so.0.${VERSION#*.}" &&
	grep -q "\"mrrc $VERSION\"" "$d/usr/share/man/man3/mrrc_bind.3" &&
	grep -q "\"mrrc $VERSION\"" "$d/usr/share/man/man8/mrrc.8" &&
	grep -q "\"mrrc $VERSION\"" "$d/usr/share/man/man4/mrrc_blk.4" &&
	test -x "$d/usr/bin/redyd" && test -x "$d/usr/bin/redymgr" &&
	grep -q "\"mrrc $VERSION\"" "$d/usr/share/man/man1/redy.1" &&
	test -x "$d/usr/bin/bm" &&
	grep -q "\"mrrc $VERSION\"" "$d/usr/share/man/man1/bm.1" &&
	test "$($pc --modversion libmrrc)" = "$VERSION" &&
	test -f "$d/usr/lib/libmrrckv.a" &&
	test -f "$d/usr/include/mrrc/kv/kvclient.h" &&
	grep -q "\"mrrc $VERSION\"" "$d/usr/share/man/man3/libmrrckv.3" &&
	test "$($pc --modversion libmrrckv)" = "$VERSION" &&
	$pc --libs libmrrckv | grep -qx -- '-lmrrckv -lmrrc *' &&
	test -f "$d/usr/lib/libredy.a" &&
	test -f "$d/usr/include/mrrc/redy/cache.h" &&
	grep -q "\"mrrc $VERSION\"" "$d/usr/share/man/man3/redy_cache.3" &&
	$pc --libs libredy | grep -qx -- '-lredy -lpthread -lm -lmrrc *' &&
	test "$($pc --variable=includedir libmrrc)" = /usr/include &&
	test "$($pc --variable=libdir libmrrc)" = /usr/lib
}
check "make install DESTDIR= PREFIX=/usr" install_ok
# A program's point of view: it includes <mrrc/libmrrc.h>, is built with
# pkg-config's flags and checks the headers' version against the library's.
pkgconfig_program() {
	local d=$B/destdir
	cat > "$d/v.c" <<'PROG'
#include <stdio.h>
#include <mrrc/libmrrc.h>

int main(void)
{
	printf("%s %s\n", MRRC_VERSION_STRING, mrrc_version_string());
	return mrrc_version() != MRRC_VERSION_NUM;
}
PROG
	cc -Wall -Wextra -Werror -o "$d/v" "$d/v.c" \
		$(PKG_CONFIG_SYSROOT_DIR=$d PKG_CONFIG_LIBDIR=$d/usr/lib/pkgconfig \
		  pkg-config --cflags --libs libmrrc) -Wl,-rpath,"$d/usr/lib" &&
	test "$("$d/v")" = "$VERSION $VERSION"
}
check "a program builds with pkg-config against make install" pkgconfig_program

section "unit tests (host)"
cmocka libmrrc "$B/tests/test_libmrrc"
cmocka mrrc-tool "$B/tests/test_mrrc_tool"
cmocka mrrc-replay "$B/tests/test_replay"
cmocka cost-fit "$B/tests/test_costfit"
cmocka redy-slo "$B/tests/test_redy_slo"
cmocka bm-coh "$B/tests/test_bm_coh"
cmocka bm-pool "$B/tests/test_bm_pool"
cmocka bm-galloc "$B/tests/test_bm_galloc"
cmocka bm-lock "$B/tests/test_bm_lock"
cmocka libmrrc-abi-compat "$B/tests/test_abi_compat"
check "unit tests build with ASan+UBSan" make -s $J unit-tests TESTS_DIR="$B/tests-asan" \
	TEST_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
# (the coherence test's simulation is shorter under valgrind: COH_SIM_OPS)
for t in test_libmrrc test_mrrc_tool test_replay test_abi_compat test_redy_slo \
	 test_bm_coh test_bm_pool test_bm_galloc test_bm_lock test_costfit; do
	check "$t clean under ASan+UBSan" "$B/tests-asan/$t"
	check "$t clean under valgrind" env COH_SIM_OPS=20000 COH_LIN_HISTORIES=5000 \
		valgrind -q --error-exitcode=99 \
		--leak-check=full --errors-for-leak-kinds=all "$B/tests/$t"
done
. tools/mrrcd/check.sh
for d in Documentation/*.rst; do
	# index.rst holds the Sphinx toctree, which plain docutils cannot read.
	[ "$(basename "$d")" = index.rst ] && continue
	check "$(basename "$d") is valid reStructuredText" \
		python3 -m docutils --halt=warning "$d" /dev/null
done
check "benchmarks.rst's tables are what Documentation/data gives" \
	tools/bench/bench-tables.py --check
check "redy.rst's tables are what Documentation/data gives" \
	tools/bench/bench-tables.py --check Documentation/redy.rst
check "bm.rst's tables are what Documentation/data gives" \
	tools/bench/bench-tables.py --check Documentation/bm.rst
check "evaluation.rst's tables are what Documentation/data gives" \
	tools/bench/bench-tables.py --check Documentation/evaluation.rst
check "cache.rst's tables are what Documentation/data gives" \
	tools/bench/bench-tables.py --check Documentation/cache.rst
check "make docs draws the figures and writes the HTML" \
	sh -c 'make -s docs && for f in reg-6.1 reg-6.12 dereg-6.12 frrwp-6.12 frrwp-6.1 kv-get blk redy-slo redy-migration bm-fix cloudphysics-cost-rxe-fast httpd-hit httpd-cost-papers; do
		test -s build/doc/figures/$f.png || { echo "no $f.png"; exit 1; }; done'
for m in lib/man3/*.3 tools/mrrc/mrrc.8 tools/blk/mrrc_blk.4 tools/mrrcd/mrrcd.8 tools/mrrcd/mrrckv.1 tools/replay/mrrc-replay.1 tools/redy/redy.1 tools/redy/redyd.8 tools/redy/redymgr.8 tools/redy/redy_cache.3 tools/mrrcd/libmrrckv.3 tools/bm/bm.1; do
	check "man page $(basename "$m") renders without warnings" \
		sh -c "cd '$(dirname "$m")/..' && ! LC_ALL=C.UTF-8 MANWIDTH=80 \
			man --warnings -l '$(basename "$(dirname "$m")")/$(basename "$m")' 2>&1 >/dev/null | grep ."
done

# One VM suite at a time on the machine: other users of the lock (make vm
# under flock, tools/vm/pair-loop.sh) wait until the VM sections are done.
exec 9> "${MRRC_VM_LOCK:-/tmp/mrrc-vm.lock}"
flock 9
echo "   (VMs run under $(tools/vm/accel.sh))"
section "test VM"
# Each VM is one emulation thread under tcg-single, so the kernels' VMs
# run side by side, one per core.
vms=
for k in $KVERS; do
	if ! make -s $J --no-print-directory all selftests benches initramfs KVER="$k" > "$L/vm-$k.log" 2>&1; then
		result FAIL "[$k] build for the VM" "$L/vm-$k.log"
		continue
	fi
	vms="$vms $k"
done
t0=$(date +%s)
vg=1	# Redy's programs under valgrind: in the first kernel's VM only
for k in $vms; do
	out=$B/check/vm-$k
	( tools/vm/run.sh "$k" "REDY_VALGRIND=$vg selftests/run.sh $out" >> "$L/vm-$k.log" 2>&1
	  echo $? > "$L/vm-$k.status"; echo "   ($k: VM run took $(($(date +%s) - t0)) s)" ) &
	vg=0
done
wait
for k in $vms; do
	out=$B/check/vm-$k
	tap "[$k]" "$out"/*.tap
	for p in mrrc_abi mrrc_devices mrrc_cache mrrc_data mrrc_lifecycle tools mrrcd redy; do
		reported "[$k] $p" "$out/$p.tap" "$L/vm-$k.log"
	done
	vm_status "[$k]" "$(cat "$L/vm-$k.status" 2>/dev/null || echo 124)" \
		"$L/vm-$k.log" "VM run: exit 0, dmesg scan clean"
done

# Two VMs, two kernels, two modules: mrrc_blk's tests, the hostile peer's,
# then the remote selftests (tools/vm/pair-cmds.sh).
. tools/vm/pair-cmds.sh
pair_run() {	# pair_run KVER_A KVER_B [BLK_QUICK]: A serves, B runs the suites
	local name="[$1 serves $2]" out=$B/check/pair-$1-$2 log=$L/pair-$1-$2.log st
	mkdir -p "$out"
	VM_DMESG_DIR=$out tools/vm/pair.sh "$1" "$2" \
		"$PAIR_CMD_A" "$(pair_cmd_b "$out" "${3:-0}")" > "$log" 2>&1
	st=$?
	tap "$name" "$out/blk.tap" "$out/remote.tap" "$out/hostile.tap"
	reported "$name mrrc_blk" "$out/blk.tap" "$log"
	reported "$name mrrc_remote" "$out/remote.tap" "$log"
	reported "$name mrrc_hostile" "$out/hostile.tap" "$log"
	vm_status "$name" "$st" "$log" "both VMs: exit 0, rmmod, dmesg scans clean"
}
section "two test VMs on a virtual link"
ka=$(echo $KVERS | awk '{print $1}')
kb=$(echo $KVERS | awk '{print $NF}')
pair_run "$ka" "$kb"
# mrrc_blk's quick checks the second time round (the time budget).
[ "$ka" = "$kb" ] || pair_run "$kb" "$ka" 1
# mrrcd between the VMs, a daemon crash in the middle: check-full only.
kv_pair_run() {	# kv_pair_run KVER_A KVER_B: A runs mrrcd, B its clients
	local name="[$1 serves mrrcd to $2]" out=$B/check/kv-pair-$1-$2 log=$L/kv-pair-$1-$2.log st
	mkdir -p "$out"
	VM_DMESG_DIR=$out tools/vm/pair.sh "$1" "$2" \
		"tools/mrrcd/tests/kv_pair.sh serve" \
		"tools/mrrcd/tests/kv_pair.sh client $out" > "$log" 2>&1
	st=$?
	tap "$name" "$out/kv-pair.tap"
	reported "$name kv-pair" "$out/kv-pair.tap" "$log"
	vm_status "$name" "$st" "$log" "both VMs: exit 0, rmmod, dmesg scans clean"
}
[ -z "${MRRC_CHECK_FULL:-}" ] || kv_pair_run "$ka" "$kb"

# Three VMs on one segment, a buffer manager's node in each, their
# clocks apart (tools/bm/tests/bm_trio.sh).
section "three test VMs on a shared segment"
tools/bm/tests/bm_trio.sh "$B/check/trio" "$kb" "$ka" "$kb" > "$L/trio.tap" 2>&1
tap "[trio]" "$L/trio.tap"
reported "[trio] bm_trio" "$L/trio.tap" "$B/check/trio/trio.log"

section "debug kernel lane"
t0=$(date +%s)
if ! kd=$(tools/vm/debug-kernel.sh 2> "$L/debug-kernel.log"); then
	result FAIL "debug kernel build" "$L/debug-kernel.log"
	kd=
else
	cat "$L/debug-kernel.log"
	echo "   (debug kernel $kd ready after $(($(date +%s) - t0)) s)"
fi
if [ -n "$kd" ]; then
	out=$B/check/vm-debug
	log=$L/vm-debug.log
	if ! make -s $J --no-print-directory all selftests benches initramfs KVER="$kd" > "$log" 2>&1; then
		result FAIL "[debug] build for the VM" "$log"
	else
		check "[debug] kmod W=1 build, no warnings" no_warnings \
			sh -c "rm -rf $B/kmod/$kd && make -s $J module KVER=$kd"
		# Two VMs side by side: the selftests in one, the fuzzer then
		# the fault-injection sweep in the other (the selftests take
		# about as long as the other two together).
		fz=${FUZZ_SECONDS:-60} quick=1
		[ -z "${MRRC_CHECK_FULL:-}" ] || fz=${FUZZ_SECONDS:-600} quick=0
		seed=${FUZZ_SEED:-1}
		flog=$L/fuzz-debug.log
		t0=$(date +%s)
		mkdir -p "$out"
		# mrrc_blk in one VM after the selftests, under kmemleak: 10
		# attach/detach cycles and the failures, no file system or fio
		# (the pairs do those; the budget).
		( tools/vm/run.sh "$kd" "MRRC_TEST_QUICK=$quick MRRC_NO_TOOLS=1 MRRC_NO_MRRCD=1 selftests/run.sh $out; st=\$?; BLK_IO=0 BLK_CYCLES=10 tools/blk/tests/blk.sh local $out > $out/blk.out 2>&1 || st=1; cat $out/blk.tap; exit \$st" >> "$log" 2>&1
		  echo $? > "$L/vm-debug.status"
		  echo "   (debug: selftests took $(($(date +%s) - t0)) s)" ) &
		( tools/vm/run.sh "$kd" "tools/fuzz/run.sh $fz $seed $B/check/fuzz-debug; st=\$?; build/selftests/mrrc_fail_nth > $out/mrrc_fail_nth.tap 2>&1 || st=1; cat $out/mrrc_fail_nth.tap; exit \$st" > "$flog" 2>&1
		  echo $? > "$L/fuzz-debug.status"
		  echo "   (debug: fuzz and fault injection took $(($(date +%s) - t0)) s)" ) &
		wait
		tap "[debug]" "$out"/*.tap
		reported "[debug] mrrc_blk" "$out/blk.tap" "$log"
		for p in mrrc_abi mrrc_devices mrrc_cache mrrc_data mrrc_lifecycle mrrc_fail_nth; do
			reported "[debug] $p" "$out/$p.tap" "$([ $p = mrrc_fail_nth ] && echo "$flog" || echo "$log")"
		done
		vm_status "[debug]" "$(cat "$L/vm-debug.status" 2>/dev/null || echo 124)" \
			"$log" "VM run: exit 0, dmesg scan clean (KASAN, KFENCE, lockdep, kmemleak)"
		grep -h '^# fail_nth: total' "$out/mrrc_fail_nth.tap" 2>/dev/null | sed 's/^#/  /'
		vm_status "[debug] fuzz ${fz} s, seed $seed:" \
			"$(cat "$L/fuzz-debug.status" 2>/dev/null || echo 124)" \
			"$flog" "no splat, leak, hang or pinned page"
		grep -h 'fuzz: summary' "$flog" | sed 's/^/   /'

		if [ -n "${MRRC_CHECK_FULL:-}" ]; then
			pair_run "$kd" "$kb"
			pair_run "$kb" "$kd"
		fi
	fi
fi

section "summary"
end=$(date +%s)
echo "   total time $((end - start)) s"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
