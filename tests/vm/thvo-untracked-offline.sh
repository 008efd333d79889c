# SPDX-License-Identifier: GPL-2.0-or-later
# HVO on: a kept hugepage that lost track of its poisoned pages (a second
# error whose record could not be allocated) falls back and, once its
# memfd releases it, is leaked whole: with HVO it stays a HugeTLB folio
# with refcount 0 that never reaches the free list.  Offlining its memory
# block (ZONE_MOVABLE here: movable-block) while another 2 MiB hugepage is
# free elsewhere must fail at once with EBUSY: dissolve_free_hugetlb_folio()
# used to take that folio for one about to become free and retry for ever,
# in an offline writer that kill -9 could not stop.
. ./lib.sh
script=$MFR_ROOT/build/helpers/memfd_script
pool=$(hugepages_dir 2M)/nr_hugepages
free=$(hugepages_dir 2M)/free_hugepages
check "HVO is on in this boot" test "$(cat /proc/sys/vm/hugetlb_optimize_vmemmap)" = 1
check "failslab set up under memory_failure()" failslab_setup
d=$(mktemp -d)

# A hugepage in use outside the block to come, freed before the offline.
echo $(($(cat "$pool") + 1)) >"$pool"
$script guest-other 1 ready:"$d/held" wait:"$d/free" close >"$d/held.out" &
holder=$!
check "a hugepage held in use" wait_file "$d/held"
block=$(./movable-block)
check "memory block ${block:-?} made ZONE_MOVABLE" test -n "$block"
echo $(($(cat "$pool") + 1)) >"$pool"

sh -c "echo 1 >/proc/self/make-it-fail && exec $script --keep guest-ram-untracked 1 \
	poison:3 ready:$d/kept wait:$d/arm poison:7 read:9 ready:$d/fell wait:$d/go close" \
	>"$d/out" &
helper=$!
check "kept with one error" wait_file "$d/kept"
failslab_arm
touch "$d/arm"
check "past the second error" wait_file "$d/fell"
failslab_disarm
check "a failure was injected under memory_failure()" failslab_injected
check "the hugepage fell back: SIGBUS lsb 21 on a healthy word" grep -qx 'read 9 sigbus lsb=21' "$d/out"
leaked_before=$(dmesg | grep -c 'cannot be dissolved: all of it stays offline')
# A pfn of the hugepage: the one mfr.ko named when it was told.
pfn=$(dmesg | sed -n 's/.*memfd inode [0-9]*: pfn \(0x[0-9a-f]*\) poisoned, and the kernel lost track.*/\1/p' | tail -n 1)
touch "$d/go"
wait "$helper"
check "the helper ran its steps" test $? = 0
for _ in $(seq 100); do
	[ "$(dmesg | grep -c 'cannot be dissolved: all of it stays offline')" -gt "$leaked_before" ] && break
	sleep 0.2
done
check "released and leaked whole" \
	test "$(dmesg | grep -c 'cannot be dissolved: all of it stays offline')" -gt "$leaked_before"
failslab_reset

touch "$d/free"
wait "$holder"
# A free hugepage outside the leaked one's block, for certain: a block has
# room for 64, and a movable block an earlier test left (one it could not
# give back, holding a leaked hugepage) takes new ones first, the holder's
# and the leaked one alike.  The ones in the block the offline dissolves
# (restoring their vmemmap under mem_hotplug_begin(): patch 0005).
bs=$((0x$(cat /sys/devices/system/memory/block_size_bytes)))
lblock=$((pfn * 4096 / bs))
p=$(cat "$pool")
echo $((p + 64)) >"$pool"
inside=$(free_in_block "$lblock")
check "a 2 MiB hugepage is free outside block $lblock ($(cat "$free") free, $inside in it)" \
	test "$(cat "$free")" -gt "$inside"
check "offlining the block of the leaked hugepage (pfn ${pfn:-?}) fails at once" \
	./offline-fails-promptly --keep-pools "$pfn"
echo "$p" >"$pool"
rm -rf "$d"
finish
