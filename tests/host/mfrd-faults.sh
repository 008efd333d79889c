#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# mfrd on the host, without mfr.ko (ASan + UBSan build), where the host
# gets in its way; never unprotected, never crash-looping, no record lost:
# - watchdog = no under a unit that asks for one (WATCHDOG_USEC): the
#   watchdog is fed all the same, and the setting refused loudly;
# - a newer-schema store (a downgrade): the stand-in lives beside the
#   store, on its disk, not in /run, so this boot's records outlive a
#   reboot; the file is left as it is;
# - a full disk under the state directory (a tmpfs, in a mount namespace
#   of mfrd's own): the store opens, its first write fails; mfrd goes
#   on, the records go aside (the incident with them), a restart on the
#   still full disk starts and is READY, and once there is room the
#   records are merged into the file;
# - a full disk of 1 KiB blocks at start, the store closed cleanly: no
#   SIGBUS from SQLite's WAL index, mfrd READY on a stand-in in /run;
# - a stand-in an earlier run left that cannot be merged (the disk full
#   again at the next start): mfrd runs on it, and the metrics say so,
#   until the merge succeeds;
# - mfrctl reads a WAL store in a read-only directory without its -shm
#   (history, summary, forget --dry-run), as mfrd does.
. "$(dirname "$0")/lib-mfrd.sh"

mkdir -p "$tmp/rules" "$tmp/run"
export RUNTIME_DIRECTORY=$tmp/run
printf '[rule]\nname-glob = guest-ram*\naction = keep\n' >"$tmp/rules/10-vms.conf"
boot=$(cat /proc/sys/kernel/random/boot_id)

# A store of mfrd's schema (made by mfrd itself), with one page of an
# earlier boot and N pages of this one without their memory identity
# (mfrd writes that at start).
make_store() { # DB N
	local d
	d=$(mktemp -d "$tmp/mk.XXXXXX")
	mfrd_conf "$d.conf" "$d" "$d.prom" "ready_without_module = yes"
	"$mfrd" --config "$d.conf" --rules-dir "$tmp/rules" >"$d.log" 2>&1 &
	pid=$!
	wait_for 30 grep -qs '^mfrd: started' "$d.log" || fail "make_store: mfrd did not start"
	stop_mfrd "make_store" "$d.log" >/dev/null
	python3 - "$d/mfrd.db" "$2" "$boot" <<'EOP'
import sqlite3, sys
db, n, boot = sys.argv[1], int(sys.argv[2]), sys.argv[3]
c = sqlite3.connect(db)
c.execute("INSERT INTO poisoned_pages (boot_id, pfn, state, first_seen_usec, last_update_usec)"
          " VALUES ('earlier', 9, 'offlined', 1, 1)")
c.executemany("INSERT INTO poisoned_pages (boot_id, pfn, state, first_seen_usec, last_update_usec)"
              " VALUES (?, ?, 'kept', 1, 1)", ((boot, 0x5000 + i) for i in range(n)))
c.execute("DELETE FROM store_incidents")
c.commit()
c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
EOP
	mv "$d/mfrd.db" "$1"
	rm -rf "$d" "$d.conf" "$d.prom" "$d.log"
}

# ---- V4: watchdog = no, a unit with WatchdogSec=2
mfrd_conf "$tmp/wd.conf" "$tmp/wd" "$tmp/wd.prom" "watchdog = no" "ready_without_module = yes"
notify_listener "$tmp/notify-wd" "$tmp/notify-wd.log"
NOTIFY_SOCKET=$tmp/notify-wd WATCHDOG_USEC=2000000 \
	"$mfrd" --config "$tmp/wd.conf" --rules-dir "$tmp/rules" >"$tmp/wd.log" 2>&1 &
pid=$!
pings() { grep -c 'WATCHDOG=1' "$tmp/notify-wd.log"; }
if wait_for 20 bash -c "[ \$(grep -c 'WATCHDOG=1' '$tmp/notify-wd.log') -ge 4 ]"; then
	ok "watchdog = no, WATCHDOG_USEC=2 s: fed all the same ($(pings) WATCHDOG=1 so far)"
