#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# "make e2e": mfr on a Debian 12 fleet host, end to end, in a QEMU (TCG)
# guest with systemd as PID 1.  Steps, each cached where it can be:
#   kernel-debs.sh  the patched kernel as .debs (image, headers)
#   rootfs.sh       a debootstrapped Debian 12 root (cached by package list)
#   image.sh        this run's disk: kernel .debs, mfr-dkms and mfrd .debs, tests
#   boot.sh         QEMU until the guest powers off (it reboots four times)
# The guest side is tests/e2e/ (guest-test.sh and its stages).  Prints one
# PASS/FAIL line per guest check, checks every boot's kernel log, and ends
# with "N passed, N failed".  Needs root (debootstrap, chroot, dpkg).
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
cd "$MFR_ROOT"
[ "$(id -u)" = 0 ] || die "make e2e needs root (debootstrap, chroot)"

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
# step NAME COMMAND...: run a build step, time it, stop the run if it fails.
step() {
	local name=$1 t=$SECONDS
	shift
	echo "e2e: $name" >&2
	if ! "$@"; then
		result FAIL "e2e/$name"
		finish
	fi
	timings+="$name $((SECONDS - t))s; "
}

out=$MFR_ROOT/build/e2e
share=$out/share
rm -rf "$out"
mkdir -p "$share"
step kernel-debs eval 'debs=$(scripts/e2e/kernel-debs.sh)'
step rootfs eval 'rootfs=$(scripts/e2e/rootfs.sh)'
step image scripts/e2e/image.sh "$rootfs" "$debs" "$out"

echo "e2e: booting the guest (serial console: $out/serial.log)" >&2
touch "$share/results"
tail -n +1 -F "$share/results" 2>/dev/null | sed -u 's/^/e2e guest: /' >&2 &
tailer=$!
t=$SECONDS
scripts/e2e/boot.sh "$out" "$share"
qemu_rc=$?
timings+="guest $((SECONDS - t))s; "
sleep 1
kill "$tailer" 2>/dev/null
wait "$tailer" 2>/dev/null

while IFS= read -r line; do
	case $line in
	"ok - "*) result PASS "e2e/${line#ok - }" ;;
	"not ok - "*) result FAIL "e2e/${line#not ok - }" ;;
	esac
done <"$share/results"

if [ -f "$share/done" ]; then
	result PASS "e2e/guest powered off after its last stage"
else
	result FAIL "e2e/guest powered off after its last stage (qemu exit $qemu_rc)" "$out/serial.log"
fi
# Every boot the guest started (it writes its number to "boot").
boots=$(cat "$share/boot" 2>/dev/null || echo 1)
for boot in $(seq 1 "$boots"); do
	dmesg=$share/dmesg-boot$boot.txt
	if [ ! -f "$dmesg" ]; then
		result FAIL "e2e/boot$boot/guest-kernel-log-clean (no log saved)"
	elif scripts/check-kernel-log.sh "$dmesg" >"$out/klog$boot.txt" 2>&1; then
		result PASS "e2e/boot$boot/guest-kernel-log-clean"
	else
		result FAIL "e2e/boot$boot/guest-kernel-log-clean ($dmesg)" "$out/klog$boot.txt"
	fi
done
# The console covers what no saved log has (a crash before the save).
if scripts/check-kernel-log.sh "$out/serial.log" >"$out/klog-serial.txt" 2>&1; then
	result PASS "e2e/serial-console-clean"
else
	result FAIL "e2e/serial-console-clean ($out/serial.log)" "$out/klog-serial.txt"
fi
[ -f "$share/timings" ] && timings+="stages: $(tr '\n' ' ' <"$share/timings")"
[ "$failed" = 0 ] && rm -f "$out/disk.img"
finish
