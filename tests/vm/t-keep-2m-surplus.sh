# SPDX-License-Identifier: GPL-2.0-or-later
# A kept hugepage that is a surplus (overcommitted) page: released, it
# leaves the surplus count, the pool's size stays what the operator set,
# and every pool counter agrees.
. ./lib.sh
dir=$(hugepages_dir 2M)
nr=$(cat "$dir/nr_hugepages")
overcommit=$(cat "$dir/nr_overcommit_hugepages")
# Shrink the pool to what is in use or reserved (earlier tests may hold
# some): the next hugepage faulted in must be a surplus one.
rsvd=$(cat "$dir/resv_hugepages")
in_use=$(($(cat "$dir/nr_hugepages") - $(cat "$dir/free_hugepages") + rsvd))
echo "$in_use" >"$dir/nr_hugepages"
echo 2 >"$dir/nr_overcommit_hugepages"
check "no unreserved free 2 MiB page left ($in_use in use or reserved)" \
	test "$(cat "$dir/free_hugepages")" = "$rsvd"
check "keep, poison and release a surplus hugepage" \
	"$MFR_ROOT/build/helpers/kept_lifecycle" release 2M \
	"test \$(cat $dir/surplus_hugepages) = 1" true
check "no surplus page left" test "$(cat "$dir/surplus_hugepages")" = 0
check "vm.nr_hugepages still $in_use" test "$(cat /proc/sys/vm/nr_hugepages)" = "$in_use"
check "pool counters agree" pool_consistent
echo "$overcommit" >"$dir/nr_overcommit_hugepages"
echo "$nr" >"$dir/nr_hugepages"
check "the pool is back to $nr" test "$(cat "$dir/nr_hugepages")" = "$nr"
finish
