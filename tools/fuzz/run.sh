#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# The ioctl fuzzer in the test VM (make fuzz): mrrc_fuzz as root for about
# half of SECONDS, then unprivileged (uid 65534) for the rest, three
# processes at a time: two that run the whole phase (one with two ioctl
# threads and memory churn, one with one thread and no churn), and one
# that is started and SIGKILLed 3-10 s later, again and again.  When every
# fuzzer has exited, nothing may be left: no contexts, no cache gauges, no
# pinned pages, no RDMA resources of the module, and the module must
# unload.
#
# usage: run.sh SECONDS SEED OUTDIR
#
# Runs as root inside the test VM (tools/vm/guest.sh: mrrc.ko loaded, rxe0
# up on veth0 with 10.211.0.1, debugfs mounted); reloads the module from
# $MRRC_KO at the end when that is set.  Writes every fuzzer's output and
# summary.txt to OUTDIR.  Prints the total number of calls; exits 1 on any
# finding (a hang, a fuzzer that died, something left, rmmod failing, a
# kernel splat in dmesg).
set -u

secs=${1:-60}
seed=${2:-1}
out=${3:-build/fuzz}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
fuzz=$(command -v mrrc_fuzz || echo "$repo/build/tools/mrrc_fuzz")
dbg=/sys/kernel/debug/mrrc
# How long a fuzzer may take beyond its run time before it counts as hung:
# its own watchdog (60 s) comes first.
grace=150

mkdir -p "$out" || exit 1
rm -f "$out"/*.log "$out"/summary.txt "$out"/findings "$out"/stacks.txt
: > "$out/findings"

log() {
	echo "fuzz: $*" | tee -a "$out/summary.txt"
}

finding() {
	log "FINDING: $*"
	echo "$*" >> "$out/findings"
}

now() {
	date +%s
}

# Some thread of process $1 has not exited yet (zombies do not count).
alive() {
	for s in /proc/"$1"/task/*/stat; do
		[ -r "$s" ] || continue
		[ "$(awk '{ print $3 }' "$s" 2>/dev/null)" = Z ] || return 0
	done
	return 1
}

# Where the threads of a hung process are, in the kernel.
dump_stacks() {
	for t in /proc/"$1"/task/*; do
		echo "== $2 pid $1 task ${t##*/}: $(cat "$t/wchan" 2>/dev/null)"
		cat "$t/stack" 2>/dev/null
	done >> "$out/stacks.txt"
}

# Wait for process $1 (named $3) until time $2: its exit status, or 255
# and a finding when it is still there.
wait_until() {
	while alive "$1"; do
		if [ "$(now)" -ge "$2" ]; then
			dump_stacks "$1" "$3"
			finding "$3 (pid $1) did not exit: hang, stacks in $out/stacks.txt"
			return 255
		fi
		sleep 1
	done
	wait "$1"
}

# Judge a fuzzer's exit status; $3 = 1 if it was killed on purpose.
judge() {
	case $1 in
	0) ;;
	137) [ "$3" = 1 ] || finding "$2 was killed (SIGKILL)" ;;
	255) ;;
	3) finding "$2 reported a hang: see $out/$2.log" ;;
	4) finding "$2: a forked child died (fuzzer bug): see $out/$2.log" ;;
	*) finding "$2 exited with status $1: see $out/$2.log" ;;
	esac
}

# Start fuzzers and SIGKILL them 3-10 s later, until time $1.  ($flags is
# empty or one word: unquoted on purpose.)
# shellcheck disable=SC2086
victims() {
	end=$1 mode=$2 flags=$3 base=$4
	n=0
	while [ "$(now)" -lt "$end" ]; do
		name=$mode-killed-$n
		"$fuzz" $flags -j 1 -t 600 -p 1 -s $((base + n)) > "$out/$name.log" 2>&1 &
		pid=$!
		sleep $(((base + n * 7) % 8 + 3))
		kill -KILL "$pid" 2>/dev/null
		wait_until "$pid" $(($(now) + 60)) "$name"
		st=$?
		[ "$st" != 255 ] || return	# hung: starting more is pointless
		judge "$st" "$name" 1
		n=$((n + 1))
	done
}

# One phase: two fuzzers for $1 seconds, plus the victims.
# shellcheck disable=SC2086
phase() {
	t=$1 mode=$2 flags=$3 base=$4
	end=$(($(now) + t))
	log "$mode phase: $t s, seeds $base $((base + 1)), killed ones from $((base + 1000))"
	"$fuzz" $flags -j 2 -t "$t" -s "$base" > "$out/$mode-0.log" 2>&1 &
	p0=$!
	"$fuzz" $flags -j 1 -M -t "$t" -s $((base + 1)) > "$out/$mode-1.log" 2>&1 &
	p1=$!
	victims "$end" "$mode" "$flags" $((base + 1000)) &
	pv=$!
	wait_until "$p0" $((end + grace)) "$mode-0"
	judge $? "$mode-0" 0
	wait_until "$p1" $((end + grace)) "$mode-1"
	judge $? "$mode-1" 0
	wait_until "$pv" $((end + grace)) "$mode-victims"
}

