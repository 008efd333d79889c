#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest side of "make test-mce" (see run.sh): an action-optional and an
# action-required machine check, each on one 4 KiB page of a kept 2 MiB
# HugeTLB memfd, then the module's account of them; then, for kept 2 MiB
# and 1 GiB pages, what the kernel's accessors, MAP_PRIVATE, hole punch and
# userfaultfd do with a page a machine check poisoned; then kernel
# references (io_uring, a pipe) taken before a machine check.
set -u
. "$MFR_ROOT/tests/vm/lib.sh"
: "${MCE_DIR:?}"
helpers=$MFR_ROOT/build/helpers

check "the vCPU is GenuineIntel (AuthenticAMD panics on any UC error)" \
	grep -q 'vendor_id.*GenuineIntel' /proc/cpuinfo
case $(cat /proc/cmdline) in
*init_on_free=1*)
	check "init_on_free is on: releasing after a machine check must not write the poisoned pages" \
		grep -q 'mem auto-init:.*free:on' <(dmesg) ;;
esac

# The action-required machine checks go to CPU 1 while a helper spins
# there in user mode (the only place they are recoverable), or to a kernel
# thread copying there: nothing else should run on it.  Every task that
# may move and every interrupt go to CPU 0; this shell too, so everything
# it starts stays there unless it asks for CPU 1.
quiet_cpu1() {
	local p i
	for p in /proc/[0-9]*; do
		taskset -a -p 1 "${p#/proc/}" >/dev/null 2>&1
	done
	echo 1 >/proc/irq/default_smp_affinity 2>/dev/null
	for i in /proc/irq/[0-9]*; do
		echo 1 >"$i/smp_affinity" 2>/dev/null
	done
	return 0
}
quiet_cpu1
check "CPU 1 quiet: this shell runs on CPU 0 only" \
	grep -qx 'Cpus_allowed_list:[[:space:]]*0' /proc/$$/status

# pfn_record PFN: that pfn's poison-get record as "state times-consumed".
pfn_record() {
	ynl --dump poison-get --output-json 2>/dev/null | "$PYTHON" -c '
import json, sys
for r in json.load(sys.stdin):
    if r["pfn"] == int(sys.argv[1], 0):
        print(r["state"], r.get("times-consumed", 0))' "$1"
}

for mode in ${MCE_MODES:-ao ar}; do
	before_offlined=$(status_attr folios-offlined)
	# The helper prints its own ok/not ok lines.
	if "$helpers/mce_target" "$mode" $([ $mode = ao ] && echo 3 || echo 7) \
		"$MCE_DIR/req-$mode"; then
		pass "$mode: SIGBUS, exact address, lsb 12, hugepage still serves"
	else
		fail "$mode: mce_target"
	fi
	read -r _ _ phys <"$MCE_DIR/req-$mode.served" 2>/dev/null ||
		read -r _ _ phys <"$MCE_DIR/req-$mode"
	pfn=$(printf '%#x' $((phys >> 12)))
	rec=$(pfn_record "$pfn")
	check "$mode: pfn $pfn reported and offlined after close (record: $rec)" \
		test "${rec%% *}" = offlined
	check "$mode: the hugepage was dissolved and its pfn isolated" \
		test "$(status_attr folios-offlined)" = $((before_offlined + 1))
done

