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
MSG_STORE_RECOVERED=874cfb8201154fb4971441c2bc3f5038
MSG_READY_UNPROTECTED=6c31473149c2464ca9447f9d032d5a6a

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

# Waits up to 10 s for a lock mfrd holds for a moment (a transaction).
sql() { sqlite3 -batch -noheader -cmd '.timeout 10000' "$DB" "$@"; }
boot_id() { cat /proc/sys/kernel/random/boot_id; }
unit_prop() { systemctl show -p "$2" --value "$1"; }
# When mfrd's own code started (CLOCK_MONOTONIC, us).  systemd forks,
# sets the unit's sandbox up and only then executes mfrd: tens of seconds
# under TCG on a loaded host (63 s in bookworm's boot 6 once).  systemd
# 256 and later say when: ExecMainHandoffTimestamp.  Debian 12's 252 does
# not (ExecMainStartTimestamp is the fork): there, the first record mfrd
# itself wrote to the journal (at the top of its start, the rules).
mfrd_exec_usec() {
	local t pid
	t=$(unit_prop mfrd ExecMainHandoffTimestampMonotonic)
	if [ -z "$t" ] || [ "$t" = 0 ]; then
		pid=$(unit_prop mfrd MainPID)
		t=$(journalctl -b _PID="$pid" _COMM=mfrd -o json --no-pager 2>/dev/null |
			python3 -c 'import json, sys
l = sys.stdin.readline()
print(json.loads(l)["__MONOTONIC_TIMESTAMP"] if l else "")')
	fi
	[ -n "$t" ] || t=$(unit_prop mfrd ExecMainStartTimestampMonotonic)
	echo "$t"
}

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

# metric NAME: its value in mfrd's textfile (empty if absent).
metric() { sed -n "s/^$1 //p" "$METRICS"; }
metric_is() { # NAME VALUE
	local v
	v=$(metric "$1")
	echo "$1 $v (want $2)"
	[ "$v" = "$2" ]
}

# CLOCK_MONOTONIC in microseconds, as systemd's *TimestampMonotonic and
# the journal's __MONOTONIC_TIMESTAMP.
monotonic_usec() { python3 -c 'import time; print(time.monotonic_ns() // 1000)'; }

# journal_json ARGS...: this boot's journal entries matching ARGS, one
# JSON object per line.  jfield FIELD: that field of the entry on stdin.
journal_json() { journalctl -b -o json --no-pager "$@"; }
jfield() {
	python3 -c '
import json, sys
line = sys.stdin.readline()
print(json.loads(line).get(sys.argv[1], "") if line.strip() else "")' "$1"
}

# pfns_hwpoisoned FILE: every pfn in FILE (decimal, one per line) has
# KPF_HWPOISON in /proc/kpageflags; fails on an empty FILE.
pfns_hwpoisoned() {
	python3 - "$1" <<'PY'
import struct, sys
pfns = [int(l) for l in open(sys.argv[1]) if l.strip()]
bad = []
with open("/proc/kpageflags", "rb") as f:
    for pfn in pfns:
        f.seek(pfn * 8)
        flags, = struct.unpack("<Q", f.read(8))
        if not flags & (1 << 19):
            bad.append(hex(pfn))
print(len(pfns), "pfns,", len(bad), "without KPF_HWPOISON:", bad[:10])
sys.exit(1 if bad or not pfns else 0)
PY
}

# The store before a boot (or a restart) whose start is tested, in
# $STATE/NAME.*: its distinct pfns (all of earlier boots by then), its
# rows, the files moved aside so far and the files of the directory.
# The store read from a copy of its files in /run: on a full disk SQLite
# has no room beside the file for the WAL index a reader needs, and an
# "immutable" read misses the rows still in the WAL.  The WAL copied
# first: a checkpoint between the two copies leaves the database with
# the pages the copied WAL holds anyway.
store_read() { # SQL
	local d rc=0
	d=$(mktemp -d /run/e2e-store.XXXXXX) || return
	{ [ ! -e "$DB-wal" ] || cp "$DB-wal" "$d/s.db-wal"; } &&
		cp "$DB" "$d/s.db" && sqlite3 -batch -noheader "$d/s.db" "$1" || rc=$?
	rm -rf "$d"
	return "$rc"
}
# A snapshot of the store for a later boot's checks; fails if the store
# could not be read (a check of its own: an empty one would hide that).
store_snapshot() { # NAME
	store_read "SELECT DISTINCT pfn FROM poisoned_pages ORDER BY pfn" >"$STATE/$1.pfns" &&
		store_read "SELECT * FROM poisoned_pages ORDER BY boot_id, pfn" >"$STATE/$1.rows" &&
		broken_files >"$STATE/$1.broken" &&
		echo "$(wc -l <"$STATE/$1.rows") rows, $(wc -l <"$STATE/$1.pfns") pfns"
}
broken_files() { find "${DB%/*}" -maxdepth 1 -name "${DB##*/}.broken-*" | sort; }
# The rows of earlier boots are those of the snapshot, unchanged.
store_rows_intact() { # NAME
	diff "$STATE/$1.rows" <(sql "SELECT * FROM poisoned_pages
		WHERE boot_id != '$(boot_id)' ORDER BY boot_id, pfn") &&
		echo "$(wc -l <"$STATE/$1.rows") rows as before"
}
nothing_moved_aside() { # NAME
	diff "$STATE/$1.broken" <(broken_files) && ls -la "${DB%/*}"
}

# The journal entry of mfrd's store incident at its start, this boot.
store_incident_entry() { # FAULT
	journal_json MESSAGE_ID=$MSG_STORE_RECOVERED MFR_STORE_FAULT="$1" | head -n 1
}
# It says the file is left as it is, and how many page records mfrd read
# from it for boot offlining (all the rows of the snapshot NAME).
store_incident_logged() { # FAULT NAME
	local e
	e=$(store_incident_entry "$1")
	echo "$e" | jfield MESSAGE
	[ -n "$e" ] &&
		echo "$e" | jfield MESSAGE | grep -q 'the file is left as it is' &&
		[ "$(echo "$e" | jfield MFR_STORE_COPIED)" = "$(wc -l <"$STATE/$2.rows")" ] &&
		[ "$(echo "$e" | jfield PRIORITY)" -le 3 ]
}

# The first boot-offlining entry of this boot (or the first after a
# monotonic time): it handled every pfn of FILE, none failed.
offlining_entry() { # [AFTER_USEC]
	journal_json MESSAGE_ID=$MSG_RECORDED_OFFLINED | python3 -c '
import json, sys
after = int(sys.argv[1])
for line in sys.stdin:
    if int(json.loads(line)["__MONOTONIC_TIMESTAMP"]) > after:
        print(line.strip())
        break' "${1:-0}"
}
offlined_all() { # PFN_FILE [AFTER_USEC]
	offlining_entry "${2:-0}" | python3 -c '
import json, re, sys
line = sys.stdin.readline()
if not line.strip():
    sys.exit("no boot-offlining entry")
e = json.loads(line)
print(e["MESSAGE"])
want = sum(1 for l in open(sys.argv[1]) if l.strip())
n = int(re.search(r"earlier boots: (\d+);", e["MESSAGE"]).group(1))
done = int(e["MFR_OFFLINED"]) + int(e["MFR_ALREADY"])
failed = int(e["MFR_FAILED"])
print(f"{n} pfns recorded (want {want}), {done} offline, {failed} failed")
sys.exit(0 if n == want and done == want and not failed and want else 1)' "$1"
}

# store_in_use_again_after first|last USEC: the journal's "is in use again"
# entries (MESSAGE_ID store-recovered): the first (or the last) is after
# monotonic USEC.
store_in_use_again_after() {
	journal_json MESSAGE_ID=$MSG_STORE_RECOVERED | python3 -c '
import json, sys
t = [int(e["__MONOTONIC_TIMESTAMP"]) for e in map(json.loads, sys.stdin)
     if "is in use again" in e.get("MESSAGE", "")]
print("in use again at", t, "us; the event at", sys.argv[2])
x = t[0 if sys.argv[1] == "first" else -1] if t else None
sys.exit(0 if x is not None and x > int(sys.argv[2]) else 1)' "$1" "$2"
}

store_in_memory() { metric_is mfrd_store_in_memory 1 && metric_is mfrd_store_recovered 1; }

# check_store_left_at_boot KIND SNAP: what a store incident of KIND at boot
# (newer schema, unavailable) must leave: mfrd up, loud, the pfns of earlier
# boots (snapshot SNAP) offlined from the file, the file's bytes unchanged.
check_store_left_at_boot() {
	local kind=$1 snap=$2 n
	n=$(wc -l <"$STATE/$snap.pfns")
	check "mfrd active at boot, not restarted" bash -c \
		"systemctl is-active -q mfrd && [ \"\$(systemctl show -p NRestarts --value mfrd)\" = 0 ]"
	check "journal: a store incident at start (priority crit), 'the file is left as it is', every row read from it" \
		store_incident_logged "$kind" "$snap"
	check "boot offlining offlined every pfn of earlier boots, none failed" offlined_all "$STATE/$snap.pfns"
	check "... the kernel has them poisoned (KPF_HWPOISON)" pfns_hwpoisoned "$STATE/$snap.pfns"
	check "metrics: mfrd_store_in_memory 1, mfrd_store_recovered 1" wait_until 30 store_in_memory
	check "metrics: mfr_poisoned_pfns_earlier_boots $n (no silent fresh store)" \
		metric_is mfr_poisoned_pfns_earlier_boots "$n"
	check "the file is intact: the same bytes (sha256)" sha256sum -c "$STATE/$snap.sha256"
}

# ready_prompt: mfrd became active (READY) within 25 s of its start this
# boot, before its ready_timeout (30 s) could have run out.
ready_prompt() {
	local s a
	s=$(mfrd_exec_usec)
	a=$(unit_prop mfrd ActiveEnterTimestampMonotonic)
	echo "mfrd started at $s us, active (READY) at $a us: $(((a - s) / 1000)) ms"
	[ "$a" -gt 0 ] && [ $((a - s)) -lt 25000000 ]
}
