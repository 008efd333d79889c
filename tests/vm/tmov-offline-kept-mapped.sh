# SPDX-License-Identifier: GPL-2.0-or-later
# Memory offline (hot-remove) of a ZONE_MOVABLE block that holds a kept
# hugepage with a poisoned base page and another hugepage below it: the
# offline fails at once, and the kept hugepage is still kept (no hwpoison
# entries over all of it: healthy words read back, still mapped at the
# same frame).  The offline dissolves the block's free hugepages:
# the pool is refilled afterwards.
. ./lib.sh
movable=$(awk '/^Node .* zone +Movable/ { m = 1; next } /^Node/ { m = 0 }
	m && $1 == "managed" { s += $2 } END { print s + 0 }' /proc/zoneinfo)
check "ZONE_MOVABLE has memory in this boot ($movable pages, movablecore=)" test "$movable" -gt 0
pool=$(hugepages_dir 2M)/nr_hugepages
n=$(cat "$pool")
# Eight for the memfd, one to migrate into, a few spare; new pool pages
# come from ZONE_MOVABLE first.
echo $((n + 12)) >"$pool"
free=$(cat "$(hugepages_dir 2M)/free_hugepages")
check "at least 9 free 2 MiB pages ($free)" test "$free" -ge 9
check "kept_offline" "$MFR_ROOT/build/helpers/kept_offline"
check "pool counters agree" pool_consistent
echo "$n" >"$pool"
check "the 2 MiB pool is back to $n pages" test "$(cat "$pool")" = "$n"
finish
