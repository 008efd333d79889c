# SPDX-License-Identifier: GPL-2.0-or-later
# Boot 3 started with mfrd's store locked: e2e-store-lock.service, an
# operator's sqlite3 shell, took BEGIN EXCLUSIVE before mfrd started and
# held it 30 s and through mfrd's boot offlining (store-lock.sh).  mfrd did not throw the file away: it read the pfns of
# earlier boots from it (read-only) and offlined them at boot while the
# lock was held, kept its records in memory meanwhile, said so in the
# journal and the metrics, and went back to the file once the lock was
# gone.  The file has the same rows; nothing was moved aside.

snap=before-boot3
lockdir=/run/e2e-store-lock
mono() { cat "$lockdir/$1" 2>/dev/null || echo 0; }
check "the sqlite3 shell let go of the lock (COMMIT after 30 s and mfrd's boot offlining)" \
	wait_until 360 test -s "$lockdir/released"
# Boot 3 only: mfrd's restarts in the stages after this one take no lock.
check "disable e2e-store-lock.service" systemctl disable e2e-store-lock.service
mfrd_start=$(mfrd_exec_usec)
locked_while_mfrd_started() {
	echo "locked at $(mono locked) us, mfrd started at $mfrd_start us, COMMIT at $(mono committing) us"
	[ "$(mono locked)" -gt 0 ] && [ "$(mono locked)" -lt "$mfrd_start" ] &&
		[ "$mfrd_start" -lt "$(mono committing)" ] &&
		[ $(($(mono committing) - $(mono locked))) -ge 30000000 ] &&
		[ "$(unit_prop mfrd NRestarts)" = 0 ]
}
check "premise: BEGIN EXCLUSIVE held from before mfrd's start at boot, for 30 s; mfrd not restarted" \
	locked_while_mfrd_started
check "journal: a store incident at start (priority crit), 'the file is left as it is', every row read from it" \
	store_incident_logged unavailable "$snap"
check "... the error is the lock" bash -c \
	"journalctl -b MESSAGE_ID=$MSG_STORE_RECOVERED MFR_STORE_FAULT=unavailable -o json |
	 head -n 1 | python3 -c 'import json,sys; e=json.load(sys.stdin); print(e[\"MFR_STORE_ERROR\"]); sys.exit(\"locked\" not in e[\"MFR_STORE_ERROR\"])'"
offlined_while_locked() {
	local t
	t=$(offlining_entry | jfield __MONOTONIC_TIMESTAMP)
	echo "boot offlining logged at $t us, COMMIT at $(mono committing) us"
	[ -n "$t" ] && [ "$t" -lt "$(mono committing)" ]
}
check "boot offlining offlined every pfn of earlier boots, none failed" offlined_all "$STATE/$snap.pfns"
check "... while the lock was held (read from the locked file)" offlined_while_locked
check "... and the kernel has them poisoned (KPF_HWPOISON)" pfns_hwpoisoned "$STATE/$snap.pfns"
check "mfrd went back to the file once the lock was gone (journal: in use again)" wait_until 120 store_in_use_again_after first "$(mono committing)"
check "... metrics: mfrd_store_in_memory 0" wait_until 30 metric_is mfrd_store_in_memory 0
incident_in_file() {
	local r
	r=$(sql "SELECT kind, error FROM store_incidents WHERE boot_id = '$(boot_id)'")
	echo "$r"
	[[ $r == unavailable\|*locked* ]]
}
check "... and wrote the incident into it (store_incidents)" incident_in_file
check "metrics: mfrd_store_recovered 1 until acknowledged" metric_is mfrd_store_recovered 1
check "metrics: mfr_poisoned_pfns_earlier_boots $(wc -l <"$STATE/$snap.pfns")" \
	metric_is mfr_poisoned_pfns_earlier_boots "$(wc -l <"$STATE/$snap.pfns")"
check "the file is intact: the rows of earlier boots as before the boot" store_rows_intact "$snap"
check "... schema 3, quick_check ok" bash -c \
	"[ \"\$(sqlite3 $DB 'PRAGMA user_version')\" = 3 ] && [ \"\$(sqlite3 $DB 'PRAGMA quick_check')\" = ok ]"
check "... nothing moved aside (no new $DB.broken-*)" nothing_moved_aside "$snap"
check "mfrctl store ack" bash -c "mfrctl store ack | grep -qx 'acknowledged 1 store incident'"
check "... mfrd_store_recovered 0" wait_until 30 metric_is mfrd_store_recovered 0
