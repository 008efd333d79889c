# SPDX-License-Identifier: GPL-2.0-or-later
# A VMM-like workload with a guest-ram* memfd survives an injected error in
# one 4 KiB page; mfrctl, the store, the journal and the metrics all show
# the page with its owner and offset; after the release it is offlined.

sync_dir=$(mktemp -d)
page=77
off=$((page * 4096))
"$BIN/guest_ram" --threads 2 --poison $page --ready "$sync_dir/ready" \
	--wait "$sync_dir/stop" guest-ram-wl 4 10 >"$SHARE/logs/guest_ram.out" 2>&1 &
wl=$!
check "workload guest_ram ran through the error" wait_file "$sync_dir/ready" 300

ino=$(mfrctl -j memfd list | python3 -c '
import json, sys
print(next((m["inode"] for m in json.load(sys.stdin) if m["name"] == "guest-ram-wl"), 0))')
pfn=$(mfrctl -j poison list | python3 -c "
import json, sys
print(next((p['pfn'] for p in json.load(sys.stdin) if p.get('inode') == $ino and p['offset'] == $off), 0))")

wl_memfd_listed() {
	mfrctl -j memfd list | json "any(m['name'] == 'guest-ram-wl' and m['pid'] == $wl and
		m['policy'] == 'keep' and m.get('rule_id') for m in d)"
}
wl_page_listed() {
	[ "$pfn" != 0 ] && mfrctl -j poison list |
		json "any(p['pfn'] == $pfn and p['state'] == 'kept' for p in d)"
}
wl_page_stored() {
	[ "$(sql "SELECT count(*) FROM poisoned_pages WHERE boot_id = '$(boot_id)'
		AND pfn = $pfn AND inode = $ino AND \"offset\" = $off
		AND memfd_name = 'guest-ram-wl' AND pid = $wl AND comm <> ''
		AND state = 'kept'")" = 1 ]
}
wl_page_journal() {
	journalctl -b -o json MESSAGE_ID=$MSG_PAGE_POISONED MFR_PFN="$(printf '0x%x' "$pfn")" |
		python3 -c "
import json, sys
es = [json.loads(l) for l in sys.stdin]
print(es)
sys.exit(0 if any(int(e['MFR_INODE'], 0) == $ino and int(e['MFR_OFFSET'], 0) == $off and
                  e['MFR_MEMFD'] == 'guest-ram-wl' and int(e['MFR_PID']) == $wl and
                  e.get('MFR_COMM') for e in es) else 1)"
}
wl_metrics() {
	cat "$METRICS" &&
		grep -qE '^mfr_poisoned_pages\{state="kept"\} 1$' "$METRICS" &&
		grep -qE '^mfr_raw_pages_kept 1$' "$METRICS"
}
wl_offlined() {
	mfrctl -j poison list | json "any(p['pfn'] == $pfn and p['state'] == 'offlined' for p in d)" &&
		[ "$(sql "SELECT state FROM poisoned_pages WHERE boot_id = '$(boot_id)' AND pfn = $pfn")" = offlined ]
}

check "mfrctl -j memfd list: guest-ram-wl kept by the rule, owner pid $wl" wl_memfd_listed
check "mfrctl -j poison list: pfn $pfn at offset $off of inode $ino, kept" wl_page_listed
check "store: pfn $pfn with inode, offset, memfd name, pid, comm" wait_until 30 wl_page_stored
check "journal: page-poisoned by MESSAGE_ID with pfn, inode, offset, memfd, pid, comm" \
	wait_until 30 wl_page_journal
check "metrics textfile: one kept page" wait_until 30 wl_metrics

touch "$sync_dir/stop"
wait $wl
rc=$?
diag <"$SHARE/logs/guest_ram.out"
check "the workload exits 0: every other word intact, the error signalled" [ "$rc" = 0 ]
check "after the release: offlined in the module and in the store" wait_until 60 wl_offlined
rm -rf "$sync_dir"
