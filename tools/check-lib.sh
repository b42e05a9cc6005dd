# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# The reporting of tools/check.sh, shared with the checks it sources and
# the ones that also run alone (tools/mrrcd/check.sh).  Needs $L (the log
# folder) and the counters pass, fail and skip.

result() {	# result PASS|FAIL|SKIP name [log]
	case $1 in
	PASS) pass=$((pass + 1)) ;;
	FAIL) fail=$((fail + 1)) ;;
	SKIP) skip=$((skip + 1)) ;;
	esac
	echo "$1 $2"
	if [ "$1" = FAIL ] && [ -n "${3:-}" ]; then
		tail -40 "$3" | sed 's/^/    /'
	fi
}
# check name command...: PASS if the command exits 0, FAIL otherwise.
check() {
	local name=$1 log="$L/${1//[\/: ]/_}.log"
	shift
	if "$@" > "$log" 2>&1; then result PASS "$name"; else result FAIL "$name" "$log"; fi
}
# Count the results of a cmocka program.
cmocka() {
	local name=$1 log="$L/$1.log"
	shift
	"$@" > "$log" 2>&1
	local st=$? p f
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log")
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log")
	pass=$((pass + ${p:-0}))
	fail=$((fail + ${f:-0}))
	echo "PASS ${p:-0} tests of $name"
	if [ "${f:-0}" -gt 0 ] || { [ "$st" -ne 0 ] && [ -z "$f" ]; }; then
		result FAIL "$name" "$log"
	fi
}
