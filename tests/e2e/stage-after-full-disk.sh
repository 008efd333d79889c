# SPDX-License-Identifier: GPL-2.0-or-later
# Boot 7, after the full disk and the typo of boot 6: the disk still
# full, the typo still there.  The pfns of earlier boots, boot 6's
# included, are offlined before READY, READY is prompt, and boot 6's
# records are intact in the store file; once there is room again mfrd
# uses the file, and fixing the typo clears the last warning.

b6=$(cat "$STATE/boot6-id")
# Full when mfrd started: still full, or mfrd gave the disk its reserve
# (1 MiB) as soon as the store failed for room this boot, as it is made to.
full_at_start() {
	[ "$(df --output=avail -B1 /var/lib/mfrd | tail -1)" -lt 65536 ] ||
		journalctl -b -u mfrd -o cat | grep -E 'is FULL .*released its reserve|did not open .*released its reserve'
}
typo_left() { grep -q '^acton' /etc/mfrd/rules.d/80-typo.conf; }
check "premise: /var/lib/mfrd full at mfrd's start (still, or its reserve released this boot), the typo still in rules.d" \
	eval "full_at_start && typo_left"
check "mfrd active, never restarted" bash -c \
	"systemctl is-active -q mfrd && [ \"\$(systemctl show -p NRestarts --value mfrd)\" = 0 ]"
check "boot offlining offlined every pfn of earlier boots, boot 6's too, none failed" \
	offlined_all "$STATE/before-boot7.pfns"
check "... the kernel has them poisoned (KPF_HWPOISON)" pfns_hwpoisoned "$STATE/before-boot7.pfns"
check "READY promptly" ready_prompt
# The file read from a copy in /run (lib.sh: store_read): the disk
# leaves SQLite no room for a reader's WAL index beside it.
rows_of() { store_read "SELECT * FROM poisoned_pages WHERE boot_id = '$1' ORDER BY pfn"; }
b6_intact() {
	grep -q "^$b6|" "$STATE/before-boot7.rows" &&
		diff <(grep "^$b6|" "$STATE/before-boot7.rows") <(rows_of "$b6") &&
		echo "$(grep -c "^$b6|" "$STATE/before-boot7.rows") rows of boot 6 as before the reboot"
}
check "boot 6's records are intact in the store file" b6_intact
rm -f /var/lib/mfrd/e2e-filler
check "room again: mfrd uses the store file (mfrd_store_in_memory 0)" \
	wait_until 90 metric_is mfrd_store_in_memory 0
check "... boot 6's records still there" b6_intact
rm -f /etc/mfrd/rules.d/80-typo.conf
check "the typo removed: systemctl reload mfrd" systemctl reload mfrd
check "... mfrd_rules_file_errors 0, STATUS without the errors" wait_until 30 bash -c \
	"grep -qx 'mfrd_rules_file_errors 0' '$METRICS' && ! systemctl show -p StatusText --value mfrd | grep -q 'rules.d has'"
