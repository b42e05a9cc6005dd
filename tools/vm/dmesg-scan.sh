#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Scan kernel logs for signs of a kernel bug.  Prints the hits and exits 1
# if there are any.  Usage: dmesg-scan.sh FILE...
pat='WARNING:|BUG:|kernel BUG|Oops|KASAN|UBSAN|general protection fault'
pat="$pat|possible circular locking|possible recursive locking"
pat="$pat|inconsistent lock state|suspicious RCU usage|lockdep"
pat="$pat|unreferenced object|Call Trace:|refcount_t:|list_(add|del) corruption"
pat="$pat|scheduling while atomic|sleeping function called from invalid"
hits=$(cat "$@" 2>/dev/null | grep -E "$pat")
if [ -n "$hits" ]; then
	echo "dmesg-scan: kernel problems found:"
	cat "$@" 2>/dev/null | grep -E -B2 -A20 "$pat" | head -200
	exit 1
fi
exit 0