else
	fail "watchdog = no under WatchdogSec: $(pings) WATCHDOG=1 (systemd would kill mfrd every 2 s)"
fi
if awk '/WATCHDOG=1/ { if (last && $1 - last >= 2) bad = 1; last = $1 } END { exit bad }' "$tmp/notify-wd.log"; then
	ok "... each within the 2 s systemd would wait"
else
	fail "... a gap of 2 s or more: $(grep WATCHDOG "$tmp/notify-wd.log" | head)"
fi
grep -q 'watchdog = no is refused: systemd asked for a watchdog (WatchdogSec=2 s)' "$tmp/wd.log" &&
	ok "... and the setting is refused with a warning that says how to have none" ||
	{ fail "... no warning"; cat "$tmp/wd.log"; }
stop_mfrd "watchdog" "$tmp/wd.log"

# ---- V1: a newer schema keeps its stand-in beside the store
mkdir -p "$tmp/newer"
make_store "$tmp/newer/mfrd.db" 0
python3 -c 'import sqlite3,sys; sqlite3.connect(sys.argv[1]).execute("pragma user_version = 99")' "$tmp/newer/mfrd.db"
sha=$(sha256sum <"$tmp/newer/mfrd.db")
mfrd_conf "$tmp/newer.conf" "$tmp/newer" "$tmp/newer.prom" "ready_without_module = yes"
"$mfrd" --config "$tmp/newer.conf" --rules-dir "$tmp/rules" >"$tmp/newer.log" 2>&1 &
pid=$!
wait_for 30 grep -qs '^mfrd_store_in_memory 1$' "$tmp/newer.prom" &&
	[ -f "$tmp/newer/mfrd-standin.db" ] && ! ls "$tmp/run"/store-standin-* >/dev/null 2>&1 &&
	ok "newer schema: the stand-in is beside the store ($tmp/newer/mfrd-standin.db), not in /run" ||
	{ fail "newer schema: stand-in not beside the store: $(ls "$tmp/newer" "$tmp/run")"; cat "$tmp/newer.log"; }
grep -q "records are kept in $tmp/newer/mfrd-standin.db" "$tmp/newer.log" &&
	ok "... the journal names it" || fail "... journal: $(grep -i standin "$tmp/newer.log")"
stop_mfrd "newer" "$tmp/newer.log"
[ "$(sha256sum <"$tmp/newer/mfrd.db")" = "$sha" ] &&
	[ "$(db_query "$tmp/newer/mfrd-standin.db" "select count(*) from store_incidents where kind = 'newer schema'")" -ge 1 ] &&
	ok "... kept after mfrd stops (a reboot keeps it: on disk), with the incident; the file untouched" ||
	fail "... after stop: $(ls -la "$tmp/newer")"

# ---- V5: a full disk under the state directory, at run time and at the
# next start.  A tmpfs mounted in mfrd's own mount namespace, full: the
# store opens (no write needed), its first write (the memory identity of
# this boot's pages) fails.
if ! unshare -m true 2>/dev/null; then
	fail "full disk: unshare -m is not available (needs root)"
	finish
	exit
fi
mkdir -p "$tmp/full"
make_store "$tmp/full.db" 3000
mfrd_conf "$tmp/full.conf" "$tmp/full" "$tmp/full.prom" "ready_without_module = yes"
# in-ns.sh DIR DB COMMAND...: the command in a mount namespace where DIR
# is a tmpfs holding a copy of DB and nothing else fits: a reader keeps
# the store's WAL index and log (as a running mfrctl would), then a file
# takes every byte left.  DIR.free, once made, frees that room.  Every
# helper ends with the command (same pid: exec).
cat >"$tmp/in-ns.sh" <<'EOS'
dir=$1 db=$2
shift 2
mount -t tmpfs -o size=2M none "$dir" || exit 90
cp "$db" "$dir/mfrd.db"
main=$$
python3 - "$dir/mfrd.db" "$main" <<'EOP' &
import os, sqlite3, sys, time
c = sqlite3.connect(sys.argv[1])
c.execute("SELECT count(*) FROM poisoned_pages").fetchone()
open(sys.argv[1] + ".held", "w").close()
end = time.monotonic() + 600
while time.monotonic() < end:
    try:
        os.kill(int(sys.argv[2]), 0)
    except ProcessLookupError:
        break
    time.sleep(0.2)
