# SPDX-License-Identifier: GPL-2.0-or-later
# Memory offline (hot-remove) of a ZONE_MOVABLE block that holds a kept
# hugepage with a poisoned base page and another hugepage below it: the
# offline fails at once, and the kept hugepage is still kept (no hwpoison
# entries over all of it: healthy words read back, still mapped at the
# same frame).  The block is made movable here (movable-block), so the
# premise holds whatever memblock did with the top of memory.  The pool
# is put back after.
. ./lib.sh
pool=$(hugepages_dir 2M)/nr_hugepages
n=$(cat "$pool")
block=$(./movable-block)
check "memory block ${block:-?} is ZONE_MOVABLE, online and empty" test -n "$block"
# Eight for the memfd, a few spare: new pages, which come from the empty
# movable block first, and the memfd takes the newest free pages first.
echo $(($(cat "$pool") + 12)) >"$pool"
free=$(cat "$(hugepages_dir 2M)/free_hugepages")
check "at least 9 free 2 MiB pages ($free)" test "$free" -ge 9
check "kept_offline" "$MFR_ROOT/build/helpers/kept_offline"
check "pool counters agree" pool_consistent
echo "$n" >"$pool"
check "the 2 MiB pool is back to $n pages" test "$(cat "$pool")" = "$n"
finish
