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

# The first report in full (its header, registers and the top of its call
# trace, some 50 lines: a reader of a log's last lines may see only this),
# then the first line of every report, to count them.
if grep -qE "$pattern" "$log"; then
	first=$(grep -nE -m1 "$pattern" "$log" | cut -d: -f1)
	echo "kernel log reports: the first, from line $first of $log:" >&2
	sed -n "$((first > 1 ? first - 1 : 1)),$((first + 50))p" "$log" >&2
	echo "kernel log reports: $(grep -cE "$pattern" "$log") report lines, the first 40:" >&2
	grep -nE "$pattern" "$log" | head -n 40 >&2
	exit 1
fi