EOP
for _ in $(seq 300); do [ -e "$dir/mfrd.db.held" ] && break; sleep 0.1; done
cat /dev/zero >"$dir/filler" 2>/dev/null
( for _ in $(seq 6000); do
	kill -0 "$main" 2>/dev/null || exit 0
	[ -e "$dir.free" ] && break
	sleep 0.1
  done
  rm -f "$dir/filler"
  touch "$dir.freed" ) &
exec "$@"
EOS
notify_listener "$tmp/notify-full" "$tmp/notify-full.log"
rm -f "$tmp/full.free" "$tmp/full.freed"
NOTIFY_SOCKET=$tmp/notify-full unshare -m bash "$tmp/in-ns.sh" "$tmp/full" "$tmp/full.db" \
	"$mfrd" --config "$tmp/full.conf" --rules-dir "$tmp/rules" >"$tmp/full.log" 2>&1 &
pid=$!
if wait_for 60 grep -qs '^mfrd_store_in_memory 1$' "$tmp/full.prom" &&
	wait_for 30 grep -q 'READY=1' "$tmp/notify-full.log" && kill -0 "$pid"; then
	ok "full disk at the first write: mfrd runs on, READY, records kept aside"
else
	fail "full disk: $(grep -E '^mfrd_store' "$tmp/full.prom" 2>&1)"; tail -20 "$tmp/full.log"
fi
standin=$(ls "$tmp/run"/store-standin-*.db 2>/dev/null | head -1)
[ -n "$standin" ] &&
	wait_for 30 bash -c "[ \"\$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1], timeout=10).execute(\"select count(*) from poisoned_pages where phys_addr is not null and boot_id = ?\", (sys.argv[2],)).fetchone()[0])' '$standin' '$boot')\" = 3000 ]" &&
	[ "$(db_query "$standin" "select count(*) from store_incidents where acked_usec is null")" -ge 1 ] &&
	ok "... the stand-in in /run holds this boot's 3000 pages (their identity written there) and the incident" ||
	{ fail "... stand-in: '$standin' $(ls -la "$tmp/run")"; tail -20 "$tmp/full.log"; }
grep -q '^mfrd_store_recovered 1$' "$tmp/full.prom" &&
	ok "... metrics: mfrd_store_recovered 1" || fail "... metrics: $(grep -E '^mfrd_store' "$tmp/full.prom")"
stop_mfrd "full disk" "$tmp/full.log"

# The restart, the disk still full: the stand-in left cannot be merged;
# mfrd runs on it (its records and incident in use), READY, and says so.
rm -f "$tmp/full.prom" "$tmp/full.free" "$tmp/full.freed"
: >"$tmp/notify-full.log"
NOTIFY_SOCKET=$tmp/notify-full unshare -m bash "$tmp/in-ns.sh" "$tmp/full" "$tmp/full.db" \
	"$mfrd" --config "$tmp/full.conf" --rules-dir "$tmp/rules" >"$tmp/full2.log" 2>&1 &
pid=$!
if wait_for 60 grep -q 'READY=1' "$tmp/notify-full.log" &&
	wait_for 30 grep -qs '^mfrd_store_in_memory 1$' "$tmp/full.prom" &&
	grep -q '^mfrd_store_recovered 1$' "$tmp/full.prom"; then
	ok "restart on the full disk: READY, on the stand-in; metrics mfrd_store_in_memory 1, mfrd_store_recovered 1"
else
	fail "restart on the full disk: $(grep -E '^mfrd_store' "$tmp/full.prom" 2>&1)"; tail -20 "$tmp/full2.log"
