# SPDX-License-Identifier: GPL-2.0-or-later
# A corrupted mfrd.db before mfrd starts: the rules are still pushed, the
# damaged file is moved aside (kept for inspection) and a fresh store
# started, and the journal and the metrics say so.

check "stop mfrd, clear the module's rules" bash -c \
	"systemctl stop mfrd && for id in \$(mfrctl -j rules list | python3 -c 'import json,sys; print(*[r[\"id\"] for r in json.load(sys.stdin)])'); do mfrctl rules del \$id; done"
check "corrupt /var/lib/mfrd/mfrd.db" bash -c \
	"rm -f $DB-wal $DB-shm && head -c 8192 /dev/urandom | dd of=$DB bs=1 seek=100 conv=notrunc status=none"
since=$(date '+%Y-%m-%d %H:%M:%S')
check "systemctl start mfrd" systemctl start mfrd
check "the rules are pushed" bash -c \
	"mfrctl -j rules list | python3 -c 'import json,sys; sys.exit(0 if any(r[\"name_glob\"] == \"guest-ram*\" for r in json.load(sys.stdin)) else 1)'"
check "the damaged store was moved aside" bash -c "ls $DB.broken-* && sqlite3 $DB 'PRAGMA user_version' | grep -qx 3"
check "the journal says so (MESSAGE_ID store-recovered)" bash -c \
	"journalctl -b --since '$since' MESSAGE_ID=874cfb8201154fb4971441c2bc3f5038 -o cat | grep -q 'moved aside to $DB.broken-'"
check "metrics: mfrd_store_recovered 1" wait_until 30 grep -qx 'mfrd_store_recovered 1' "$METRICS"
check "mfrd active, not restarting" bash -c "systemctl is-active -q mfrd"
