# SPDX-License-Identifier: GPL-2.0-or-later
# hugetlb cgroup accounting across keep and release: a kept memfd's
# hugepages stay charged to its cgroup while it lives, poisoned or not,
# and are uncharged when it is released.
. ./lib.sh
root=/sys/fs/cgroup
grep -q "^cgroup2 $root " /proc/mounts || mount -t cgroup2 none "$root"
check "the hugetlb controller is available" grep -qw hugetlb "$root/cgroup.controllers"
echo +hugetlb >"$root/cgroup.subtree_control"
cg=$root/mfr-charge-test
mkdir -p "$cg"
check "nothing charged before" test "$(cat "$cg/hugetlb.2MB.current")" = 0
check "keep_hwpoison 2M 1 madvise close in the cgroup, 2 hugepages charged while alive" \
	bash -c "echo \$\$ >$cg/cgroup.procs && exec '$MFR_ROOT/build/helpers/keep_hwpoison' 2M 1 madvise close \
		'test \$(cat $cg/hugetlb.2MB.current) = 4194304'"
check "uncharged after the release ($(cat "$cg/hugetlb.2MB.current"))" \
	test "$(cat "$cg/hugetlb.2MB.current")" = 0
check "pool counters agree" pool_consistent
rmdir "$cg"
finish