fi
grep -q "the stand-in $standin an earlier run left cannot be merged into the store .*mfrd runs on it meanwhile" "$tmp/full2.log" &&
	ok "... the journal says the leftover could not be merged and mfrd runs on it" ||
	{ fail "... journal"; tail -20 "$tmp/full2.log"; }
[ "$(db_query "$standin" "select count(*) from poisoned_pages where boot_id = '$boot'")" = 3000 ] &&
	ok "... this boot's 3000 pages still there" || fail "... pages: $(db_query "$standin" "select count(*) from poisoned_pages")"
# Room again: the retry merges the records into the file.
touch "$tmp/full.free"
wait_for 30 test -e "$tmp/full.freed"
if wait_for 60 grep -qs '^mfrd_store_in_memory 0$' "$tmp/full.prom" &&
	grep -q 'is in use again' "$tmp/full2.log" && [ ! -e "$standin" ]; then
	ok "room on the disk again: merged into the file, the stand-in gone"
else
	fail "room again: $(grep -E '^mfrd_store' "$tmp/full.prom")"; tail -20 "$tmp/full2.log"
fi
# The file lives in the namespace's tmpfs: read it there before it goes.
merged=$(nsenter -t "$pid" -m python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute("select count(*) from poisoned_pages where phys_addr is not null and boot_id = ?", (sys.argv[2],)).fetchone()[0], c.execute("select count(*) from store_incidents where acked_usec is null").fetchone()[0])' \
	"$tmp/full/mfrd.db" "$boot" 2>&1) || true
[ "${merged%% *}" = 3000 ] && [ "${merged##* }" -ge 1 ] &&
	ok "... the file has the 3000 pages with their identity and the incident" ||
	fail "... in the file: '$merged'"
stop_mfrd "full disk, restart" "$tmp/full2.log"

# ---- V5, at boot: a full disk of 1 KiB blocks (ext4 made below 512 MiB)
# under the state directory, the store closed cleanly (no -shm).  SQLite
# grows its WAL index a byte per 4 KiB page, the rest of each page a hole
# it then stores into through a shared mapping: with a few KiB left (8 and
# 10 here; 6 or 12 and SQLite fails cleanly or fits) a SIGBUS, which killed
# mfrd at every start (e2e boot 7) before it offlined this boot's recorded
# pages.  Now the store does not open (disk full), mfrd runs on a stand-in
# in /run, READY; mfrctl reads the store there all the same.  With 10 KiB
# left the store also has a page only in its WAL (a writer killed, its
# -shm gone): boot offlining reads it too, from a copy in /run, where
# reading the file alone (as before) missed it.
make_store "$tmp/small.db" 300
rm -f "$tmp/small.db-shm" "$tmp/small.db-wal"
cp "$tmp/small.db" "$tmp/small-wal.db"
python3 - "$tmp/small-wal.db" "$boot" <<'EOP'
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("INSERT INTO poisoned_pages (boot_id, pfn, state, first_seen_usec, last_update_usec)"
          " VALUES (?, 0x6000, 'kept', 1, 1)", (sys.argv[2],))
c.commit()
os._exit(0)
EOP
rm -f "$tmp/small-wal.db-shm"
[ -s "$tmp/small-wal.db-wal" ] || fail "premise: no WAL beside $tmp/small-wal.db"
# small-ns.sh DIR DB KIB COMMAND...: the command in a mount namespace where
# DIR is a 64 MiB ext4 of 1 KiB blocks holding a copy of DB, KIB left.
cat >"$tmp/small-ns.sh" <<'EOS'
dir=$1 db=$2 kib=$3
shift 3
truncate -s 64M "$dir.img" && mkfs.ext4 -q -F -b 1024 "$dir.img" &&
	mount -o loop "$dir.img" "$dir" || exit 90
