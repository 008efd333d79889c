#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest side of "make e2e", run by mfr-e2e.service at the end of every
# boot.  The stages of a boot run in order; a state file on the guest's
# disk says which boot this is.  Every boot but the last ends with
# "systemctl reboot" (QEMU keeps running), the last with "systemctl
# poweroff".  The last stages of a boot set up how the next one starts:
#   boot 1: install, udev, workload, bad-config, reload, storm (a CPU hog
#           beside it), module-reload, dimm-swap
#   boot 2: after-reboot, missing-module, not-ready, history,
#           store-corrupt, earlier-pfns, then for boot 3: the store
#           locked by a sqlite3 shell, a rule whose cgroup is missing
#   boot 3: store-locked, cgroup-late, reload-fixed, then for boot 4: a
#           store of a newer schema
#   boot 4: store-newer, then for boot 5: /var/lib/mfrd read-only
#   boot 5: store-readonly, many-records (20 000 at start), packages
#           (remove, reinstall, upgrade), then for boot 6: a typo in a
#           rule file, a machine.slice rule and a libvirt-style guest at
#           boot, /var/lib/mfrd on a small file system of its own
#   boot 6: typo-at-boot, machine-scope, full-first-error (that file
#           system full at the first error), then for boot 7: left full
#   boot 7: after-full-disk
# On Debian 13 (trixie) images, boot 2 also runs vm-guest and boot 3
# vm-guest-offlined (below).
# Results go to /mnt/e2e/results (9p, read by the host) as "ok - NAME" /
# "not ok - NAME" lines and to the console; each boot's kernel log goes to
# /mnt/e2e/dmesg-bootN.txt for the host to check.
set -u
. /opt/mfr-e2e/lib.sh

mkdir -p "$SHARE" "$STATE"
mountpoint -q "$SHARE" ||
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 mfr-e2e "$SHARE" || {
	echo "E2E: cannot mount the results share"
	systemctl poweroff
	exit 1
}
mkdir -p "$SHARE/logs"

boot=$(($(cat "$STATE/boot" 2>/dev/null || echo 0) + 1))
echo "$boot" >"$STATE/boot"
boot_id >"$STATE/boot-id-$boot"
echo "$boot" >"$SHARE/boot"
BOOT_TAG=boot$boot
echo "E2E: boot $boot ($(uname -r), boot id $(boot_id))"

last=7
aborted=
case $boot in
1) stages="install udev workload bad-config reload storm module-reload dimm-swap" ;;
2) stages="after-reboot missing-module not-ready history store-corrupt earlier-pfns
	prep-locked" ;;
3) stages="store-locked cgroup-late reload-fixed prep-newer" ;;
4) stages="store-newer prep-readonly" ;;
5) stages="store-readonly many-records packages prep-boot6" ;;
6) stages="typo-at-boot machine-scope full-first-error prep-boot7" ;;
7) stages="after-full-disk" ;;
*)
	result "not ok" "unexpected boot (crash or unexpected reboot)"
	aborted=1
	;;
esac
# Debian 13 hosts also run a real KVM guest under trixie's QEMU 10 at the
# end of boot 2 (before the store is prepared for boot 3), and boot 3
# checks its pfn is offline from boot on.
if [ "$(. /etc/os-release && echo "$VERSION_CODENAME")" = trixie ]; then
	case $boot in
	2) stages=${stages/prep-locked/vm-guest prep-locked} ;;
	3) stages=${stages/store-locked/store-locked vm-guest-offlined} ;;
	esac
fi
# The boot before must have got to its end; a crash reboots the guest too.
if [ -z "$aborted" ] && [ "$boot" -gt 1 ] && [ ! -e "$STATE/boot$((boot - 1))-done" ]; then
	result "not ok" "boot $((boot - 1)) did not finish (crash or unexpected reboot)"
	aborted=1
fi
[ -z "$aborted" ] || stages=

for stage in $stages; do
	echo "E2E: # $BOOT_TAG: $stage"
	start=$SECONDS
	. "$E2E/stage-$stage.sh"
	echo "E2E: # $BOOT_TAG: $stage took $((SECONDS - start)) s"
	echo "$BOOT_TAG/$stage $((SECONDS - start))" >>"$SHARE/timings"
done

journalctl -b -o short-monotonic --no-pager >"$SHARE/journal-boot$boot.txt" 2>&1
dmesg >"$SHARE/dmesg-boot$boot.txt"
sync
if [ -z "$aborted" ] && [ "$boot" -lt "$last" ]; then
	touch "$STATE/boot$boot-done"
	sync
	systemctl reboot
else
	[ -n "$aborted" ] || echo "$boot" >"$SHARE/done"
	sync
	systemctl poweroff
fi
