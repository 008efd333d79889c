# SPDX-License-Identifier: GPL-2.0-or-later
# mfrctl history, summary and forget as root while mfrd runs: both boots'
# records, grouped by DIMM, owner and boot; a forgotten pfn is gone from
# the store and mfrd goes on without a store error.

prev=$(cat "$STATE/recorded-boot-id")
check "mfrd is running" systemctl is-active -q mfrd
check "mfrctl history lists boot 1's records with their physical address" bash -c \
	"mfrctl -j history | python3 -c '
import json, sys
d = json.load(sys.stdin)
b1 = [r for r in d if r[\"boot\"] == \"$prev\"]
sys.exit(0 if b1 and all(r[\"phys\"] == r[\"pfn\"] * 4096 for r in b1) else 1)'"
check "mfrctl summary: by DIMM, by owner, by boot" bash -c \
	"mfrctl -j summary | python3 -c '
import json, sys
d = json.load(sys.stdin)
boots = {r[\"boot\"]: r[\"pages\"] for r in d[\"by_boot\"]}
sys.exit(0 if boots.get(\"$prev\", 0) >= 1 and d[\"by_dimm\"] and d[\"by_owner\"] else 1)'"
check "mfrctl summary for people" bash -c "mfrctl summary | grep -q '^Poisoned pages by DIMM:'"
pfn=$(tail -n 1 "$STATE/recorded-pfns")
errors_before=$(sed -n 's/^mfrd_store_errors_total //p' "$METRICS")
# forget takes pfns in hex, as listings print them, and --yes without a
# terminal.
hexpfn=$(printf '0x%x' "$pfn")
still_in_store() { [ "$(sql "SELECT count(*) FROM poisoned_pages WHERE pfn = $pfn")" != 0 ]; }
check "mfrctl forget --dry-run $hexpfn" bash -c "mfrctl forget --dry-run $hexpfn | grep -q '^would forget [1-9]'"
check "... deletes nothing" still_in_store
check "mfrctl forget --yes $hexpfn while mfrd runs" bash -c "mfrctl forget --yes $hexpfn | grep -q '^forgot [1-9]'"
check "... logged with its MESSAGE_ID" bash -c \
	"journalctl -b MESSAGE_ID=49d41c6281304526b50860bd66dbbaa2 -o cat | grep -q 'of pfn $hexpfn deleted'"
gone_from_store() { [ "$(sql "SELECT count(*) FROM poisoned_pages WHERE pfn = $pfn")" = 0 ]; }
check "... gone from the store" gone_from_store
sleep 6
check "... mfrd still running, no new store error" bash -c \
	"systemctl is-active -q mfrd && grep -qx 'mfrd_store_errors_total $errors_before' '$METRICS'"
check "mfrctl forget of it again: exit 1" bash -c "mfrctl forget --yes $hexpfn; [ \$? = 1 ]"
