# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the host tests that run mfrd itself (mfrd-daemon.sh,
# mfrd-faults.sh): the ASan build, a scratch directory, results, and
# waits that are all bounded (a loaded CI machine must fail a test, never
# hang it).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
make -s -C "$root/daemon" O="$root/build/daemon" "$root/build/daemon/asan/mfrd" \
	"$root/build/daemon/asan/mfrctl"
mfrd=$root/build/daemon/asan/mfrd
mfrctl=$root/build/daemon/asan/mfrctl
export ASAN_OPTIONS=detect_leaks=1:exitcode=99
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

tmp=$(mktemp -d)
pid=
listener=
failed=0
ok() { echo "ok - $1"; }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }

wait_for() { # SECONDS COMMAND...: poll until COMMAND succeeds
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || return 1
		sleep 0.2
	done
}

# reap PID [SECONDS]: wait for a child to end, SECONDS at most (30); past
# that it is killed (SIGKILL).  Its exit status, 137 if it had to be
# killed.
reap() {
	local p=$1 end=$((SECONDS + ${2:-30})) rc=0
	while kill -0 "$p" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do
		sleep 0.1
	done
	if kill -0 "$p" 2>/dev/null; then
		echo "# pid $p still running after ${2:-30} s: killed" >&2
		kill -9 "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
		return 137
	fi
	wait "$p" 2>/dev/null || rc=$?
	return "$rc"
}

# Runs under set -e: a process already gone must not fail the test.
cleanup() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		reap "$pid" 10 || true
	fi
	[ -z "$listener" ] || kill "$listener" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

# notify_listener SOCKET LOG: a systemd notify socket of our own; each
# datagram becomes a line of LOG, "SECONDS-SINCE-START MSG | MSG".  Sets
# $listener to its pid.
notify_listener() {
	[ -z "$listener" ] || kill "$listener" 2>/dev/null || true
	python3 - "$1" >"$2" <<'EOP' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
t0 = time.monotonic()
# Where the relative times start, for whoever compares them with a time
# taken outside ($EPOCHREALTIME).
print("t0 %.3f" % time.time(), flush=True)
while True:
    m = s.recv(4096).decode().replace("\n", " | ")
    print("%.3f %s" % (time.monotonic() - t0, m), flush=True)
EOP
	listener=$!
	wait_for 10 test -S "$1"
}

# stop_mfrd WHAT LOG: SIGTERM, then mfrd must end with status 0 (no ASan
# or UBSan report) within 30 s.
stop_mfrd() {
	local rc=0
	kill "$pid" 2>/dev/null || true	# already gone: reap tells how
	reap "$pid" 30 || rc=$?
	pid=
	[ "$rc" = 0 ] && ok "$1: mfrd stops cleanly on SIGTERM" ||
		{ fail "$1: mfrd exit $rc on SIGTERM"; tail -30 "$2"; }
}

db_query() { # DB SQL
	python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1], timeout=10).execute(sys.argv[2]).fetchone()[0])' "$@"
}

# mfrd_conf FILE STATE_DIR METRICS [KEY = VALUE...]: a configuration for
# one case: no boot offlining unless asked, the metrics every second.
mfrd_conf() {
	local f=$1 state=$2 metrics=$3
	shift 3
	mkdir -p "$state"
	{
		echo "state_dir = $state"
		echo "metrics_file = $metrics"
		echo "metrics_interval = 1"
		echo "offline_recorded_pfns = no"
		printf '%s\n' "$@"
	} >"$f"
}

finish() {
	[ "$failed" = 0 ] && echo "all checks passed"
	[ "$failed" = 0 ]
}
