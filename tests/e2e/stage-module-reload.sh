# SPDX-License-Identifier: GPL-2.0-or-later
# rmmod and modprobe with no opted-in memfd alive: mfrd stays up, waits,
# and pushes the rules again; the module has forgotten the pages, the
# store has not (still one row per pfn, none added or lost).

rows_before=$(sql "SELECT count(*) FROM poisoned_pages WHERE boot_id = '$(boot_id)'")
restarts_before=$(unit_prop mfrd NRestarts)
waiting() { systemctl show -p StatusText --value mfrd | tee /dev/stderr | grep -qi waiting; }
rows_same() {
	[ "$(sql "SELECT count(*), count(DISTINCT pfn) FROM poisoned_pages WHERE boot_id = '$(boot_id)'")" = "$rows_before|$rows_before" ]
}
no_restart() { systemctl is-active -q mfrd && [ "$(unit_prop mfrd NRestarts)" = "$restarts_before" ]; }
rules_back() {
	mfrctl -j rules list | json "any(r['name_glob'] == 'guest-ram*' for r in d)"
}

check "rmmod mfr" rmmod mfr
check "mfrd: StatusText says waiting" wait_until 30 waiting
check "modprobe mfr" modprobe mfr
check "mfrd pushed the rules again" wait_until 60 rules_back
check "the module's dump is empty" bash -c "[ \"\$(mfrctl -j poison list)\" = '[]' ]"
sleep 3
check "store: the same $rows_before rows, one per pfn" rows_same
check "mfrd neither exited nor restarted" no_restart

# For the next boot: mfrd enabled and the module loaded at boot, both by
# the packages; the VMM stand-in enabled.
sql "SELECT pfn FROM poisoned_pages WHERE boot_id = '$(boot_id)' ORDER BY pfn" >"$STATE/recorded-pfns"
boot_id >"$STATE/recorded-boot-id"
check "mfrd enabled by its package; enable the workload unit" bash -c \
	"systemctl is-enabled -q mfrd && systemctl enable guest-vm"
