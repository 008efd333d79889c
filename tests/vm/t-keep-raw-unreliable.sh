# SPDX-License-Identifier: GPL-2.0-or-later
# A kept hugepage whose list of poisoned base pages could not be recorded
# (the GFP_ATOMIC allocation in hugetlb_update_hwpoison() failed, so the
# kernel no longer knows which pages are poisoned) is leaked whole on
# release, as stock leaks such a hugepage, and reported offlined: nothing
# stays pending for the module, which then unloads.  The failure is
# injected with failslab: atomic allocations of this task under
# memory_failure(), the first of which is that list entry.
. ./lib.sh
fs=/sys/kernel/debug/failslab
script=$MFR_ROOT/build/helpers/memfd_script
pool=$(hugepages_dir 2M)/nr_hugepages
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug

read -r start end < <(kernel_func_range memory_failure)
check "found memory_failure in System.map ($start-$end)" test -n "$end"

d=$(mktemp -d)
echo $(($(cat "$pool") + 1)) >"$pool"
pool_before=$(cat "$pool")
offlined=$(./status-value folios-offlined)
leaked_before=$(dmesg | grep -c 'cannot be dissolved: all of it stays offline')
corrupted_before=$(awk '/^HardwareCorrupted:/ { print $2 }' /proc/meminfo)

echo 0 >"$fs/verbose"
echo Y >"$fs/ignore-gfp-wait"
echo Y >"$fs/task-filter"
echo "0x$start" >"$fs/require-start"
echo "0x$end" >"$fs/require-end"
echo 1 >"$fs/times"
echo 100 >"$fs/probability"
# make-it-fail is inherited by the helper's threads.
sh -c "echo 1 >/proc/self/make-it-fail && exec $script --keep guest-ram-unreliable 1 \
	poison:3 read:3 read:5 ready:$d/ready wait:$d/go close" >"$d/out" &
helper=$!
for _ in $(seq 600); do [ -e "$d/ready" ] && break; sleep 0.1; done
echo 0 >"$fs/probability"
check "the helper is ready" test -e "$d/ready"
check "a failure was injected under memory_failure()" test "$(cat "$fs/times")" = 0
check "kept: the poisoning thread got SIGBUS lsb 12 at its page" \
	grep -qx 'sigbus 3 code=AR lsb=12 exact=1' "$d/out"
check "the hugepage stays mapped: a healthy word reads back" grep -qx 'read 5 ok' "$d/out"
check "status while open" ./expect-status memfds-kept=1 raw-pages-kept=1
touch "$d/go"
wait "$helper"
check "the helper ran its steps" test $? = 0
cat "$d/out"

for _ in $(seq 100); do
	[ "$(./status-value folios-pending)" = 0 ] && break
	sleep 0.2
done
check "released: leaked whole, and said so" test \
	"$(dmesg | grep -c 'cannot be dissolved: all of it stays offline')" -gt "$leaked_before"
check "status: offlined, nothing pending or kept" ./expect-status folios-pending=0 \
	memfds-kept=0 raw-pages-kept=0 folios-offlined=$((offlined + 1))
check "the pool is one lower" test "$(cat "$pool")" = $((pool_before - 1))
check "pool counters agree" pool_consistent
corrupted=$(awk '/^HardwareCorrupted:/ { print $2 }' /proc/meminfo)
echo "# HardwareCorrupted: $corrupted_before kB before, $corrupted kB after"
check "HardwareCorrupted did not shrink" test "$corrupted" -ge "$corrupted_before"
check "rmmod mfr works" rmmod mfr
insmod "$MFR_ROOT/module/mfr.ko"
check "mfr loads again" module_loaded

echo N >"$fs/task-filter"
echo N >"$fs/ignore-gfp-wait"
echo 0 >"$fs/require-start"
echo 0xffffffffffffffff >"$fs/require-end"
rm -rf "$d"
finish