cp "$db" "$dir/mfrd.db"
[ ! -e "$db-wal" ] || cp "$db-wal" "$dir/mfrd.db-wal"
dd if=/dev/zero of="$dir/filler" bs=1k status=none 2>/dev/null
sync -f "$dir" && truncate -s "-${kib}K" "$dir/filler" && sync -f "$dir" || exit 91
exec "$@"
EOS
for kib in 8 10; do
	db=$tmp/small.db records=301
	[ "$kib" = 8 ] || db=$tmp/small-wal.db records=302
	mkdir -p "$tmp/small$kib"
	rm -f "$tmp/run"/store-standin-*.db*
	mfrd_conf "$tmp/small$kib.conf" "$tmp/small$kib" "$tmp/small$kib.prom" "ready_without_module = yes"
	notify_listener "$tmp/notify-small$kib" "$tmp/notify-small$kib.log"
	NOTIFY_SOCKET=$tmp/notify-small$kib unshare -m bash "$tmp/small-ns.sh" "$tmp/small$kib" "$db" "$kib" \
		"$mfrd" --config "$tmp/small$kib.conf" --rules-dir "$tmp/rules" >"$tmp/small$kib.log" 2>&1 &
	pid=$!
	if wait_for 60 grep -q 'READY=1' "$tmp/notify-small$kib.log" &&
		wait_for 30 grep -qs '^mfrd_store_in_memory 1$' "$tmp/small$kib.prom" &&
		sleep 3 && kill -0 "$pid" 2>/dev/null; then
		ok "full disk of 1 KiB blocks, $kib KiB left, at start: READY on a stand-in, no SIGBUS"
	else
		rc=0
		kill -0 "$pid" 2>/dev/null || { wait "$pid" || rc=$?; pid=; }
		fail "full disk of 1 KiB blocks, $kib KiB left, at start: mfrd exit $rc (135: SIGBUS), $(grep -E '^mfrd_store_in_memory' "$tmp/small$kib.prom" 2>&1)"
		tail -20 "$tmp/small$kib.log"
	fi
	grep -q "the store $tmp/small$kib/mfrd.db cannot be used (unavailable: .*database or disk is full).* $records page records read from it for boot offlining" "$tmp/small$kib.log" &&
		! grep -q "an earlier run left" "$tmp/small$kib.log" &&
		ok "... the journal says the disk is full, its $records records read for boot offlining" ||
		{ fail "... journal"; tail -20 "$tmp/small$kib.log"; }
	if [ -n "$pid" ]; then
		out=$(nsenter -t "$pid" -m "$mfrctl" -j history --db "$tmp/small$kib/mfrd.db" 2>&1) &&
			[ "$(python3 -c 'import json,sys; print(len(json.loads(sys.argv[1])))' "$out")" = "$records" ] &&
			ok "... mfrctl history reads the store on that disk ($records records)" ||
			fail "... mfrctl history on the full disk: $(echo "$out" | head -c 300)"
		stop_mfrd "full disk of 1 KiB blocks, $kib KiB left" "$tmp/small$kib.log"
	fi
done

# ---- U17: mfrctl on a WAL store in a read-only directory, its -shm
# gone with a clean stop (a read-only /var)
mkdir -p "$tmp/rostore"
make_store "$tmp/rostore/mfrd.db" 2
rm -f "$tmp/rostore/mfrd.db-shm" "$tmp/rostore/mfrd.db-wal"
ro_mfrctl() {
	unshare -m sh -c 'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && shift && exec "$@"' \
		sh "$tmp/rostore" "$mfrctl" "$@" --db "$tmp/rostore/mfrd.db"
}
out=$(ro_mfrctl -j history 2>&1) &&
	[ "$(python3 -c 'import json,sys; print(len(json.loads(sys.argv[1])))' "$out")" = 3 ] &&
	ok "read-only WAL store: mfrctl history reads it (3 records)" || fail "read-only history: $out"
ro_mfrctl summary >"$tmp/ro-summary" 2>&1 && grep -q '^Poisoned pages by boot' "$tmp/ro-summary" &&
	ok "read-only WAL store: mfrctl summary" || fail "read-only summary: $(cat "$tmp/ro-summary")"
out=$(ro_mfrctl forget 0x9 --dry-run 2>&1) && [ "$out" = "would forget 1 record of pfn 0x9 (1 pfn, 1 boot)" ] &&
	ok "read-only WAL store: mfrctl forget --dry-run" || fail "read-only forget --dry-run: $out"

finish
