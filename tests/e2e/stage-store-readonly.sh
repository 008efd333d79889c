# SPDX-License-Identifier: GPL-2.0-or-later
# Boot 5 started with /var/lib/mfrd read-only for mfrd (ReadOnlyPaths= in
# a drop-in).  mfrd read the pfns of earlier boots from the readable file
# and offlined them at boot, keeps its records in memory, says so in the
# journal and the metrics, and the file is left as it is (same bytes, no
# file added).  Without the drop-in, a restarted mfrd uses the file again.

snap=before-boot5
ro_dropin=/etc/systemd/system/mfrd.service.d/e2e-readonly.conf
ro_for_mfrd() {
	local out rc=0
	out=$(nsenter -t "$(unit_prop mfrd MainPID)" -m touch /var/lib/mfrd/e2e-probe 2>&1) || rc=$?
	echo "touch in mfrd's mount namespace: exit $rc: $out"
	[ "$rc" != 0 ] && [[ $out == *"Read-only file system"* ]]
}
check "premise: /var/lib/mfrd is read-only in mfrd's mount namespace" ro_for_mfrd
check_store_left_at_boot unavailable "$snap"
check "... no file added or moved aside in /var/lib/mfrd" bash -c \
	"diff $STATE/$snap.files <(ls -A /var/lib/mfrd)"

rm -f "$ro_dropin"
check "without the drop-in: daemon-reload, restart mfrd" bash -c \
	"systemctl daemon-reload && systemctl restart mfrd"
ro_back() {
	metric_is mfrd_store_in_memory 0 &&
		metric_is mfr_poisoned_pfns_earlier_boots "$(wc -l <"$STATE/$snap.pfns")"
}
check "... mfrd uses the file: mfrd_store_in_memory 0, the earlier pfns counted from it" \
	wait_until 30 ro_back
check "... the rows of earlier boots as before the boot" store_rows_intact "$snap"
