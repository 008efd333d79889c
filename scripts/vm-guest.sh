#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Runs inside the virtme-ng guest (see vm-run.sh): load mfr.ko, run the
# command saved in $1/cmd, then leave the exit status and the kernel log in
# $1 for the host to check.
out=$1
root=$(cd "$(dirname "$0")/.." && pwd)
export MFR_ROOT=$root PATH=$PATH:/usr/sbin:/sbin
set -a
. "$out/env"
set +a

# The host's boot watchdog (vm-run.sh): the guest got this far.
: >"$out/started"
rc=0
if [ "$(cat "$out/no-module")" != 1 ]; then
	insmod "$(cat "$out/module")" || rc=125
fi
if [ "$rc" = 0 ]; then
	bash -c "$(cat "$out/cmd")"
	rc=$?
fi
dmesg >"$out/dmesg"
echo "$rc" >"$out/rc"
sync
exit "$rc"
