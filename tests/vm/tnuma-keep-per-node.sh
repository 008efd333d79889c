# SPDX-License-Identifier: GPL-2.0-or-later
# Two NUMA nodes (the numa boot): per-node pools stay right around a kept
# hugepage.  A kept 2 MiB memfd bound to node 1 gets 3 poisoned pages; it
# takes its pages from node 1's pool only; on close only node 1's pool
# loses the kept hugepage, and the counters agree per node.
. ./lib.sh
check "two NUMA nodes online" test "$(cat /sys/devices/system/node/online)" = 0-1
for n in 0 1; do
	mem=$(awk '/MemTotal/ { print $4 }' /sys/devices/system/node/node$n/meminfo)
	check "node $n has memory ($mem kB)" test "${mem:-0}" -gt 1000000
done
set_node_pool 0 2M 8
set_node_pool 1 2M 8
check "8 x 2 MiB pages on each node" \
	test "$(node_pools_2m nr_hugepages)" = "8 8"

modprobe hwpoison_inject
before=$(./status-value folios-offlined)
# numa-hold runs while the memfd lives.
hold="cd $PWD && ./numa-hold"
check "keep_hwpoison bound to node 1, 3 pages poisoned" \
	numactl --membind=1 "$MFR_ROOT/build/helpers/keep_hwpoison" 2M 3 madvise close "$hold"
check "status after close" ./expect-status memfds-kept=0 raw-pages-kept=0 folios-pending=0 \
	folios-offlined=$((before + 1))
check "node 1 lost the kept hugepage, node 0 kept its 8 (nr_hugepages $(node_pools_2m nr_hugepages))" \
	test "$(node_pools_2m nr_hugepages)" = "8 7"
check "all free again (free_hugepages $(node_pools_2m free_hugepages))" \
	test "$(node_pools_2m free_hugepages)" = "8 7"
check "pool counters agree per node" pool_consistent
set_node_pool 0 2M 0
set_node_pool 1 2M 0
finish
