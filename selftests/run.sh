#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Run the selftests inside the test VM (make vm CMD='selftests/run.sh DIR').
# MRRC_TEST_QUICK=1 shortens the long loops (mrrc_test.h, test_iters()),
# MRRC_NO_TOOLS=1 and MRRC_NO_MRRCD=1 leave out the user-space tools' and
# mrrcd's checks: the debug kernel's lane of make check sets all three.
# Each program's TAP output goes to DIR/<program>.tap and to stdout; the
# tool checks against the live module go to DIR/tools.tap, mrrcd's over
# RDMA to DIR/mrrcd.tap, Redy's to DIR/redy.tap.  Exits non-zero
# if anything failed.
set -u
out=${1:-build/selftests/results}
bin=$MRRC_REPO/build/selftests
mkdir -p "$out"
rc=0
for t in "$bin"/mrrc_abi "$bin"/mrrc_devices "$bin"/mrrc_cache "$bin"/mrrc_data "$bin"/mrrc_lifecycle; do
	name=$(basename "$t")
	"$t" > "$out/$name.tap" 2>&1
	st=$?
	cat "$out/$name.tap"
	[ "$st" -eq 0 ] || { echo "# $name exited with $st"; rc=1; }
done

# The tool against the real module: on PATH, and clean under valgrind
# (not on the debug kernel, MRRC_NO_TOOLS=1: these are user-space checks,
# and the stock kernels' lanes run them).
n=0
tap() {
	n=$((n + 1))
	if "$@" > "$out/tools.$n.log" 2>&1; then
		echo "ok $n $desc"
	else
		echo "not ok $n $desc"
		sed 's/^/# /' "$out/tools.$n.log"
		rc=1
	fi
}
if [ -z "${MRRC_NO_TOOLS:-}" ]; then
	{
		echo "TAP version 13"
		echo "1..10"
		desc="tools.mrrc_info_on_path"
		tap sh -c 'mrrc info | grep -q "hca_id:	rxe0"'
		desc="tools.mrrc_info_matches_rdma_link"
		tap sh -c 'rdma link show rxe0/1 | grep -q "state ACTIVE" &&
			mrrc info -d rxe0 | grep -q "state:.*PORT_ACTIVE"'
		desc="tools.mrrc_json_output_parses"
		tap sh -c 'mrrc -j info | python3 -m json.tool > /dev/null &&
			mrrc -jp stat | python3 -m json.tool > /dev/null &&
			mrrc -j version | python3 -m json.tool > /dev/null'
		desc="tools.mrrc_info_valgrind_clean"
		tap valgrind -q --error-exitcode=99 --leak-check=full \
			--errors-for-leak-kinds=all mrrc info -v
		# The kernel's lru against the independent user-space simulator, on
		# traces whose requests never partially overlap.
		desc="tools.replay_lru_matches_reference_cello"
		tap mrrc-replay -x -p lru -f cello -n 60000 -N 6000 -c 3000 -s 7
		desc="tools.replay_lru_matches_reference_httpd_region_limit"
		tap mrrc-replay -x -p lru -f httpd -n 30000 -N 3000 -c 20000 -r 500 -s 3
		desc="tools.replay_cloudphysics_trace"
		trace=$MRRC_REPO/../shared/traces/cloudPhysicsIO.csv
		if [ -r "$trace" ]; then
			tap sh -c "mrrc-replay -f cloudphysics -t $trace -p mre -c 4096 | grep -q '\"requests\":113872'"
		else
			n=$((n + 1))
			echo "ok $n $desc # SKIP $trace not found"
		fi
		# The examples, as a user would run them.
		ex=$MRRC_REPO/build/examples
		desc="examples.cache_demo"
		tap sh -c "$ex/mrrc_cache_demo > $out/cache_demo.txt; st=\$?
			cat $out/cache_demo.txt; [ \$st = 0 ] &&
			grep -q 'after munmap: 0 regions cached, 2 invalidations, 0 flushed' $out/cache_demo.txt"
		desc="examples.pingpong"
		tap sh -c "$ex/mrrc_pingpong -p 18515 -n 200 -s 8192 -l 10.211.0.1 &
			sleep 2
			$ex/mrrc_pingpong -p 18515 -n 200 -s 8192 10.211.0.1; st=\$?
			wait \$! || st=1; exit \$st"
		# A benchmark on a device not called rxe0 (MRRC_DEV), renamed back.
		desc="tools.bench_runs_on_a_renamed_device"
		tap sh -c "rdma dev set rxe0 name mrrcb0 &&
			MRRC_DEV=mrrcb0 $MRRC_REPO/build/bench-bin/bench_ioctl 200 > $out/bench.jsonl;
			st=\$?; rdma dev set mrrcb0 name rxe0; cat $out/bench.jsonl;
			[ \$st = 0 ] && grep -q '\"device\":\"mrrcb0\"' $out/bench.jsonl &&
			! grep -qv '\"device\":\"mrrcb0\"' $out/bench.jsonl"
	} > "$out/tools.tap"
	cat "$out/tools.tap"
else
	echo "1..0 # SKIP the tools' checks: MRRC_NO_TOOLS" | tee "$out/tools.tap"
fi

# mrrcd over RDMA: the daemon and its client on the rxe device, then
# Redy's memory server and client (not on the debug kernel, where they
# would take most of the lane's time: MRRC_NO_MRRCD=1).
if [ -z "${MRRC_NO_MRRCD:-}" ]; then
	"$MRRC_REPO/tools/mrrcd/tests/kv_rdma.sh" "$out" > "$out/mrrcd.tap" 2>&1 || rc=1
	cat "$out/mrrcd.tap"
	# Redy's memory server and client (tools/redy/tests/redy.sh).
	"$MRRC_REPO/tools/redy/tests/redy.sh" "$out" > "$out/redy.tap" 2>&1 || rc=1
	cat "$out/redy.tap"
	# The buffer manager's coherence protocol (tools/bm/tests/bm.sh).
	"$MRRC_REPO/tools/bm/tests/bm.sh" "$out" > "$out/bm.tap" 2>&1 || rc=1
	cat "$out/bm.tap"
fi
exit $rc