# The kernel paths that read or pin user memory, MAP_PRIVATE, hole punch
# and userfaultfd, each after a real machine check took the poisoned page
# out of the direct map, where a kernel read of it would oops.
modes=(${MCE_MODES:-ao ar})
requests=${#modes[@]}
kept_pages=${#modes[@]}
for size in ${MCE_SIZES:-2M 1G}; do
	before_offlined=$(status_attr folios-offlined)
	[ "$size" != 1G ] || check "a free 1 GiB page" one_free_1g_page
	check "$size: kept_access after an action-optional machine check" \
		"$helpers/kept_access" "$size" mce "$MCE_DIR/req-ao"
	[ "$size" != 1G ] || check "a free 1 GiB page" one_free_1g_page
	check "$size: kept_uffd, action-optional then action-required machine check" \
		"$helpers/kept_uffd" "$size" mce "$MCE_DIR"
	requests=$((requests + 3))
	kept_pages=$((kept_pages + 2))
	check "$size: both hugepages offlined after close" \
		test "$(status_attr folios-offlined)" = $((before_offlined + 2))
done

# Kernel references taken before the error and used after it: an io_uring
# fixed buffer (the kernel copies through the direct map) and a pipe
# holding the page.  Not reported recovered, so P stays in the direct map
# as stock leaves a pinned hugepage; a copy from it after set_mce_nospec()
# would oops.
if [[ " ${MCE_SIZES:-2M 1G} " == *" 2M "* ]] && [[ " ${modes[*]} " == *" ao "* ]]; then
	said=$(dmesg | grep -c 'kept hugepage still referenced by .* left in the direct map')
	for how in io-uring io-uring-released vmsplice; do
		before_offlined=$(status_attr folios-offlined)
		check "2M: $how reference taken before an action-optional machine check, used after it" \
			"$helpers/pin_mce" "$how" "$MCE_DIR/req-ao"
		check "2M: $how: the hugepage offlined after the references went" \
			test "$(status_attr folios-offlined)" = $((before_offlined + 1))
		requests=$((requests + 1))
		kept_pages=$((kept_pages + 1))
		# and page 0, poisoned by MADV_HWPOISON before the buffer
		[ "$how" != io-uring-released ] || kept_pages=$((kept_pages + 1))
	done
	check "the kernel said all three were left in the direct map" test \
		"$(dmesg | grep -c 'kept hugepage still referenced by .* left in the direct map')" -ge $((said + 3))
fi
# A kernel thread that never returns to user space, as a vhost worker,
# copying again and again from a kept hugepage while action-required
# machine checks hit its two known poisoned pages in turn
# (tests/kmod/mfr_copyin_loop.ko): each one in a copy is fixed up (the copy
# fails) and none counts towards the limits that turn consecutive machine
# checks into a panic.  The second is at another page, which without the
# series' patch 0022 panics at once ("Consecutive machine checks to
# different user pages"); more than ten at one page panics the same way,
# but each injection risks landing outside the copy (a fatal machine
# check of its own), so two it is.
if [[ " ${modes[*]} " == *" ar "* ]]; then
	loop=/sys/kernel/debug/mfr_copyin_loop
	hold=$MCE_DIR/hold
	rm -f "$hold"
	"$helpers/kept_hold" "$hold" 3 7 &
	holder=$!
	check "copy-in: a kept hugepage held with pages 3 and 7 poisoned" wait_file "$hold"
	read -r hpid haddr pfn3 pfn7 <"$hold"
	check "copy-in: the loop module loads" insmod "$MFR_ROOT/tests/kmod/mfr_copyin_loop.ko"
	echo "$hpid $haddr 1048576 1" >"$loop"
	failed() { awk '{ print $4 }' "$loop"; }
	served=0
	for i in 1 2; do
		pfn=$([ $((i % 2)) = 1 ] && echo "$pfn3" || echo "$pfn7")
		before=$(failed)
		printf 'ar 1 %#x\n' $((0x$pfn << 12)) >"$MCE_DIR/req-ar.tmp" &&
			mv "$MCE_DIR/req-ar.tmp" "$MCE_DIR/req-ar"
		for _ in $(seq 300); do
			[ ! -e "$MCE_DIR/req-ar" ] && [ "$(failed)" -gt "$before" ] && break
			sleep 0.1
		done
		[ "$(failed)" -gt "$before" ] && served=$((served + 1))
	done
	echo stop >"$loop"
	requests=$((requests + 2))
	kept_pages=$((kept_pages + 2))
	check "copy-in: both machine checks (page 3, then page 7) failed a copy, and the host went on ($served; $(cat "$loop"))" \
		test "$served" = 2
	check "copy-in: none was counted towards a panic" \
		test "$(dmesg | grep -c 'Too many consecutive machine checks\|Consecutive machine checks to different')" = 0
	rmmod mfr_copyin_loop
	before_offlined=$(status_attr folios-offlined)
	kill "$holder"
	wait "$holder"
	for _ in $(seq 100); do
		[ "$(status_attr folios-offlined)" -gt "$before_offlined" ] && break
		sleep 0.2
	done
	check "copy-in: the hugepage offlined once its holder died" \
		test "$(status_attr folios-offlined)" = $((before_offlined + 1))
fi
echo "$requests" >"$MCE_DIR/requests"

check "the kernel logged the machine checks" \
	grep -q 'Machine check events logged' <(dmesg)
check "the action-required one in user mode" \
	grep -q 'Uncorrected hardware memory error in user-access' <(dmesg)
check "HardwareCorrupted is $((4 * kept_pages)) kB (4 KiB per poisoned page, not a hugepage)" \
	grep -qE "^HardwareCorrupted: +$((4 * kept_pages)) kB" /proc/meminfo
finish
