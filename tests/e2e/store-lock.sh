#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# e2e-store-lock.service: an operator's sqlite3 shell on mfrd's store that
# holds BEGIN EXCLUSIVE for SECONDS, and longer until mfrd has offlined the
# pfns of earlier boots at its start (its journal entry; 300 s at most):
# under TCG on a loaded host, systemd 257 took 45 s from forking mfrd to
# running it, and a lock gone by then tests nothing.  In the background;
# returns once the lock is held.  /run/e2e-store-lock/{locked,committing,
# released} get the CLOCK_MONOTONIC time in microseconds (as systemd's
# *TimestampMonotonic and the journal's __MONOTONIC_TIMESTAMP).
#
#   store-lock.sh SECONDS | store-lock.sh mark NAME | store-lock.sh hold SECONDS
set -eu
dir=/run/e2e-store-lock
if [ "${1:-}" = mark ]; then
	python3 -c 'import time; print(time.monotonic_ns() // 1000)' >"$dir/$2"
	exit 0
fi
if [ "${1:-}" = hold ]; then
	. /opt/mfr-e2e/lib.sh
	sleep "$2"
	for _ in $(seq 300); do
		journalctl -b -q -o cat MESSAGE_ID="$MSG_RECORDED_OFFLINED" | grep -q . && exit 0
		sleep 1
	done
	exit 0
fi
secs=${1:?usage: store-lock.sh SECONDS}
rm -rf "$dir"
mkdir -p "$dir"
# -bail: nothing is marked unless BEGIN EXCLUSIVE succeeded.
sqlite3 -bail /var/lib/mfrd/mfrd.db >"$dir/sqlite3.out" 2>&1 <<SQL &
BEGIN EXCLUSIVE;
.shell $0 mark locked
.shell $0 hold $secs
.shell $0 mark committing
COMMIT;
.shell $0 mark released
SQL
for _ in $(seq 100); do
	[ -s "$dir/locked" ] && exit 0
	kill -0 $! 2>/dev/null || break
	sleep 0.2
done
echo "store-lock.sh: the lock was not taken: $(cat "$dir/sqlite3.out")" >&2
exit 1
