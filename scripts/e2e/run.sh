#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# "make e2e": mfr on a Debian fleet host, end to end, in a QEMU (TCG)
# guest with systemd as PID 1, for each distribution in E2E_DIST
# ("bookworm", the default, "trixie", or both in sequence: "bookworm
# trixie").  Steps, each cached where it can be:
#   kernel-debs.sh   the patched kernel as .debs (image, headers)
#   rootfs.sh        a debootstrapped root of that distribution
#   make deb         mfr-dkms and mfrd .debs
#   image.sh         this run's disk: kernel .debs, mfr-dkms and mfrd .debs, tests
#   boot.sh          QEMU until the guest powers off (it reboots four times)
# Debian 12's kernel and packages are built on this (Debian 12) machine;
# Debian 13's in a trixie chroot (build-chroot.sh) from trixie's own
# linux-source-6.12, compiler and debhelper, as its operators would build
# them, and its image also runs a real KVM guest under trixie's QEMU
# (tests/e2e/stage-vm-guest.sh).  The guest side is tests/e2e/
# (guest-test.sh and its stages).  Prints one PASS/FAIL line per guest
# check, named e2e/DIST/..., checks every boot's kernel log, and ends with
# "N passed, N failed".  Needs root (debootstrap, chroot, dpkg).
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$MFR_ROOT"
[ "$(id -u)" = 0 ] || die "make e2e needs root (debootstrap, chroot)"
E2E_DIST=${E2E_DIST:-bookworm}
for dist in $E2E_DIST; do
	case $dist in
	bookworm | trixie) ;;
	*) die "E2E_DIST: '$dist' is not bookworm or trixie" ;;
	esac
done

