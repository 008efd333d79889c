#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# scripts/check-kernel-log.sh passes a debug kernel's harmless boot lines
# and fails on each kind of report a VM run must not produce.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
check=$root/scripts/check-kernel-log.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/clean" <<'LOG'
[    0.000000] kasan: KernelAddressSanitizer initialized (generic)
[    0.100000] RCU lockdep checking is enabled.
[    0.200000] Please attach the output of /proc/lock_stat to the bug report
[    0.300000] pci 0000:00:1f.0: report a bug
[    0.400000] Warning: Processor Platform Limit event detected
[    1.000000] mfr: version 0.1.0 loaded
LOG
"$check" "$tmp/clean" || { echo "harmless boot lines flagged"; exit 1; }

reports=(
	"BUG: KASAN: slab-use-after-free in mfr_nl_status_get_doit+0x1/0x2"
	"WARNING: CPU: 1 PID: 42 at mm/mfr.c:90 mfr_unregister_ops+0x5/0x10"
	"BUG: sleeping function called from invalid context at mm/slub.c:1"
	"WARNING: possible circular locking dependency detected"
	"WARNING: inconsistent lock state"
	"rcu: INFO: rcu_preempt self-detected stall on CPU"
	"INFO: task kworker/0:1:12 blocked for more than 120 seconds."
	"Oops: general protection fault, probably for non-canonical address"
	"Kernel panic - not syncing: Fatal exception"
	"UBSAN: shift-out-of-bounds in mm/mfr.c:10:2"
	"unreferenced object 0xffff888012345678 (size 64):"
)
for r in "${reports[@]}"; do
	{ cat "$tmp/clean"; echo "[    2.000000] $r"; } >"$tmp/bad"
	if "$check" "$tmp/bad" 2>/dev/null; then
		echo "not caught: $r"
		exit 1
	fi
done
echo "all ${#reports[@]} report kinds caught, harmless lines passed"
