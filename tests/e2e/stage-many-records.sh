# SPDX-License-Identifier: GPL-2.0-or-later
# 20 000 records handled at start, under the unit's WatchdogSec=30: the
# store gets 20 000 pfns of an "earlier boot" and mfrd starts into boot
# offlining them all.  They are the pages of a process of this test (80
# MiB of anonymous memory), so each one is real work: the kernel
# migrates its content and takes the page out (soft-offline).  mfrd
# feeds the watchdog through it and is never killed, every pfn is
# offline, and the process reads back every word it wrote.

many=${E2E_MANY:-20000}
many_dir=$(mktemp -d)
python3 - "$many" "$many_dir" >"$SHARE/logs/many-holder.out" 2>&1 <<'PY' &
import ctypes, mmap, os, struct, sys, time
n, d = int(sys.argv[1]), sys.argv[2]
P = 4096
m = mmap.mmap(-1, n * P, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
m.madvise(mmap.MADV_NOHUGEPAGE)
def pattern(i):
    return struct.pack("<Q", (i * 0x9E3779B97F4A7C15 + 1) % 2**64) * (P // 8)
for i in range(n):
    m[i * P:(i + 1) * P] = pattern(i)
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
with open("/proc/self/pagemap", "rb") as f:
    f.seek(addr // P * 8)
    raw = f.read(n * 8)
pfns = []
for i in range(n):
    e, = struct.unpack_from("<Q", raw, i * 8)
    if not e >> 63 & 1:
        sys.exit(f"page {i} not present: {e:#x}")
    pfns.append(e & ((1 << 55) - 1))
if len(set(pfns)) != n or 0 in pfns:
    sys.exit("no distinct pfns in /proc/self/pagemap")
with open(d + "/pfns.tmp", "w") as f:
    f.write("".join(f"{p}\n" for p in pfns))
os.rename(d + "/pfns.tmp", d + "/pfns")
while not os.path.exists(d + "/stop"):
    time.sleep(0.5)
bad = [i for i in range(n) if m[i * P:(i + 1) * P] != pattern(i)]
print(f"{n} pages read back after the offlining, {len(bad)} wrong: {bad[:10]}")
sys.exit(1 if bad else 0)
PY
holder=$!
check "a process holds $many pages of anonymous memory, each with its own pattern" \
	wait_file "$many_dir/pfns" 600
many_seed=$(python3 -c 'import uuid; print(uuid.uuid4())')
restarts_before=$(unit_prop mfrd NRestarts)
check "premise: mfrd.service has WatchdogSec=30" bash -c \
	"[ \"\$(systemctl show -p WatchdogUSec --value mfrd)\" = 30s ]"
check "stop mfrd" systemctl stop mfrd
seed_store() {
	python3 - "$DB" "$many_seed" "$many_dir/pfns" <<'PY'
import sqlite3, sys, time
db, boot, path = sys.argv[1:]
t = int(time.time() * 1e6) - 86400 * 10**6
rows = [(boot, int(l), t, t, int(l) << 12) for l in open(path)]
c = sqlite3.connect(db, timeout=30)
with c:
    c.executemany("INSERT INTO poisoned_pages (boot_id, pfn, state, first_seen_usec,"
                  " last_update_usec, phys_addr) VALUES (?, ?, 'offlined', ?, ?, ?)", rows)
n = c.execute("SELECT count(*) FROM poisoned_pages WHERE boot_id = ?", (boot,)).fetchone()[0]
print(n, "records of boot", boot)
sys.exit(0 if n == len(rows) else 1)
PY
}
check "the store gets $many records of an earlier boot (boot id $many_seed): those pages" seed_store
sort -nu "$STATE/before-boot5.pfns" "$many_dir/pfns" >"$many_dir/all-pfns"
# Boot offlining runs once per boot: as at a boot, it has not run yet.
rm -f /var/lib/mfrd/recorded-pfns-offlined
many_t0=$(monotonic_usec)
many_since=$(date '+%Y-%m-%d %H:%M:%S')
many_start() {
	local rc=0
	timeout 1200 systemctl start mfrd || rc=$?
	echo "systemctl start mfrd: exit $rc after $((($(monotonic_usec) - many_t0) / 1000000)) s"
	[ "$rc" = 0 ]
}
check "systemctl start mfrd: READY after the offlining" many_start
many_entry=
many_logged() { many_entry=$(offlining_entry "$many_t0"); [ -n "$many_entry" ]; }
wait_until 30 many_logged
many_took() {
	local s t
	s=$(mfrd_exec_usec)
	t=$(echo "$many_entry" | jfield __MONOTONIC_TIMESTAMP)
	echo "mfrd started at $s us, boot offlining logged at $t us: $(((t - s) / 1000000)) s"
	[ -n "$t" ] && [ $((t - s)) -gt 30000000 ]
}
check "premise: the offlining took longer than WatchdogSec (30 s)" many_took
never_killed() {
	local pid
	pid=$(unit_prop mfrd MainPID)
	echo "NRestarts $(unit_prop mfrd NRestarts) (before: $restarts_before), MainPID $pid," \
		"the offlining logged by pid $(echo "$many_entry" | jfield _PID), Result $(unit_prop mfrd Result)"
	! journalctl -u mfrd --since "$many_since" -o cat | grep -i 'watchdog timeout' &&
		[ "$(unit_prop mfrd NRestarts)" = "$restarts_before" ] &&
		[ "$(echo "$many_entry" | jfield _PID)" = "$pid" ] &&
		[ "$(unit_prop mfrd Result)" = success ] && systemctl is-active -q mfrd
}
check "mfrd never killed by the watchdog: no timeout, NRestarts $restarts_before, the same process" never_killed
check "boot offlining handled all $(wc -l <"$many_dir/all-pfns") pfns (the $many and those of earlier boots), none failed" \
	offlined_all "$many_dir/all-pfns" "$many_t0"
check "... the kernel has the $many poisoned (KPF_HWPOISON)" pfns_hwpoisoned "$many_dir/pfns"
check "metrics: mfr_poisoned_pfns_earlier_boots $(wc -l <"$many_dir/all-pfns")" \
	wait_until 30 metric_is mfr_poisoned_pfns_earlier_boots "$(wc -l <"$many_dir/all-pfns")"
touch "$many_dir/stop"
wait "$holder"
many_rc=$?
diag <"$SHARE/logs/many-holder.out"
check "the process reads back every word: the content moved with each page (exit 0)" [ "$many_rc" = 0 ]
check "mfrctl forget --boot $many_seed: the test's records go" bash -c \
	"mfrctl forget --yes --boot $many_seed | tee /dev/stderr | grep -q '^forgot $many '"
check "... mfr_poisoned_pfns_earlier_boots $(wc -l <"$STATE/before-boot5.pfns") again" \
	wait_until 30 metric_is mfr_poisoned_pfns_earlier_boots "$(wc -l <"$STATE/before-boot5.pfns")"
rm -rf "$many_dir"
