# SPDX-License-Identifier: GPL-2.0-or-later
# After the reboot: mfrd (enabled, and wanted by the module loaded at boot)
# hard-offlined the pfns recorded in boot 1 before the workload unit,
# ordered after it, started; the store still has boot 1's records.

prev=$(cat "$STATE/recorded-boot-id")
recorded=$(wc -l <"$STATE/recorded-pfns")
# boot 1's dimm-swap stage moved this pfn's record to another DIMM: it is
# offlined all the same (only the operator forgets a page), and reported
swapped=$(cat "$STATE/swapped-pfn")
cp "$STATE/recorded-pfns" "$STATE/expected-offlined"
expected=$(wc -l <"$STATE/expected-offlined")

offlined_entry() {
	journalctl -b -o json MESSAGE_ID=$MSG_RECORDED_OFFLINED | tail -n 1
}
logged_offlining() { offlined_entry | tee /dev/stderr | grep -q .; }
offlined_before_workload() {
	local t_off t_wl
	t_off=$(offlined_entry | python3 -c 'import json,sys; print(json.load(sys.stdin)["__MONOTONIC_TIMESTAMP"])')
	t_wl=$(unit_prop guest-vm ExecMainStartTimestampMonotonic)
	echo "offlined at $t_off us, workload started at $t_wl us"
	[ -n "$t_off" ] && [ -n "$t_wl" ] && [ "$t_wl" != 0 ] && [ "$t_off" -lt "$t_wl" ]
}
hwpoison_flags() { pfns_hwpoisoned "$STATE/expected-offlined"; }
corrupted_kb() { awk '/^HardwareCorrupted:/ { print $2 }' /proc/meminfo; }
enough_corrupted() {
	echo "HardwareCorrupted: $(corrupted_kb) kB for $expected pfns"
	[ "$(corrupted_kb)" -ge $((expected * 4)) ]
}
store_kept_boot1() {
	[ "$(sql "SELECT count(*) FROM poisoned_pages WHERE boot_id = '$prev'")" = "$recorded" ]
}
workload_kept() {
	mfrctl -j memfd list | json "any(m['name'] == 'guest-ram-vm' and m['policy'] == 'keep' for m in d)"
}
metrics_earlier() {
	grep -E "^mfr_poisoned_pfns_earlier_boots $recorded\$" "$METRICS"
}

check "mfrd active at boot, no restart" bash -c \
	"systemctl is-active -q mfrd && [ \"\$(systemctl show -p NRestarts --value mfrd)\" = 0 ]"
check "the store still has boot 1's $recorded records" store_kept_boot1
check "journal: recorded-pfns-offlined this boot" wait_until 60 logged_offlining
check "the $expected recorded pfns on an unchanged DIMM have KPF_HWPOISON" hwpoison_flags
dimm_change_reported() {
	offlined_entry | python3 -c '
import json, sys
e = json.load(sys.stdin)
print(e.get("MESSAGE"))
sys.exit(0 if e.get("MFR_DIMM_CHANGED") == "1" and
         e.get("MFR_DIMM_CHANGED_PFNS") == hex(int(sys.argv[1])) and
         "mfrctl forget --dimm" in e.get("MESSAGE", "") else 1)' "$swapped"
}
check "the pfn whose DIMM changed ($swapped) is reported, with mfrctl forget --dimm" dimm_change_reported
check "metric mfr_offline_dimm_changed 1" wait_until 30 grep -qx 'mfr_offline_dimm_changed 1' "$METRICS"
check "/proc/meminfo HardwareCorrupted covers them" enough_corrupted
check "the workload unit (After=mfrd.service) started after the offlining" \
	wait_until 60 offlined_before_workload
check "the workload's guest-ram memfd is kept (rules were in before it)" wait_until 60 workload_kept
check "metrics: mfr_poisoned_pfns_earlier_boots $recorded" wait_until 30 metrics_earlier
