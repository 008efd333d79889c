# SPDX-License-Identifier: GPL-2.0-or-later
# mfr.ko's init fails cleanly wherever an allocation fails: the Nth slab
# allocation under the module's init is failed (fail-nth, failslab's stack
# filter on do_one_initcall), for N = 1, 2, 3, 5, 7, 10, 14, ... (each about
# 1.4 times the last: an insmod takes seconds under TCG) until an insmod
# runs through with no failure injected.  Each failed insmod leaves no module,
# no family and no leak (kmemleak); each that copes loads a working
# module.  Then the family's registration fails: a test module holds the
# name "mfr" (-EEXIST).  The hooks are registered after the family, so no
# memfd is kept meanwhile, and nothing is left.  Then a plain insmod works.
. ./lib.sh
fs=/sys/kernel/debug/failslab
pa=/sys/kernel/debug/fail_page_alloc
kmemleak=/sys/kernel/debug/kmemleak
ko=$MFR_ROOT/module/mfr.ko
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug

read -r start end < <(kernel_func_range do_one_initcall)
check "found do_one_initcall in System.map ($start-$end)" test -n "$end"
# Not under sysfs_slab_add(): when kobject_init_and_add() fails there,
# 6.12 leaks the kobject's name (stock slab code, not the module's).
read -r rstart rend < <(kernel_func_range sysfs_slab_add)
check "found sysfs_slab_add in System.map ($rstart-$rend)" test -n "$rend"

# fail-nth counts the calls of every fault type whose stack filter
# passes: failslab's is the module's init, fail_page_alloc's matches
# nothing.  failslab's own probability stays 0, so nothing else fails;
# its "times" drops by one for each failure fail-nth injects.
echo 0 >"$fs/probability"
echo 1000000 >"$fs/times"
echo N >"$fs/ignore-gfp-wait"
echo N >"$fs/task-filter"
echo 0 >"$fs/verbose"
echo "0x$start" >"$fs/require-start"
echo "0x$end" >"$fs/require-end"
echo "0x$rstart" >"$fs/reject-start"
echo "0x$rend" >"$fs/reject-end"
echo 1 >"$pa/require-start"
echo 2 >"$pa/require-end"
echo 0 >"$pa/probability"

family_answers() { "$MFRCTL" stats >/dev/null 2>&1; }
module_gone() { ! module_loaded && ! family_answers; }

echo scan >"$kmemleak" && echo clear >"$kmemleak"
rmmod mfr
check "mfr unloaded" module_gone
failed=0 coped=0 family_failed=0 bad=0
n=1
while [ "$n" -le 100000 ]; do
	times=$(cat "$fs/times")
	# fail-nth belongs to the task that writes it, and survives exec.
	sh -c "echo $n >/proc/thread-self/fail-nth && exec insmod $ko" 2>/dev/null
	rc=$?
	if [ "$(cat "$fs/times")" = "$times" ]; then
		# Fewer than n allocations: the sweep is over.
		check "insmod with no failure injected (n=$n) loads mfr" \
			test "$rc" = 0 -a -d /sys/module/mfr
		break
	fi
	if [ "$rc" = 0 ]; then
		coped=$((coped + 1))
		family_answers || { echo "# n=$n: loaded without a family"; bad=1; }
		rmmod mfr || { echo "# n=$n: rmmod failed"; bad=1; }
	else
		failed=$((failed + 1))
		module_gone || { echo "# n=$n: insmod failed, mfr left behind"; bad=1; }
	fi
	n=$(((n * 7 + 4) / 5))
done
echo "# $failed insmods failed cleanly, $coped coped with the failure"
check "every injected init failure was clean ($failed failed, $coped coped)" \
	test "$bad" = 0 -a "$failed" -gt 0

# The family's registration fails: its name is taken.
module_loaded && rmmod mfr
insmod "$MFR_ROOT/tests/kmod/mfr_family_squatter.ko"
err=$(insmod "$ko" 2>&1)
rc=$?
echo "# $err"
check "insmod fails: the family name is taken" test "$rc" != 0
check "the module said why" sh -c "dmesg | tail -n 20 | grep -q 'mfr: .*family'"
check "no mfr module left" test ! -d /sys/module/mfr
check "MFD_MF_KEEP_UE_MAPPED refused with mfr not loaded" \
	"$MFR_ROOT/build/helpers/memfd_flags" EOPNOTSUPP
rmmod mfr_family_squatter

# Back to normal.
echo 0 >"$fs/require-start"
echo 0xffffffffffffffff >"$fs/require-end"
echo 0 >"$fs/reject-start"
echo 0 >"$fs/reject-end"
echo 0 >"$pa/require-start"
echo 0xffffffffffffffff >"$pa/require-end"
echo 1 >"$fs/times"
module_loaded || insmod "$ko"
check "a plain insmod loads a working mfr" family_answers

# Objects younger than 5 s are never reported.
sleep 6
echo scan >"$kmemleak"
echo scan >"$kmemleak"
leaks=$(cat "$kmemleak")
check "kmemleak reports nothing" test -z "$leaks"
echo "$leaks" | head -n 60
finish
