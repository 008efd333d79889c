#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest side of "make e2e", run by mfr-e2e.service at the end of every
# boot.  The stages of a boot run in order; a state file on the guest's
# disk says which boot this is:
#   boot 1: install, udev, workload, bad-config, reload, storm,
#           module-reload, dimm-swap, then "systemctl reboot" (QEMU keeps
#           running)
#   boot 2: after-reboot, missing-module, not-ready, history,
#           store-corrupt, then "systemctl poweroff"
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
BOOT_TAG=boot$boot
echo "E2E: boot $boot ($(uname -r), boot id $(boot_id))"

case $boot in
1)
	stages="install udev workload bad-config reload storm module-reload dimm-swap"
	next=reboot
	;;
2)
	stages="after-reboot missing-module not-ready history store-corrupt"
	next=poweroff
	# Boot 1 must have got to its end; a crash reboots the guest too.
	if [ ! -e "$STATE/boot1-done" ]; then
		result "not ok" "boot 1 did not finish (crash or unexpected reboot)"
		stages=
	fi
	;;
*)
	result "not ok" "unexpected boot (crash or unexpected reboot)"
	stages=
	next=poweroff
	;;
esac

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
if [ "$next" = reboot ]; then
	touch "$STATE/boot$boot-done"
	sync
	systemctl reboot
else
	echo "$boot" >"$SHARE/done"
	sync
	systemctl poweroff
fi
