# SPDX-License-Identifier: GPL-2.0-or-later
# Two NUMA nodes (the numa boot): migration around a kept hugepage, a
# surplus page per node, and a 1 GiB page allocated at run time on the
# node the kept hugepage is not on.  kept_numa binds a kept memfd of
# three 2 MiB pages A, B, C to node 0 and poisons a 4 KiB page of A:
# move_pages() and mbind(MPOL_MF_MOVE) move B and C to node 1 and leave A
# (not migratable) kept on node 0.  While it lives, node 1 gets a 1 GiB
# page at run time (alloc_contig_pages() over node 1, where B and C are),
# and gives it back.  On close only node 0 loses A.
. ./lib.sh
check "two NUMA nodes online" test "$(cat /sys/devices/system/node/online)" = 0-1
set_node_pool 0 2M 8
set_node_pool 1 2M 8
check "8 x 2 MiB pages on each node" \
	test "$(node_pools_2m nr_hugepages)" = "8 8"
check "a 1 GiB hstate exists" test -d "$(hugepages_dir 1G)"
check "no 1 GiB page on node 1 yet" test "$(node_pool 1 1G nr_hugepages)" = 0

before=$(./status-value folios-offlined)
hold="cd $PWD && ./numa-migrate-hold"
check "kept_numa: A kept on node 0, B and C moved to node 1" \
	"$MFR_ROOT/build/helpers/kept_numa" "$hold"
check "status after close" ./expect-status memfds-kept=0 raw-pages-kept=0 folios-pending=0 \
	folios-offlined=$((before + 1))
check "node 0 lost A, node 1 kept its 8 (nr_hugepages $(node_pools_2m nr_hugepages))" \
	test "$(node_pools_2m nr_hugepages)" = "7 8"
check "all free again (free_hugepages $(node_pools_2m free_hugepages))" \
	test "$(node_pools_2m free_hugepages)" = "7 8"
check "pool counters agree per node" pool_consistent

# A surplus page per node: both pools empty (a task bound to node 1 cannot
# reserve a page while another node has free ones: allowed_mems_nr()),
# overcommit allowed; a kept memfd bound to node 1 gets a surplus page
# there, which leaves the surplus count of node 1 when it is released.
dir=$(hugepages_dir 2M)
overcommit=$(cat "$dir/nr_overcommit_hugepages")
set_node_pool 0 2M 0
set_node_pool 1 2M 0
echo 8 >"$dir/nr_overcommit_hugepages"
check "no 2 MiB page on either node" test "$(node_pools_2m nr_hugepages)" = "0 0"
check "keep, poison and release a surplus hugepage of node 1" \
	numactl --membind=1 "$MFR_ROOT/build/helpers/kept_lifecycle" release 2M \
	"test \$(cat /sys/devices/system/node/node1/hugepages/hugepages-2048kB/surplus_hugepages) = 1 -a \$(cat /sys/devices/system/node/node0/hugepages/hugepages-2048kB/surplus_hugepages) = 0" true
check "no surplus page left on either node" \
	test "$(node_pools_2m surplus_hugepages)" = "0 0"
check "and no persistent page either" test "$(node_pools_2m nr_hugepages)" = "0 0"
check "pool counters agree per node" pool_consistent
echo "$overcommit" >"$dir/nr_overcommit_hugepages"
finish
