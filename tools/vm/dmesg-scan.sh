#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Scan kernel logs for the report headers of kernel bugs: KASAN, KFENCE,
# UBSAN, lockdep, kmemleak, WARN_ON, BUG_ON, oopses, list and refcount
# corruption, hung tasks, lockups and RCU stalls.  Only headers match, not
# the words: a debug kernel's boot banners ("KernelAddressSanitizer
# initialized", "RCU lockdep checking is enabled") are not reports.
#
# Between "mrrc_fail_nth: fault injection starts" and "... ends" (written
# to the kernel log by selftests/mrrc_fail_nth), allocations fail on
# purpose, and the kernel's "page allocation failure" and "vmalloc error"
# reports are expected: there a bare "Call Trace:" is not a finding; every
# real report (BUG:, WARNING:, KASAN, lockdep, ...) still is.
#
# Prints every hit with its whole report (the lines around it, up to 80
# lines) and exits 1 if there are any.
# Usage: dmesg-scan.sh FILE...
pat='BUG: |WARNING: |kernel BUG at|Oops[: ]|UBSAN: |general protection fault'
pat="$pat|Kernel panic|unreferenced object 0x|Call Trace:|refcount_t: "
pat="$pat|list_(add|del) corruption|INFO: task .* blocked for more than"
pat="$pat|soft lockup|hard LOCKUP|rcu: INFO: .* stall|detected stall"
pat="$pat|scheduling while atomic|sleeping function called from invalid"
pat="$pat|possible (circular|recursive) locking|inconsistent lock state"
pat="$pat|suspicious RCU usage|INFO: trying to register non-static key"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cat "$@" 2>/dev/null | awk '
	/mrrc_fail_nth: fault injection starts/ { inj = 1 }
	/mrrc_fail_nth: fault injection ends/ { inj = 0 }
	inj && /Call Trace:/ { next }
	{ print }' > "$log"
set -- "$log"
if ! grep -qE "$pat" "$log"; then
	exit 0
fi
echo "dmesg-scan: kernel problems found ($(cat "$@" 2>/dev/null | grep -cE "$pat") report lines):"
cat "$@" 2>/dev/null | grep -nE "$pat" | head -40 | sed 's/^/  /'
echo "dmesg-scan: the reports:"
cat "$@" 2>/dev/null | grep -E -B8 -A80 "$pat" | head -2000
exit 1
