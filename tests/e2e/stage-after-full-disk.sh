# SPDX-License-Identifier: GPL-2.0-or-later
# Boot 7, after the full disk and the typo of boot 6: the disk still
# full, the typo still there.  The pfns of earlier boots, boot 6's
# included, are offlined before READY, READY is prompt, and boot 6's
# records are intact in the store file; once there is room again mfrd
# uses the file, and fixing the typo clears the last warning.

b6=$(cat "$STATE/boot6-id")
check "premise: /var/lib/mfrd still full, the typo still in rules.d" bash -c \
	"[ \$(df --output=avail -B1 /var/lib/mfrd | tail -1) -lt 65536 ] && grep -q '^acton' /etc/mfrd/rules.d/80-typo.conf"
check "mfrd active, never restarted" bash -c \
	"systemctl is-active -q mfrd && [ \"\$(systemctl show -p NRestarts --value mfrd)\" = 0 ]"
check "boot offlining offlined every pfn of earlier boots, boot 6's too, none failed" \
	offlined_all "$STATE/before-boot7.pfns"
check "... the kernel has them poisoned (KPF_HWPOISON)" pfns_hwpoisoned "$STATE/before-boot7.pfns"
check "READY promptly" ready_prompt
# The file read as it is (a full disk leaves SQLite no room for its
# shared-memory file): immutable.
rows_of() {
	python3 -c 'import sqlite3, sys
c = sqlite3.connect("file:" + sys.argv[1] + "?immutable=1", uri=True)
for r in c.execute("SELECT * FROM poisoned_pages WHERE boot_id = ? ORDER BY pfn", (sys.argv[2],)):
    print("|".join("" if v is None else str(v) for v in r))' "$DB" "$1"
}
b6_intact() {
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
