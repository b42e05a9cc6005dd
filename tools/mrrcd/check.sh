#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# mrrcd's checks, all on the host: sourced by tools/check.sh after its host
# unit tests (using its check, cmocka and result, $B and $L), or run alone
# from the top of the tree (tools/mrrcd/check.sh), which prints its own
# summary.  The daemon runs on a free loopback port per check and must
# exit 0 on SIGTERM every time (tests/with-mrrcd.sh).
mrrcd_alone=
if ! declare -F check > /dev/null; then
	mrrcd_alone=1
	set -u
	cd "$(dirname "$0")/../.." || exit 1
	B=$PWD/build
	L=$B/check-mrrcd
	rm -rf "$L" && mkdir -p "$L"
	export WERROR=1
	pass=0 fail=0 skip=0
	. tools/check-lib.sh
fi

mrrcd_t=tools/mrrcd/tests
mrrcd_bin=$B/tools/mrrcd
mrrcd_run() {	# mrrcd_run [OPTIONS...] -- COMMAND...
	"$mrrcd_t/with-mrrcd.sh" "$mrrcd_bin" "$@"
}

check "mrrcd and its unit tests build with -Wall -Wextra -Werror" \
	make -s tools mrrcd-tests
cmocka mrrcd-store "$B/tests/test_mrrcd_store"
cmocka mrrcd-proto "$B/tests/test_mrrcd_proto"
check "mrrcd unit tests build with ASan+UBSan" make -s mrrcd-tests \
	TESTS_DIR="$B/tests-asan" \
	TEST_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
# (valgrind runs one thread at a time: the racing GETs are fewer there)
for t in test_mrrcd_store test_mrrcd_proto; do
	check "$t clean under ASan+UBSan" "$B/tests-asan/$t"
	check "$t clean under valgrind" env MRRCD_RACE_GETS=20000 \
		valgrind -q --error-exitcode=99 \
		--leak-check=full --errors-for-leak-kinds=all "$B/tests/$t"
done

# The refusals run under timeout: a daemon that accepted one would
# otherwise serve for ever and hang make check instead of failing it.
mrrcd_options() {
	"$mrrcd_bin" -V | grep -q "^mrrcd $(cat VERSION) " &&
	"$mrrcd_bin" -h | grep -q -- '--memory-limit' &&
	! timeout 5 "$mrrcd_bin" -U 11211 2> "$L/mrrcd-U.err" &&
	grep -q 'UDP is not supported' "$L/mrrcd-U.err" &&
	! timeout 5 "$mrrcd_bin" -m 1 2> /dev/null &&
	! timeout 5 "$mrrcd_bin" -p 70000 2> /dev/null &&
	! timeout 5 "$mrrcd_bin" -c -1 2> /dev/null &&
	! timeout 5 "$mrrcd_bin" extra 2> /dev/null &&
	! timeout 5 "$mrrcd_bin" -t 0 2> /dev/null &&
	! timeout 5 "$mrrcd_bin" -t 65 2> /dev/null &&
	mrrcd_run -t 64 -U 0 -- true
}
check "mrrcd options: -V, -h, -U 0 only, bad values refused, -t" mrrcd_options

mrrcd_memccapable() {
	local out
	out=$(memccapable -h 127.0.0.1 -p "$MRRCD_PORT" -a -t 10 2>&1)
	local st=$?
	printf '%s\n' "$out"
	[ "$st" -eq 0 ] && printf '%s\n' "$out" | grep -qx 'All tests passed'
}
export -f mrrcd_memccapable
check "memccapable -a: every text-protocol test passes against mrrcd" \
	mrrcd_run -- bash -c mrrcd_memccapable

mrrcd_memccp() {
	local d
	d=$(mktemp -d) || return 1
	head -c 300000 /dev/urandom > "$d/blob.bin" &&
	cd "$d" &&
	memccp --servers="127.0.0.1:$MRRCD_PORT" blob.bin &&
	memccat --servers="127.0.0.1:$MRRCD_PORT" blob.bin > copy.bin &&
	# memccat ends what it prints with a newline of its own.
	printf '\n' >> blob.bin &&
	cmp blob.bin copy.bin
	local st=$?
	rm -rf "$d"
	return $st
}
export -f mrrcd_memccp
check "memccp and memccat copy a file through mrrcd" \
	mrrcd_run -- bash -c mrrcd_memccp
check "pymemcache's API against mrrcd" \
	mrrcd_run -m 16 -- "$mrrcd_t/pymemcache_api.py"
check "hostile clients: long lines, bad lengths, junk, fuzz, half-close, kill, stuck reader, 8 MB multi-get" \
	mrrcd_run -m 64 -- "$mrrcd_t/hostile.py"
check "20000 pipelined flush_all noreply: lazy, another client served meanwhile" \
	mrrcd_run -m 64 -- "$mrrcd_t/hostile.py" flush
