# SPDX-License-Identifier: GPL-2.0-or-later
# HVO on: when the vmemmap of a released kept hugepage cannot be restored,
# the hugepage stays pending, out of the pool, and is never freed whole;
# once allocations succeed again a retry offlines it with the usual
# accounting.  The failure is injected with fail_page_alloc, filtered to
# the vmemmap restore's own allocations.  Meanwhile offlining its memory
# block (made ZONE_MOVABLE here: movable-block) fails at once instead
# of spinning on it: a pending kept hugepage is never free to dissolve.
. ./lib.sh
fail=/sys/kernel/debug/fail_page_alloc
check "HVO is on in this boot" test "$(cat /proc/sys/vm/hugetlb_optimize_vmemmap)" = 1

# The function that allocates the restored vmemmap pages (whichever of
# them the compiler kept out of line).
read -r start end < <(kernel_func_range alloc_vmemmap_page_list \
	vmemmap_remap_alloc __hugetlb_vmemmap_restore_folio)
check "found the vmemmap restore in System.map ($start-$end)" test -n "$end"

# fail_page_alloc for the vmemmap restore only.  Its stack filter walks
# the stack of every allocation it is asked about; the task filter is
# checked first, so only the tasks that run the restore are marked: the
# kworkers (a kept folio is freed by the deferred hugetlb free, and
# retried by delayed work) and kthreadd, whose mark the kworkers it
# starts meanwhile inherit.
kthreads() { ps -e -o pid=,comm= | awk '$2 == "kthreadd" || $2 ~ /^kworker/ { print $1 }'; }
mark() { # 0|1: (un)mark them
	local p
	for p in $(kthreads); do echo "$1" >"/proc/$p/make-it-fail" 2>/dev/null || true; done
}
arm="echo 0 >$fail/verbose && echo 0 >$fail/ignore-gfp-wait &&
	echo 0 >$fail/min-order && echo 0x$start >$fail/require-start &&
	echo 0x$end >$fail/require-end && echo Y >$fail/task-filter &&
	echo -1 >$fail/times && echo 100 >$fail/probability"
mark 1

pool=$(hugepages_dir 2M)/nr_hugepages
pool_before=$(cat "$pool")
# The kept hugepage in a block made ZONE_MOVABLE for the offline check:
# the pool's newest pages, which the memfd takes first.
block=$(./movable-block)
check "memory block ${block:-?} made ZONE_MOVABLE" test -n "$block"
echo $(($(cat "$pool") + 2)) >"$pool"
offlined=$(./status-value folios-offlined)
isolated=$(./status-value raw-pages-isolated)
returned=$(./status-value healthy-pages-returned)
failed_before=$(dmesg | grep -c 'cannot restore the vmemmap of poisoned hugepage')
# While the restore fails: pending, out of the pool, counters agree; then
# let allocations succeed and expect the offline.
while_failing="sleep 2; cd $PWD &&
	test \$(dmesg | grep -c 'cannot restore the vmemmap of poisoned hugepage') -gt $failed_before &&
	./expect-status folios-pending=1 raw-pages-kept=1 folios-offlined=$offlined &&
	./pool-consistent && ./offline-fails-promptly \$MFR_HEAD_PFN; rc=\$?
	echo 0 >$fail/probability; exit \$rc"
check "release with the vmemmap restore failing, then succeeding" \
	"$MFR_ROOT/build/helpers/kept_lifecycle" release 2M \
	"$arm" "$while_failing"
echo 0 >$fail/probability
echo N >$fail/task-filter
mark 0
check "status: offlined as usual" ./expect-status folios-pending=0 raw-pages-kept=0 \
	folios-offlined=$((offlined + 1)) raw-pages-isolated=$((isolated + 1)) \
	healthy-pages-returned=$((returned + 511))
check "pool counters agree" pool_consistent
# The offline attempt dissolved the free pages of the block: refill.
echo "$pool_before" >"$pool"
check "the 2 MiB pool is back to $pool_before pages" test "$(cat "$pool")" = "$pool_before"
finish
