#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# with-mrrcd.sh MRRCD [OPTIONS...] -- COMMAND...: start mrrcd on a free
# loopback port, run COMMAND with MRRCD_PORT, MRRCD_PID and MRRCD_LOG
# (the file mrrcd's stderr goes to) in its environment, then stop mrrcd with SIGTERM.  Fails if COMMAND fails, if
# mrrcd died on its way, or if it does not exit 0 on SIGTERM.
set -u
bin=$1
shift
opts=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	opts+=("$1")
	shift
done
shift
py=/usr/bin/python3
log=$(mktemp)
trap 'rm -f "$log"' EXIT

free_port() {
	$py -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

up() {	# up PORT: mrrcd accepts connections
	$py - "$1" <<'PY'
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1).close()
except OSError:
    sys.exit(1)
PY
}

# Another process may take the port between the probe and the bind: retry.
pid=
for attempt in 1 2 3 4 5; do
	port=$(free_port)
	"$bin" -l 127.0.0.1 -p "$port" "${opts[@]}" 2> "$log" &
	pid=$!
	for _ in $(seq 100); do
		up "$port" && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if up "$port"; then
		break
	fi
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=
done
if [ -z "$pid" ]; then
	echo "with-mrrcd: mrrcd did not start"
	cat "$log"
	exit 1
fi
echo "with-mrrcd: mrrcd ${opts[*]} pid $pid on 127.0.0.1:$port"
MRRCD_PORT=$port MRRCD_PID=$pid MRRCD_LOG=$log "$@"
st=$?
if ! kill -0 "$pid" 2>/dev/null; then
	echo "with-mrrcd: mrrcd died during the test"
	cat "$log"
	wait "$pid"
	echo "with-mrrcd: its exit status: $?"
	exit 1
fi
kill -TERM "$pid"
# A daemon that does not stop is a failure, not a hung check.
for _ in $(seq 200); do
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$pid" 2>/dev/null; then
	echo "with-mrrcd: mrrcd still running 20 s after SIGTERM"
	kill -KILL "$pid"
fi
wait "$pid"
rc=$?
cat "$log"
if [ "$rc" -ne 0 ]; then
	echo "with-mrrcd: mrrcd exited $rc on SIGTERM, not 0"
	exit 1
fi
echo "with-mrrcd: SIGTERM: exit 0"
exit $st
