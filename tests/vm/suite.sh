#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Runs inside the guest: each vm/t-*.sh in turn (or those named), one result
# line per test, details of failures indented below.  Results also go to
# $MFR_RESULTS for the host runner, and every test's whole output (a
# passing one's premise numbers too) to a file beside them:
# build/vm-NAME.logs/TEST.log.
set -u
cd "$(dirname "$0")"
: "${MFR_RESULTS:?}"
tests=("$@")
[ ${#tests[@]} -gt 0 ] || tests=(t-*.sh)
logs=$(dirname "$MFR_RESULTS")/${MFR_SUITE:-vm}.logs
rm -rf "$logs" && mkdir -p "$logs"

for t in "${tests[@]}"; do
	name=${MFR_SUITE:-vm}/${t%.sh}
	log=$(mktemp)
	start=$SECONDS
	# A marker in the kernel log: a failed test's part of it is kept.
	echo "mfr-suite: start $name" >/dev/kmsg
	# 15 minutes, or what the test asks for in a "# vm-timeout: SECONDS"
	# line (the fuzzer, whose time a loaded machine can double).
	limit=$(sed -n 's/^# vm-timeout: \([0-9]\+\)$/\1/p' "$t" | head -n 1)
	limit=${limit:-900}
	timeout "$limit" bash "./$t" >"$log" 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		echo "PASS $name $((SECONDS - start))s" | tee -a "$MFR_RESULTS"
	else
		echo "FAIL $name $((SECONDS - start))s" | tee -a "$MFR_RESULTS"
		sed 's/^/    /' "$log" | tail -n 40
		[ "$rc" = 124 ] && echo "    (killed: the test ran past its $limit s limit)"
		# CI shows only this output: what the kernel said meanwhile.
		dmesg | sed -n "\|mfr-suite: start $name\$|,\$p" >"$logs/${t%.sh}.dmesg"
		echo "    # the kernel log during the test, last 25 of $(wc -l <"$logs/${t%.sh}.dmesg") lines (${logs#"$MFR_ROOT"/}/${t%.sh}.dmesg):"
		tail -n 25 "$logs/${t%.sh}.dmesg" | sed 's/^/    # /'
	fi
	mv "$log" "$logs/${t%.sh}.log"
	# The module must be back for the next test, whatever this one did.
	[ -d /sys/module/mfr ] || insmod "$MFR_ROOT/module/mfr.ko"
done
