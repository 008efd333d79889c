# SPDX-License-Identifier: GPL-2.0-or-later
# Boot 4 started with a store of a newer schema (user_version 99, as a
# downgraded mfrd finds it).  mfrd did not start a fresh store in its
# place: it read the pfns of earlier boots from the file and offlined
# them at boot, keeps its records in memory, says so in the journal and
# the metrics, and leaves the file as it is (same bytes).  Once the
# operator puts the schema back (as an upgrade to the mfrd that wrote it
# would), mfrd's retry takes the file again.

snap=before-boot4
check "mfrd active at boot, not restarted" bash -c \
	"systemctl is-active -q mfrd && [ \"\$(systemctl show -p NRestarts --value mfrd)\" = 0 ]"
check "journal: a store incident at start (priority crit), 'the file is left as it is', every row read from it" \
	store_incident_logged "newer schema" "$snap"
check "boot offlining offlined every pfn of earlier boots, none failed" offlined_all "$STATE/$snap.pfns"
check "... the kernel has them poisoned (KPF_HWPOISON)" pfns_hwpoisoned "$STATE/$snap.pfns"
in_memory() { metric_is mfrd_store_in_memory 1 && metric_is mfrd_store_recovered 1; }
check "metrics: mfrd_store_in_memory 1, mfrd_store_recovered 1" wait_until 30 in_memory
check "metrics: mfr_poisoned_pfns_earlier_boots $(wc -l <"$STATE/$snap.pfns") (no silent fresh store)" \
	metric_is mfr_poisoned_pfns_earlier_boots "$(wc -l <"$STATE/$snap.pfns")"
check "the file is intact: the same bytes (sha256)" sha256sum -c "$STATE/$snap.sha256"
check "... still schema 99" bash -c \
	"[ \"\$(sqlite3 $DB 'PRAGMA user_version')\" = 99 ]"
check "... the rows of earlier boots as before the boot" store_rows_intact "$snap"
check "... nothing moved aside (no new $DB.broken-*)" nothing_moved_aside "$snap"

newer_fixed=$(monotonic_usec)
check "the operator puts schema 3 back (PRAGMA user_version = 3)" sql "PRAGMA user_version = 3"
in_use_again_newer() {
	journal_json MESSAGE_ID=$MSG_STORE_RECOVERED | python3 -c '
import json, sys
t = [int(e["__MONOTONIC_TIMESTAMP"]) for e in map(json.loads, sys.stdin)
     if "is in use again" in e.get("MESSAGE", "")]
print("in use again at", t, "us; schema put back at", sys.argv[1])
sys.exit(0 if t and t[-1] > int(sys.argv[1]) else 1)' "$newer_fixed"
}
# Retried 1 s after start, doubling up to 5 min: the next try may be
# minutes away.
check "mfrd's retry takes the file again (journal: in use again)" wait_until 330 in_use_again_newer
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
