#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Fail (and print the reports) if a kernel log holds a BUG, WARNING, KASAN,
# lockdep, RCU stall, hung task, oops, panic, UBSAN or kmemleak report.
# Matches report headers only: a debug kernel's boot log has harmless lines
# with the same words ("kasan: KernelAddressSanitizer initialized", ...).
set -euo pipefail
log=${1:?usage: check-kernel-log.sh DMESG_FILE}

pattern='(BUG:|WARNING:|KASAN:|UBSAN:|Oops|Kernel panic'
pattern+='|possible circular locking dependency|inconsistent lock state'
pattern+='|possible recursive locking|suspicious RCU usage'
pattern+='|rcu: INFO: rcu_.* stall|INFO: task .* blocked'
pattern+='|unreferenced object|kmemleak: .* new suspected memory leaks)'

if grep -nE "$pattern" "$log" >/dev/null; then
	echo "kernel log reports:" >&2
	grep -nE -A 25 "$pattern" "$log" | head -n 200 >&2
	exit 1
fi