passed=0
failed=0
result() { # PASS|FAIL NAME [LOGFILE]
	echo "$1 $2"
	if [ "$1" = PASS ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		[ -n "${3:-}" ] && [ -f "$3" ] && tail -n 30 "$3" | sed 's/^/    /'
	fi
}
finish() {
	echo "timings: $timings"
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
	exit
}
timings=
# step NAME COMMAND...: run a build step, time it; false if it failed.
step() {
	local name=$1 t=$SECONDS
	shift
	echo "e2e: $name" >&2
	if ! "$@"; then
		result FAIL "e2e/$name"
		return 1
	fi
	timings+="$name $((SECONDS - t))s; "
}

# build_bookworm OUT: the kernel and mfr's .debs built here (Debian 12).
build_bookworm() {
	local out=$1
	step bookworm/kernel-debs eval 'kdebs=$(scripts/e2e/kernel-debs.sh)' &&
		step bookworm/rootfs eval 'rootfs=$(scripts/e2e/rootfs.sh bookworm)' &&
		step bookworm/mfr-debs eval 'make -s deb >"$out/deb.log" 2>&1 ||
			{ tail -n 30 "$out/deb.log" >&2; false; }' &&
		mdebs=$MFR_ROOT/build/deb vm_image=
}
# build_trixie OUT: the kernel from trixie's linux-source-6.12 and mfr's
# .debs, built in a trixie chroot; the KVM guest the image runs.
build_trixie() {
	local out=$1 chroot
	step trixie/build-chroot eval 'chroot=$(scripts/e2e/build-chroot.sh trixie)' &&
		step trixie/kernel-debs eval 'kdebs=$(MFR_KERNEL_SUITE=trixie \
			scripts/e2e/chroot-run.sh "$chroot" "$MFR_ROOT/scripts/e2e/kernel-debs.sh")' &&
		step trixie/rootfs eval 'rootfs=$(scripts/e2e/rootfs.sh trixie)' &&
		step trixie/mfr-debs eval 'make -s deb DEB_CHROOT="$chroot" DEB_DIR="$out/deb" \
			>"$out/deb.log" 2>&1 || { tail -n 30 "$out/deb.log" >&2; false; }' &&
		mdebs=$out/deb &&
		step trixie/vm-guest-image eval 'tests/vmm/image.sh d13 >&2 &&
			vm_image=$MFR_ROOT/build/vmm/image-d13' || return 1
	# Debian 13's lintian on the packages built there.
	if scripts/e2e/chroot-run.sh "$chroot" lintian --pedantic -I -E --show-overrides \
		"$out"/deb/*.deb >"$out/lintian.log" 2>&1 &&
		! grep -E '^[EWIPX]: ' "$out/lintian.log" | grep -v 'running with root privileges'; then
		result PASS "e2e/trixie/lintian --pedantic over trixie's mfr .debs: no tag but the overridden"
	else
		result FAIL "e2e/trixie/lintian --pedantic over trixie's mfr .debs" "$out/lintian.log"
	fi
}

# run_dist DIST: build, boot and judge one distribution's image.
run_dist() {
	local dist=$1 out=$MFR_ROOT/build/e2e/$1 share qemu_rc tailer t line boots boot dmesg
	local kdebs rootfs mdebs vm_image
	share=$out/share
	rm -rf "$out"
	mkdir -p "$share"
	"build_$dist" "$out" || return
	step "$dist/image" scripts/e2e/image.sh "$rootfs" "$kdebs" "$mdebs" "$out" $vm_image || return

	echo "e2e: booting the $dist guest (serial console: $out/serial.log)" >&2
	touch "$share/results"
	tail -n +1 -F "$share/results" 2>/dev/null | sed -u "s/^/e2e $dist guest: /" >&2 &
	tailer=$!
	t=$SECONDS
	case $dist in
	# kvm_amd for the KVM guest: TCG's AMD model, with SVM and nested
	# paging.  Its boots take longer (systemd 257, the KVM guest): 93
	# minutes to boot 5's many-records stage at load average 11 to 14.
	trixie) E2E_CPU=${E2E_CPU:-max} E2E_MEM=${E2E_MEM:-3G} \
		scripts/e2e/boot.sh "$out" "$share" ;;
	*) scripts/e2e/boot.sh "$out" "$share" ;;
	esac
	qemu_rc=$?
	timings+="$dist/guest $((SECONDS - t))s; "
	sleep 1
	kill "$tailer" 2>/dev/null
	wait "$tailer" 2>/dev/null

	while IFS= read -r line; do
		case $line in
		"ok - "*) result PASS "e2e/$dist/${line#ok - }" ;;
		"not ok - "*) result FAIL "e2e/$dist/${line#not ok - }" ;;
		esac
	done <"$share/results"

	if [ -f "$share/done" ]; then
		result PASS "e2e/$dist/guest powered off after its last stage"
	else
		result FAIL "e2e/$dist/guest powered off after its last stage (qemu exit $qemu_rc)" "$out/serial.log"
	fi
	# Every boot the guest started (it writes its number to "boot").
	boots=$(cat "$share/boot" 2>/dev/null || echo 1)
	for boot in $(seq 1 "$boots"); do
		dmesg=$share/dmesg-boot$boot.txt
		if [ ! -f "$dmesg" ]; then
			result FAIL "e2e/$dist/boot$boot/guest-kernel-log-clean (no log saved)"
		elif scripts/check-kernel-log.sh "$dmesg" >"$out/klog$boot.txt" 2>&1; then
			result PASS "e2e/$dist/boot$boot/guest-kernel-log-clean"
		else
			result FAIL "e2e/$dist/boot$boot/guest-kernel-log-clean ($dmesg)" "$out/klog$boot.txt"
		fi
	done
	# The console covers what no saved log has (a crash before the save).
	if scripts/check-kernel-log.sh "$out/serial.log" >"$out/klog-serial.txt" 2>&1; then
		result PASS "e2e/$dist/serial-console-clean"
	else
		result FAIL "e2e/$dist/serial-console-clean ($out/serial.log)" "$out/klog-serial.txt"
	fi
	[ -f "$share/timings" ] && timings+="$dist stages: $(tr '\n' ' ' <"$share/timings")"
	[ "$failed" = 0 ] && rm -f "$out/disk.img"
}

for dist in $E2E_DIST; do
	run_dist "$dist"
done
finish
