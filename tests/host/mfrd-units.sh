#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Unit tests of mfrd's pieces (config and rules parsing, SQLite store,
# metrics writer), built with ASan and UBSan: a leak or undefined
# behaviour fails the test even when every check passed.  Also checks
# that mfrd.conf(5) renders without warnings.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
make -s -C "$root/daemon" O="$root/build/daemon" units

export ASAN_OPTIONS=detect_leaks=1:exitcode=99
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

failed=0
for t in config store metrics; do
	echo "# test-$t"
	if ! "$root/build/daemon/asan/test-$t"; then
		echo "FAIL: test-$t"
		failed=$((failed + 1))
	fi
done
err=$(groff -man -ww -z "$root/daemon/mfrd.conf.5" 2>&1) || err="groff failed: $err"
if [ -n "$err" ]; then
	echo "FAIL: daemon/mfrd.conf.5 does not render cleanly with groff -man -ww"
	echo "$err"
	failed=$((failed + 1))
else
	echo "ok - mfrd.conf.5 renders cleanly"
fi
[ "$failed" = 0 ] || { echo "$failed unit test(s) failed"; exit 1; }
echo "all unit tests passed"