# mrrckv load (BENCH=kv's load generator): four clients, every value
# checked by length and content, nothing missing after fill.
mrrcd_load() {
	kv="$B/tools/mrrckv -p $MRRCD_PORT"
	$kv fill 100 200 && $kv load get 100 4 70 1 200 > "$L/load.out" &&
	cat "$L/load.out" && [ "$(grep -c '"misses":0,' "$L/load.out")" = 2 ] &&
	grep -q '"op":"get".*"throughput_ops":[1-9]' "$L/load.out" &&
	grep -q '"op":"set".*"throughput_ops":[1-9]' "$L/load.out" &&
	! $kv load get 100 65 70 1 2> /dev/null && ! $kv load oget 100 1 70 1 2> /dev/null
}
export -f mrrcd_load
export B L
check "mrrckv fill and load: four clients' GET/SET mix, values checked, bad arguments refused" \
	mrrcd_run -m 16 -- bash -c mrrcd_load
# The client against a server that takes the connection and never
# answers: its 10 s receive timeout is ETIMEDOUT (libmrrckv(3)), as over
# RDMA, and the call ends.
mrrckv_silent() {
	python3 -c '
import socket, subprocess, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
p = subprocess.run([sys.argv[1], "-p", str(s.getsockname()[1]), "get", "x"],
		   capture_output=True, text=True, timeout=60)
print(p.returncode, p.stderr.strip())
sys.exit(0 if p.returncode == 1 and "Connection timed out" in p.stderr else 1)
' "$B/tools/mrrckv"
}
check "mrrckv against a server that never answers: ETIMEDOUT after 10 s" mrrckv_silent
# -t 4: the same clients against four worker threads (the store under
# one lock).
check "-t 4: memccapable -a passes" mrrcd_run -t 4 -- bash -c mrrcd_memccapable
check "-t 4: hostile clients, every key stored first checked at the end" \
	mrrcd_run -t 4 -m 64 -- "$mrrcd_t/hostile.py"
check "-t 4: mrrckv fill and load, four clients' values checked" \
	mrrcd_run -t 4 -m 16 -- bash -c mrrcd_load
# -vv: each request line logged (written after the store's lock is let
# go), from two worker threads, seen while the connection is still open
# (not written only when it closes); the binary protocol's refusal too.
mrrcd_vv() {
	/usr/bin/python3 - "$MRRCD_PORT" "$MRRCD_LOG" <<'PY'
import re, socket, sys, time
port, log = int(sys.argv[1]), sys.argv[2]

def logged(pattern):
    for _ in range(100):
        with open(log, "rb") as f:
            if re.search(pattern, f.read(), re.M):
                return
        time.sleep(0.1)
    sys.exit("not logged: %r\n%s" % (pattern, open(log).read()))

for key in (b"vv-a", b"vv-b"):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(b"set " + key + b" 0 0 1\r\nx\r\nget " + key + b"\r\n")
    want = b"STORED\r\nVALUE " + key + b" 0 1\r\nx\r\nEND\r\n"
    got = b""
    while len(got) < len(want):
        part = s.recv(4096)
        assert part, got
        got += part
    assert got == want, got
    logged(rb"^<\d+ set " + key + rb" 0 0 1$")
    logged(rb"^<\d+ get " + key + rb"$")
    s.close()
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(b"\x80\x01\x00\x00")
assert s.recv(16) == b""
logged(rb"^<\d+ binary protocol request: closing$")
PY
}
export -f mrrcd_vv
check "-vv -t 2: request lines logged from worker threads" \
	mrrcd_run -vv -t 2 -- bash -c mrrcd_vv

# The same under ThreadSanitizer: any data race ends the daemon with
# status 66, which fails the check (with-mrrcd.sh wants 0 on SIGTERM).
check "mrrcd -t 4 builds with ThreadSanitizer" make -s mrrcd-tsan
mrrcd_tsan() {	# mrrcd_tsan OPTIONS... -- COMMAND...
	MRRCD_TSAN=1 TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
		"$mrrcd_t/with-mrrcd.sh" "$B/tsan/mrrcd" "$@"
}
check "-t 4 under ThreadSanitizer: mrrckv load and hostile clients, no race" \
	mrrcd_tsan -t 4 -m 64 -- bash -c 'mrrcd_load && "$0"' "$mrrcd_t/hostile.py"
check "-vv -t 2 under ThreadSanitizer: logs written without the lock, no race" \
	mrrcd_tsan -vv -t 2 -- bash -c mrrcd_vv
check "connection limit -c 8: the ninth refused, then room again" \
	mrrcd_run -c 8 -- "$mrrcd_t/hostile.py" maxconns 8
check "-t 4 -c 8: the ninth refused, then room again" \
	mrrcd_run -t 4 -c 8 -- "$mrrcd_t/hostile.py" maxconns 8
check "memory limit -m 8: six times more stored, evictions, RSS bounded" \
	mrrcd_run -m 8 -- "$mrrcd_t/memlimit.py" 8
check "expiry crawler: expired and flushed items reclaimed with no lookup, counted per class" \
	mrrcd_run -m 64 -- "$mrrcd_t/crawl.py"
mrrcd_unit() {
	sed "s|^ExecStart=/usr/bin/mrrcd|ExecStart=$mrrcd_bin|" \
		tools/mrrcd/mrrcd.service > "$L/mrrcd.service" &&
	systemd-analyze verify --man=no "$L/mrrcd.service"
}
if command -v systemd-analyze > /dev/null; then
	check "mrrcd.service passes systemd-analyze verify" mrrcd_unit
else
	result SKIP "mrrcd.service: no systemd-analyze on this host"
fi

if [ -n "$mrrcd_alone" ]; then
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ]
fi
