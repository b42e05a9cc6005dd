# SPDX-License-Identifier: GPL-2.0-only
# Sourced by tools/check.sh and tools/vm/pair-loop.sh: what the two VMs of
# a pair run (tools/vm/pair.sh).  VM a serves the hostile peer's agent and
# then the remote suite's; VM b runs mrrc_hostile, then mrrc_remote, into
# OUT/hostile.tap and OUT/remote.tap.  Both unload the module at the end.
# The hostile suite goes first: after the remote suite's "vanish" scenario
# (VM a's link down for 30 s and up again) a 6.1 guest as VM a has been
# seen not to answer new RDMA CM requests (see Documentation/testing.rst).
# shellcheck shell=sh

# rxe's counters of retries, NAKs and timeouts, non-zero ones only, for the
# log: a transport error in a run (IB_WC_RETRY_EXC_ERR) is read from them.
RXE_COUNTERS="for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do
	v=\$(cat \$f 2>/dev/null) && [ \"\$v\" != 0 ] && echo \"rxe0 \${f##*/} \$v\"; done"

PAIR_CMD_A="tools/blk/tests/blk.sh serve; st=\$?;
	build/selftests/mrrc_hostile serve || st=1;
	build/selftests/mrrc_remote serve || st=1; $RXE_COUNTERS;
	rmmod mrrc || st=1; exit \$st"

# pair_cmd_b OUT [BLK_QUICK]
pair_cmd_b() {
	echo "BLK_QUICK=${2:-0} tools/blk/tests/blk.sh client $1 > $1/blk.out 2>&1; st=\$?;
	build/selftests/mrrc_hostile > $1/hostile.tap 2>&1 || st=1;
	build/selftests/mrrc_remote > $1/remote.tap 2>&1 || st=1;
	cat $1/blk.tap $1/hostile.tap $1/remote.tap; $RXE_COUNTERS;
	rmmod mrrc || st=1; exit \$st"
}
