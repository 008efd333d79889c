# SPDX-License-Identifier: GPL-2.0-or-later
# Errors in the base pages of a kept 2 MiB hugepage (corrupt-pfn), one after
# the other, each racing something that takes that page or the hugepage's
# lock (tests/helpers/kept_race.c): a long-term pin of the page (GUP takes
# its reference before it looks for poison, so either it refuses the page
# or the error is not reported recovered), and a hole punch zeroing part of
# the hugepage (it locks the hugepage without i_mmap_rwsem, which
# memory_failure() takes under that lock: no deadlock).
. ./lib.sh
modprobe hwpoison_inject
before=$(./status-value folios-offlined)
check "a pin racing each error: never pinned and recovered" \
	"$MFR_ROOT/build/helpers/kept_race" pin 120
check "a partial punch racing each error: every round ends, right" \
	"$MFR_ROOT/build/helpers/kept_race" punch 120
check "status: both hugepages offlined, nothing kept" ./expect-status \
	memfds-kept=0 raw-pages-kept=0 folios-pending=0 folios-offlined=$((before + 2))
check "pool counters agree" pool_consistent
finish
