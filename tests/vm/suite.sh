#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Runs inside the guest: each vm/t-*.sh in turn (or those named), one result
# line per test, details of failures indented below.  Results also go to
# $MFR_RESULTS for the host runner.
set -u
cd "$(dirname "$0")"
: "${MFR_RESULTS:?}"
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(t-*.sh)

for t in "${tests[@]}"; do
	name=${MFR_SUITE:-vm}/${t%.sh}
	log=$(mktemp)
	start=$SECONDS
	if timeout 900 bash "./$t" >"$log" 2>&1; then
		echo "PASS $name $((SECONDS - start))s" | tee -a "$MFR_RESULTS"
	else
		echo "FAIL $name $((SECONDS - start))s" | tee -a "$MFR_RESULTS"
		sed 's/^/    /' "$log" | tail -n 40
	fi
	rm -f "$log"
	# The module must be back for the next test, whatever this one did.
	[ -d /sys/module/mfr ] || insmod "$MFR_ROOT/module/mfr.ko"
done
