# SPDX-License-Identifier: GPL-2.0-or-later
# Each boot first proves what it claims to test: THP on; HugeTLB vmemmap
# optimization (HVO) really freeing vmemmap where the command line asks for
# it and nowhere else; init_on_free and a hugetlb CMA area where asked.
. ./lib.sh
cmdline=$(cat /proc/cmdline)

check "THP is on (always)" grep -q '\[always\]' /sys/kernel/mm/transparent_hugepage/enabled

# tests/run boots with highres=off so that QEMU re-arms the tick itself:
# every CPU's LAPIC timer then runs in periodic mode.
case $cmdline in
*highres=off*)
	check "each CPU's tick: the LAPIC timer, periodic" test \
		"$(grep -c 'event_handler:  tick_handle_periodic' /proc/timer_list)" = "$(nproc)"
	;;
esac

case $cmdline in
*hugetlb_free_vmemmap=on*) hvo=1 ;;
*) hvo=0 ;;
esac
check "vm.hugetlb_optimize_vmemmap is $hvo" \
	test "$(cat /proc/sys/vm/hugetlb_optimize_vmemmap)" = "$hvo"

# Growing the pool by 8 x 2 MiB pages frees 7 of each one's 8 vmemmap
# pages with HVO (a few may go to page tables), none without.
pool=$(hugepages_dir 2M)/nr_hugepages
n=$(cat "$pool")
m0=$(memmap_pages)
echo $((n + 8)) >"$pool"
m1=$(memmap_pages)
echo "$n" >"$pool"
freed=$((m0 - m1))
if [ "$hvo" = 1 ]; then
	check "HVO active: 8 new 2 MiB pages freed $freed vmemmap pages (>= 48)" test "$freed" -ge 48
else
	check "HVO inactive: 8 new 2 MiB pages freed $freed vmemmap pages (0)" test "$freed" -le 1 -a "$freed" -ge -1
fi
check "the pool is back to $n" test "$(cat "$pool")" = "$n"

# The HVO boot's 1 GiB pages, one per t1g test, allocated now while memory
# is unfragmented (at boot, stock HVO of gigantic pages warns, see README):
# each frees 4095 of its 4096 vmemmap pages.
if [ "$hvo" = 1 ]; then
	g1=$(hugepages_dir 1G)/nr_hugepages
	m0=$(memmap_pages)
	n1=$(ls t1g-*.sh | wc -l)
	echo "$n1" >"$g1"
	m1=$(memmap_pages)
	check "$n1 x 1 GiB pages allocated at run time ($(cat "$g1"))" test "$(cat "$g1")" = "$n1"
	check "HVO freed their vmemmap: $((m0 - m1)) pages (>= $n1 x 4000)" test $((m0 - m1)) -ge $((n1 * 4000))
fi

# The boot's own hugepages: memblock's vmemmap is 512 pages per 128 MiB
# section; HVO returned 7 per 2 MiB and 4095 per 1 GiB page to it.
sections=$(($(ls -d /sys/devices/system/memory/memory* | wc -l) * \
	$(printf '%d' "0x$(cat /sys/devices/system/memory/block_size_bytes)") / (128 << 20)))
boot_saved=$((sections * 512 - $(vmstat nr_memmap_boot_pages)))
want=0
for size in 2M 1G; do
	dir=$(hugepages_dir "$size")
	[ -d "$dir" ] || continue
	case $size in 2M) per=7 ;; 1G) per=4095 ;; esac
	want=$((want + $(cat "$dir/nr_hugepages") * per))
done
if [ "$hvo" = 1 ]; then
	check "HVO freed the boot pages' vmemmap: $boot_saved pages (>= $want)" test "$boot_saved" -ge "$want"
else
	check "no vmemmap freed at boot: $boot_saved pages (< 64)" test "$boot_saved" -lt 64
fi

case $cmdline in
*init_on_free=1*)
	check "init_on_free is on" bash -c "dmesg | grep -q 'mem auto-init:.*free:on'" ;;
*)
	check "init_on_free is off" bash -c "! dmesg | grep -q 'mem auto-init:.*free:on'" ;;
esac

case $cmdline in
*hugetlb_cma=*)
	cma=$(awk '/^CmaTotal:/ { print $2 }' /proc/meminfo)
	check "a hugetlb CMA area was reserved (CmaTotal $cma kB)" test "$cma" -ge $((2 << 20)) ;;
esac

check "pool counters agree" pool_consistent
finish
