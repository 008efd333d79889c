# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the guest side of the end-to-end test (guest-test.sh and the
# stage-*.sh files): paths, results, checks and queries.

E2E=/opt/mfr-e2e
BIN=$E2E/bin
SHARE=/mnt/e2e
STATE=/var/lib/mfr-e2e
DB=/var/lib/mfrd/mfrd.db
METRICS=/var/lib/prometheus/node-exporter/mfr.prom
KVER_MFR=$(uname -r)

MSG_PAGE_POISONED=eb5269e54a5a4debadd6ea2bba88f801
MSG_RECORDED_OFFLINED=d9463ef76f3d458c937ec83dd6fb5712
MSG_CONFIG_REJECTED=cda346a082d94325996172d99f99455d
MSG_MODULE_STATE=9500ecc826c24b2eb0a4233b304989a5

# result ok|"not ok" NAME: one line in the results file and on the console.
result() {
	echo "$1 - $BOOT_TAG/$2" >>"$SHARE/results"
	echo "E2E: $1 - $BOOT_TAG/$2"
}
diag() {
	sed 's/^/E2E: #   /'
}

# check NAME COMMAND...: run it, keep its output in the share, show the
# tail of the output on failure.
check() {
	local name=$1 log
	shift
	log=$SHARE/logs/$BOOT_TAG-$(echo "$name" | tr -c 'A-Za-z0-9.-' _).log
	if "$@" >"$log" 2>&1; then
		result ok "$name"
	else
		result "not ok" "$name"
		tail -n 20 "$log" | diag
	fi
}

# wait_until SECONDS COMMAND...: poll every half second.
wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.5
	done
}
wait_file() { wait_until "${2:-120}" test -e "$1"; }

# json EXPR: evaluate a Python expression on the JSON document on stdin
# ("d"), succeed if true; prints the document when it is not.
json() {
	python3 -c '
import json, sys
d = json.load(sys.stdin)
ok = eval(sys.argv[1])
if not ok:
    print(json.dumps(d)[:2000])
sys.exit(0 if ok else 1)' "$1"
}

sql() { sqlite3 -batch -noheader "$DB" "$@"; }
boot_id() { cat /proc/sys/kernel/random/boot_id; }
unit_prop() { systemctl show -p "$2" --value "$1"; }

# The module's records as "pfn inode offset state" lines, sorted.
module_poison() {
	mfrctl -j poison list | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    print(p["pfn"], p.get("inode"), p.get("offset"), p["state"])' | sort -n
}
# The store's records of this boot, the same way.
store_poison() {
	sql "SELECT pfn, inode, \"offset\", state FROM poisoned_pages
	     WHERE boot_id = '$(boot_id)' ORDER BY pfn" | tr '|' ' '
}
store_matches_module() {
	diff <(module_poison) <(store_poison)
}