# New kernel problems (tools/vm/dmesg-scan.sh); the VM scans again at the end.
splats=0
scan_dmesg() {
	dmesg > "$out/dmesg.txt"
	"$repo/tools/vm/dmesg-scan.sh" "$out/dmesg.txt" > "$out/dmesg-scan.txt"
	n=$(wc -l < "$out/dmesg-scan.txt")
	if [ "$n" -gt "$splats" ]; then
		splats=$n
		finding "$1: kernel problems in dmesg: see $out/dmesg-scan.txt"
		grep -m 3 -E 'BUG|WARNING|Oops|KASAN|lockdep|circular' "$out/dmesg-scan.txt" |
			sed 's/^/fuzz:   /'
	fi
}

found() {
	[ -s "$out/findings" ]
}

gauge() {
	awk -v k="$1" '$1 == k { print $2 }' "$dbg/stats" 2>/dev/null
}

# Pins held now, as /proc/vmstat counts them.
pins() {
	awk '$1 == "nr_foll_pin_acquired" { a = $2 }
	     $1 == "nr_foll_pin_released" { r = $2 }
	     END { print a - r }' /proc/vmstat
}

# No context, no cache gauge, no pin and no RDMA resource of the module left.
check_clean() {
	i=0
	while [ "$(cat "$dbg/contexts" 2>/dev/null)" != 0 ] && [ $i -lt 60 ]; do
		sleep 1
		i=$((i + 1))
	done
	c=$(cat "$dbg/contexts" 2>/dev/null)
	[ "$c" = 0 ] || finding "$1: $c contexts left: $(cat "$dbg/devices" 2>/dev/null)"
	for g in cached_regions cached_pages pinned_pages inuse_regions \
		 handles pool_mrs pool_free caches; do
		v=$(gauge $g)
		[ "$v" = 0 ] || finding "$1: global $g is '$v', not 0"
	done
	i=0
	while [ "$(pins)" -gt "$pins0" ] && [ $i -lt 10 ]; do
		sleep 1
		i=$((i + 1))
	done
	p=$(pins)
	[ "$p" -le "$pins0" ] || finding "$1: $((p - pins0)) pinned pages left (nr_foll_pin_acquired - released: $pins0 before, $p now)"
	for r in cm_id qp cq mr pd; do
		n=$(rdma resource show $r 2>/dev/null | grep -c '\[mrrc\]')
		[ "$n" = 0 ] || finding "$1: $n RDMA $r objects of mrrc left"
	done
	log "$1: checked: contexts $c, pins $p (before: $pins0)"
}

# Calls made: from each log's summary line, or its last progress line.
total_calls() {
	for f in "$out"/*.log; do
		[ -r "$f" ] || continue
		grep -E 'summary|progress' "$f" | tail -1 |
			sed -n 's/.*calls=\([0-9]*\).*/\1/p'
	done | awk '{ s += $1 } END { print s + 0 }'
}

[ -x "$fuzz" ] || { echo "fuzz: no $fuzz (make tools)"; exit 1; }
[ "$(id -u)" = 0 ] || { echo "fuzz: run as root (in the test VM)"; exit 1; }
[ -c /dev/mrrc ] || { echo "fuzz: no /dev/mrrc: is mrrc.ko loaded?"; exit 1; }
[ -r "$dbg/contexts" ] || { echo "fuzz: no $dbg (debugfs)"; exit 1; }

# The unprivileged run needs a world-accessible device (dev_mode=0666, the
# default); make it so for this run if the module was loaded otherwise.
devmode=$(stat -c %a /dev/mrrc)
[ "$devmode" = 666 ] || chmod 666 /dev/mrrc
[ "$(cat "$dbg/contexts")" = 0 ] || log "warning: $(cat "$dbg/contexts") contexts open before the run"
pins0=$(pins)
dmesg > "$out/dmesg-before.txt"
splats=$("$repo/tools/vm/dmesg-scan.sh" "$out/dmesg-before.txt" | wc -l)

[ "$secs" -ge 10 ] || secs=10
half=$((secs / 2))
start=$(now)
log "seed $seed, $secs s, fuzzer $fuzz, kernel $(uname -r)"
# After a splat or a hang the rest would only pile up more of the same.
phase "$half" root "" $((seed * 10000))
scan_dmesg "root phase"
found || check_clean "after the root phase"
if ! found; then
	phase $((secs - half)) user "-u" $((seed * 10000 + 5000))
	scan_dmesg "unprivileged phase"
	found || check_clean "after the unprivileged phase"
fi
[ "$devmode" = 666 ] || chmod "$devmode" /dev/mrrc

if rmmod mrrc 2> "$out/rmmod.txt"; then
	log "rmmod mrrc: ok"
	[ -n "${MRRC_KO:-}" ] && insmod "$MRRC_KO"
else
	finding "rmmod mrrc failed: $(cat "$out/rmmod.txt"); $(grep '^mrrc ' /proc/modules)"
fi
scan_dmesg "the end"

elapsed=$(($(now) - start))
calls=$(total_calls)
fuzzed=$secs
nproc=0
for f in "$out"/*.log; do
	[ -e "$f" ] && nproc=$((nproc + 1))
done
nfind=$(wc -l < "$out/findings")
log "summary: $nproc fuzzer processes, $calls calls in $fuzzed s of fuzzing ($((calls / fuzzed)) calls/s; $elapsed s with the checks), $nfind findings"
grep -h 'summary seed' "$out"/root-0.log "$out"/user-0.log 2>/dev/null |
	sed 's/^/fuzz:   /'
[ "$nfind" = 0 ]
