#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Run the selftests inside the test VM (make vm CMD='selftests/run.sh DIR').
# Each program's TAP output goes to DIR/<program>.tap and to stdout.
# Exits non-zero if any program failed.
set -u
out=${1:-build/selftests/results}
bin=$MRRC_REPO/build/selftests
mkdir -p "$out"
rc=0
for t in "$bin"/mrrc_abi "$bin"/mrrc_devices "$bin"/mrrc_lifecycle; do
	name=$(basename "$t")
	"$t" > "$out/$name.tap" 2>&1
	st=$?
	cat "$out/$name.tap"
	[ "$st" -eq 0 ] || { echo "# $name exited with $st"; rc=1; }
done
exit $rc
