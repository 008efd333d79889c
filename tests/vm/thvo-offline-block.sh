# SPDX-License-Identifier: GPL-2.0-or-later
# HVO on, no mfr involved: memory offline of a ZONE_MOVABLE block that holds
# free 2 MiB hugepages dissolves them (restoring their vmemmap), and one that
# holds a hugepage in use migrates it into a fresh one (optimizing its
# vmemmap), both under mem_hotplug_begin(), which holds cpu_hotplug_lock.
# Stock 6.12 flips hugetlb_optimize_vmemmap_key there, and
# static_branch_dec()/inc() take cpu_hotplug_lock a second time: lockdep's
# "possible recursive locking detected", a deadlock against CPU hotplug
# (patch 0005).  The kernel log check after the boot is the verdict; the
# checks here prove the offline took those paths.  The migrating offline
# also meets HVO's deferred free of the migrated-from hugepage (patch
# 0006, below).
. ./lib.sh
script=$MFR_ROOT/build/helpers/memfd_script
pool=$(hugepages_dir 2M)/nr_hugepages
mem=/sys/devices/system/memory
check "HVO is on in this boot" test "$(cat /proc/sys/vm/hugetlb_optimize_vmemmap)" = 1
pool0=$(cat "$pool")
d=$(mktemp -d)
# offline_block [CMD...]: offline the block, through CMD (chrt) if given.
offline_block() { "$@" sh -c "echo offline >$mem/memory$block/state"; }

# Free hugepages in the block: the block's first tenants (movable-block).
block=$(./movable-block)
check "memory block ${block:-?} made ZONE_MOVABLE" test -n "$block"
p=$(cat "$pool")
m0=$(memmap_pages)
echo $((p + 4)) >"$pool"
m1=$(memmap_pages)
check "4 free hugepages in block $block" test "$(free_in_block "$block")" = 4
check "their vmemmap optimized (memmap pages $m0 -> $m1)" test $((m0 - m1)) -ge 20
check "offlining the block dissolves them" offline_block
check "the pool lost them" test "$(cat "$pool")" = "$p"
echo online_movable >"$mem/memory$block/state"

# A hugepage in use in the block, no free one anywhere: the offline
# migrates it into a fresh (temporary) hugepage, and the migrated-from
# one, its vmemmap optimized, is freed by a worker (free_hpage_work) after
# that.  Stock 6.12 refuses to dissolve it until then (EBUSY: the pool
# has no free hugepage) and the offline fails although the migration
# succeeded; patch 0006 waits for the worker.  The offline runs at
# SCHED_FIFO, so the worker, queued on the offlining CPU, cannot run
# before the dissolve unless the kernel waits for it: stock fails this
# every time (3 boots of 3), a fix that does not wait does too.
echo $((p + 1)) >"$pool"
$script mig 1 ready:"$d/held" wait:"$d/go" read:5 close >"$d/out" &
holder=$!
check "a hugepage held in use" wait_file "$d/held"
check "no free hugepage left" test "$(cat "$(hugepages_dir 2M)/free_hugepages")" = 0
check "the hugepage in use is in block $block" test "$(hugepages_in_block "$block")" = 1
offline_migrates() {
	local err
	err=$(offline_block chrt -f 50 2>&1) && return 0
	echo "# offline refused ($err): hugepages in use in block $block: $(hugepages_in_block "$block"), free: $(cat "$(hugepages_dir 2M)/free_hugepages")"
	return 1
}
check "chrt is here to run the offline at SCHED_FIFO" sh -c "command -v chrt >/dev/null"
check "offlining the block at SCHED_FIFO migrates it" offline_migrates
touch "$d/go"
wait "$holder"
check "the holder ran its steps" test $? = 0
check "still mapped and readable after the migration" grep -qx 'read 5 ok' "$d/out"
# The block back to ZONE_NORMAL: a movable one with free room would take
# the next tests' hugepages first.
echo "$p" >"$pool"
check "block $block back in ZONE_NORMAL" sh -c "echo online_kernel >$mem/memory$block/state"
echo "$pool0" >"$pool"
rm -rf "$d"
finish
