# SPDX-License-Identifier: GPL-2.0-or-later
# Boot 4 started with a store of a newer schema (user_version 99, as a
# downgraded mfrd finds it).  mfrd did not start a fresh store in its
# place: it read the pfns of earlier boots from the file and offlined
# them at boot, keeps its records in memory, says so in the journal and
# the metrics, and leaves the file as it is (same bytes).  Once the
# operator puts the schema back (as an upgrade to the mfrd that wrote it
# would), mfrd's retry takes the file again.

snap=before-boot4
check_store_left_at_boot "newer schema" "$snap"
check "... still schema 99" bash -c \
	"[ \"\$(sqlite3 $DB 'PRAGMA user_version')\" = 99 ]"
check "... the rows of earlier boots as before the boot" store_rows_intact "$snap"
check "... nothing moved aside (no new $DB.broken-*)" nothing_moved_aside "$snap"

newer_fixed=$(monotonic_usec)
check "the operator puts schema 3 back (PRAGMA user_version = 3)" sql "PRAGMA user_version = 3"
# Retried 1 s after start, doubling up to 5 min: the next try may be
# minutes away.
check "mfrd's retry takes the file again (journal: in use again)" wait_until 330 store_in_use_again_after last "$newer_fixed"
check "... metrics: mfrd_store_in_memory 0" wait_until 30 metric_is mfrd_store_in_memory 0
newer_incident() {
	local r
	r=$(sql "SELECT kind, error FROM store_incidents WHERE boot_id = '$(boot_id)'")
	echo "$r"
	[[ $r == "newer schema|"*99* ]]
}
check "... the incident is in the file (store_incidents: newer schema)" newer_incident
check "mfrctl store ack" bash -c "mfrctl store ack | grep -qx 'acknowledged 1 store incident'"
check "... mfrd_store_recovered 0" wait_until 30 metric_is mfrd_store_recovered 0
