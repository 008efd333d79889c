# SPDX-License-Identifier: GPL-2.0-or-later
# mfrd against the real module, without systemd: rules pushed, a workload
# recorded with owner and offset through its whole life, metrics, reloads
# (a broken file, a rule the module refuses), kill -9 in a storm of
# errors then a store equal to the module's dump, the module unloaded
# and loaded under it, a start without the module, a start with a rule
# the module refuses (the others in force, READY at once) and a rule for
# a cgroup made later, a memfd name that tries to forge a log line, a
# state directory full at the first error (no exit, no restart loop, no
# record lost), and the boot offlining of pfns recorded in earlier boots.
# STATUS= and READY= are read from a NOTIFY_SOCKET of our own.
# 600 s once with three other VMs on the machine's two cores:
# vm-timeout: 1500
. ./lib.sh

# The runner shows the last lines of a failure; all of it stays here
# (named by boot: runs in two VMs at once must not mix).
out=$MFR_ROOT/build/vm/t-mfrd-$(cut -c1-8 /proc/sys/kernel/random/boot_id)
mkdir -p "$MFR_ROOT/build/vm"
exec > >(tee "$out.out") 2>&1

# The sanitized build: a memory error in the daemon fails the test.
mfrd=${MFRD:-$MFR_ROOT/build/daemon/asan/mfrd}
ctl=$MFR_ROOT/build/daemon/mfrctl
script=$MFR_ROOT/build/helpers/memfd_script
export ASAN_OPTIONS=detect_leaks=1:exitcode=99
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

T=$(mktemp -d)
chmod 755 "$T"
db=$T/state/mfrd.db
log=$T/mfrd.log
mkdir "$T/rules"
cat >"$T/mfrd.conf" <<EOF
state_dir = $T/state
metrics_file = $T/metrics/mfr.prom
metrics_interval = 2
# "Not READY without the module" is checked after seconds that a loaded
# CI machine can stretch past the default 30 s bound.
ready_timeout = 600
EOF
cat >"$T/rules/10-vms.conf" <<'EOF'
# Guests keep their hugepages.
[rule]
name-glob = guest-ram*
action = keep
EOF

# Every sd_notify() datagram, one line each ("|" for newlines).
"$PYTHON" - "$T/notify.sock" >"$T/notify" <<'PY' &
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
while True:
    print(s.recv(4096).decode().replace('\n', '|'), flush=True)
PY
listener=$!
export NOTIFY_SOCKET=$T/notify.sock
# Where mfrd leaves the outcome of a reload for "mfrd --reload".
export RUNTIME_DIRECTORY=$T/run
mfrd_pid=

# Whatever happens, no daemon or rule of ours outlives the test.
cleanup() {
	[ -n "$mfrd_pid" ] && kill -9 "$mfrd_pid" 2>/dev/null
	kill "$listener" 2>/dev/null
	[ -d /sys/module/mfr ] || insmod "$MFR_ROOT/module/mfr.ko"
	del_all_rules
	rm -rf "$T"
}
trap cleanup EXIT

start_mfrd() {
	"$mfrd" --config "$T/mfrd.conf" --rules-dir "$T/rules" >>"$log" 2>&1 &
	mfrd_pid=$!
}
stop_mfrd() { kill -TERM "$mfrd_pid" && wait "$mfrd_pid"; }
section() { echo "# $* (t=${SECONDS}s)"; }
logged() { grep -qE "$1" "$log"; }
notified() { grep -qE "$1" "$T/notify"; }
# notified_within SECONDS REGEX: notified, or the datagrams as they came.
notified_within() {
	wait_until "$1" notified "$2" && return
	echo "# no datagram matches '$2' in $1 s; the last ones:"
	tr -d '\0' <"$T/notify" | tail -n 15 | sed 's/^/#   /'
	return 1
}
# json EXPR: a Python expression on the JSON document d from stdin.
json() { "$PYTHON" -c 'import json, sys; d = json.load(sys.stdin); sys.exit(0 if eval(sys.argv[1]) else 1)' "$1"; }
rules_are_ours() { "$ctl" -j rules list | json 'len(d) == 1 and d[0]["name_glob"] == "guest-ram*" and d[0]["action"] == "keep"'; }
# only_rule ID: the module has our rule, under that id, and no other.
only_rule() { rules_are_ours && "$ctl" -j rules list | json "d[0]['id'] == $1"; }
alive_with_rule() { kill -0 "$mfrd_pid" && only_rule "$1"; }
# sql QUERY: rows as "a|b" lines.
sql() { "$PYTHON" -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]):
    print("|".join(map(str, r)))' "$db" "$1"; }
boot=$(cat /proc/sys/kernel/random/boot_id)

# The store holds every page poison-get lists, once, in the same state.
store_matches_module() {
	"$PYTHON" - "$db" "$boot" "$ctl" "${1:-}" <<'PY'
import json, sqlite3, subprocess, sys, time
db, boot, ctl, verbose = sys.argv[1:]
dump = json.loads(subprocess.run([ctl, '-j', 'poison', 'list'], check=True,
                                 capture_output=True).stdout)
c = sqlite3.connect(db)
rows = c.execute('SELECT pfn, state FROM poisoned_pages WHERE boot_id = ?',
                 (boot,)).fetchall()
n, distinct = c.execute('SELECT count(*), count(DISTINCT pfn) FROM poisoned_pages'
                        ' WHERE boot_id = ?', (boot,)).fetchone()
want = {(p['pfn'], p['state']) for p in dump}
got = set(rows)
if verbose:
    print(f'# module {len(want)} pages, store {n} rows ({distinct} distinct pfns)')
    print(f'# only in the module: {sorted(want - got)[:10]}, only in the store: {sorted(got - want)[:10]}')
sys.exit(0 if got == want and n == distinct else 1)
PY
}

# Nothing of earlier tests may decide for our memfds.
del_all_rules

section start
# ---- start: rules pushed before READY=1, metrics once their directory exists
start_mfrd
check "READY=1 after start" wait_until 60 notified '^READY=1'
check "rules pushed: rules list shows guest-ram* keep" rules_are_ours
check "STATUS: 1 rules, N pages recorded, module loaded, generation G" \
	notified '^READY=1\|STATUS=1 rules, [0-9]+ pages recorded, module loaded, generation [0-9]+$'
check "missing metrics directory: said once, not fatal" \
	bash -c "[ \$(grep -c 'does not exist: no metrics' '$log') = 1 ] && kill -0 $mfrd_pid"
mkdir "$T/metrics"
check "metrics file written within the interval" \
	wait_until 10 grep -qs '^mfr_module_loaded 1$' "$T/metrics/mfr.prom"

section workload
# ---- a workload opted in by the name rule, two errors, then closed
"$script" guest-ram-1 1 poison:3 poison:7 "ready:$T/a" "wait:$T/b" close >"$T/out1" &
workload=$!
wait_file "$T/a"
read -r pid _ ino <"$T/a"
check "memfd guest-ram-1 opted in by the rule" \
	json "any(m['inode'] == $ino and m['name'] == 'guest-ram-1' and 'rule_id' in m for m in d)" \
	< <("$ctl" -j memfd list)
page_rows() { sql "SELECT printf('0x%x', \"offset\"), memfd_name, pid, comm, state, times_consumed FROM poisoned_pages WHERE inode = $ino ORDER BY \"offset\""; }
want_rows() { diff <(page_rows) <(printf '0x3000|guest-ram-1|%s|memfd_script|%s|1\n0x7000|guest-ram-1|%s|memfd_script|%s|1\n' "$pid" "$1" "$pid" "$1") >/dev/null; }
check "store: both pages with owner, offset, state kept, consumed once" wait_until 20 want_rows kept
check "journal: page-poisoned entry with MESSAGE_ID and fields" \
	logged "poisoned, pfn 0x[0-9a-f]+, kept mapped \[MESSAGE_ID=eb5269e54a5a4debadd6ea2bba88f801 MFR_EVENT=page-poisoned MFR_PFN=0x[0-9a-f]+ .*MFR_OFFSET=0x7000 .*MFR_MEMFD=guest-ram-1 MFR_PID=$pid MFR_COMM=memfd_script"
check "journal: page-consumed entry names the task signalled" \
	logged "MESSAGE_ID=46ffc58993a54cce8ee11141578ff82d MFR_EVENT=page-consumed .*MFR_SIGNALLED_PID=$pid MFR_SIGNALLED_COMM=memfd_script MFR_SIGNAL=action-required"
check "journal: memfd-kept entry" logged "MESSAGE_ID=6e49105e051b4eba9c80c48617c620cf MFR_EVENT=memfd-kept MFR_INODE=$ino MFR_MEMFD=guest-ram-1"
touch "$T/b"
wait "$workload"
check "store: offlined after close" wait_until 20 want_rows offlined
check "journal: folio-pending, folio-offlined, memfd-evicted" \
	bash -c "grep -q 'MESSAGE_ID=d7800a9fce844c7bb16105f91d12d17e MFR_EVENT=folio-pending' '$log' &&
		 grep -q 'MESSAGE_ID=be1343cc34614c06863e97f641dd71d6 MFR_EVENT=folio-offlined' '$log' &&
		 grep -q 'MESSAGE_ID=acfd4f1892b44e10a3dcf0101aa03d7a MFR_EVENT=memfd-evicted MFR_INODE=$ino' '$log'"
# (the poisoning thread touches the page: SIGBUS, page-consumed)
check "store: events log has the memfd's 8 events in order" \
	test "$(sql "SELECT group_concat(kind, ' ') FROM (SELECT kind FROM events WHERE inode = $ino ORDER BY id)")" = \
	"memfd-kept page-poisoned page-consumed page-poisoned page-consumed folio-pending folio-offlined memfd-evicted"
check "metrics: 2 offlined pages this boot" \
	wait_until 10 grep -qE '^mfr_poisoned_pages\{state="offlined"\} ([2-9]|[0-9]{2,})$' "$T/metrics/mfr.prom"

section reloads
# ---- reloads: a broken file is refused with FILE:LINE; so is a rule the
# module refuses, all or nothing; the previous rules stay
id_before=$("$ctl" -j rules list | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)[0]["id"])')
printf '[rule]\nname-glob = other*\nbudget = lots\n' >"$T/rules/20-bad.conf"
rc=0
"$mfrd" --reload "$mfrd_pid" 2>"$T/reload.err" || rc=$?
check "mfrd --reload, broken file: exit 1 with FILE:LINE (got $rc: $(head -1 "$T/reload.err"))" \
	bash -c "[ $rc = 1 ] && grep -q '^$T/rules/20-bad.conf:3: budget' '$T/reload.err'"
check "reload, broken file: FILE:LINE error logged as config-rejected" \
	wait_until 20 logged "mfrd: $T/rules/20-bad.conf:3: budget: \"lots\" is not a decimal number \[MESSAGE_ID=cda346a082d94325996172d99f99455d"
check "reload, broken file: RELOADING=1 then READY=1 with a STATUS saying so" \
	wait_until 10 notified '^READY=1\|STATUS=.*reload refused: configuration errors'
check "reload, broken file: daemon alive, old rule (same id) in the module" \
	alive_with_rule "$id_before"
printf '[rule]\nname-glob = other*\naction = keep\n\n[rule]\ncgroup-id = 1099511627776\naction = keep\n' \
	>"$T/rules/20-bad.conf"
rc=0
"$mfrd" --reload "$mfrd_pid" 2>"$T/reload.err" || rc=$?
check "mfrd --reload, rule refused by the module: exit 1 with its FILE:LINE (got $rc: $(head -1 "$T/reload.err"))" \
	bash -c "[ $rc = 1 ] && grep -q '^$T/rules/20-bad.conf:5: rule refused by mfr.ko: .*cgroup' '$T/reload.err'"
check "reload, rule refused by the module: its FILE:LINE and the kernel's reason" \
	wait_until 20 logged "mfrd: $T/rules/20-bad.conf:5: rule refused by mfr.ko: .*\[MESSAGE_ID=cda346a082d94325996172d99f99455d"
check "reload, rule refused: rolled back, only the old rule (same id)" \
	only_rule "$id_before"
rm "$T/rules/20-bad.conf"
check "mfrd --reload, fixed: exit 0" "$mfrd" --reload "$mfrd_pid"
check "reload, fixed: reloaded, STATUS note gone" \
	wait_until 20 bash -c "tail -n 1 '$T/notify' | grep -qE '^READY=1\|STATUS=1 rules, .*generation [0-9]+$'"

section storm
# ---- kill -9 in a storm: 200 errors over 4 memfds, three kills and
# restarts; the store
# equals the module's dump, no pfn twice
# Paced (250 ms between errors, 12 s a workload) so that the kills land
# in the middle.
pages=$(for p in $(seq 0 49); do echo "poison:$p sleep:250"; done)
storm=()
for i in 1 2 3 4; do
	# shellcheck disable=SC2086
	"$script" "guest-ram-s$i" 1 $pages "ready:$T/s$i" "wait:$T/go" close >/dev/null &
	storm+=($!)
done
storm_events() { grep -c 'MFR_EVENT=page-poisoned.*MFR_MEMFD=guest-ram-s' "$log"; }
module_kept() { "$ctl" poison list | grep -c ' kept '; }
module_past() { [ "$(module_kept)" -ge "$1" ]; }
# Three kills as the module passes 30, 80 and 130 errors (whatever the
# daemon has recorded by then), each restart right away.
for k in 1 2 3; do
	wait_until 60 module_past $((k * 50 - 20))
	kill -9 "$mfrd_pid"
	wait "$mfrd_pid" 2>/dev/null
	done_at_kill=$(find "$T" -maxdepth 1 -name 's[1-4]' | wc -l)
	echo "# kill -9 #$k at t=${SECONDS}s: module $(module_kept) errors, mfrd had logged $(storm_events), $done_at_kill of 4 workloads done"
	[ "$k" = 1 ] && check "storm: the first kill came before the storm's end" \
		test "$done_at_kill" -lt 4
	start_mfrd
done
for i in 1 2 3 4; do wait_file "$T/s$i"; done
check "storm: 200 errors in the module's dump" \
	bash -c "[ \$('$ctl' poison list | grep -c kept) -ge 200 ]"
check "after kill -9 and restart: store = module dump, no pfn twice" \
	wait_until 30 store_matches_module
store_matches_module verbose
check "restart: mfrd reconciled from the module's dump" \
	logged "reconciled \(mfr.ko loaded\): [0-9]+ poisoned pages reported by mfr.ko"
touch "$T/go"
wait "${storm[@]}"
check "storm released: store = module dump (all offlined)" \
	wait_until 60 store_matches_module
store_matches_module verbose
check "store: the storm's rows have owner and offset" \
	test "$(sql "SELECT count(*) FROM poisoned_pages WHERE memfd_name LIKE 'guest-ram-s%' AND comm = 'memfd_script' AND \"offset\" IS NOT NULL AND state = 'offlined'")" = 200

section module reload
# ---- the module unloaded and loaded again under a running mfrd
rmmod mfr
check "rmmod: mfrd notices, module-state logged" \
	wait_until 20 logged "mfr.ko is gone .*MESSAGE_ID=9500ecc826c24b2eb0a4233b304989a5"
check "rmmod: STATUS=waiting for mfr.ko, not protected" \
	wait_until 10 notified '^STATUS=waiting for mfr.ko: HugeTLB memfds are not protected$'
insmod "$MFR_ROOT/module/mfr.ko"
check "insmod: mfrd reconnects and pushes the rules again" \
	wait_until 20 rules_are_ours
check "insmod: STATUS back to module loaded" \
	wait_until 10 bash -c "tail -n 1 '$T/notify' | grep -q 'module loaded'"
check "mfrd alive through the reload" kill -0 "$mfrd_pid"

section start without the module
# ---- SIGTERM; a start without the module waits, then connects
stop_mfrd
check "SIGTERM: clean exit (no sanitizer report)" test $? = 0
check "SIGTERM: STOPPING=1" notified '^STOPPING=1$'
rmmod mfr
: >"$T/notify"
start_mfrd
check "no module at start: STATUS=waiting for mfr.ko, not protected" \
	notified_within 30 '^STATUS=waiting for mfr.ko: HugeTLB memfds are not protected$'
check "no module at start: logged, still alive" \
	bash -c "grep -q 'not loaded: waiting for it' '$log' && sleep 3 && kill -0 $mfrd_pid"
check "no module at start: not READY (protection first)" bash -c "! grep -q READY=1 '$T/notify'"
insmod "$MFR_ROOT/module/mfr.ko"
check "module loaded later: rules pushed" wait_until 20 rules_are_ours
check "module loaded later: READY=1 once the rules are in" wait_until 20 notified '^READY=1'
stop_mfrd

section a refused rule and a later cgroup at start
# ---- a start with a rule the module refuses (a cgroup id that does not
# exist): the others are pushed, READY at once, the refusal said; a rule
# for a cgroup made later holds for the first memfd made in it
printf '[rule]\ncgroup-id = 1099511627776\naction = keep\n' >"$T/rules/30-gone.conf"
printf '[rule]\nname-glob = late-*\ncgroup-path = /mfrd-late.slice\naction = keep\n' >"$T/rules/40-late.conf"
rmdir /sys/fs/cgroup/mfrd-late.slice 2>/dev/null
: >"$T/notify"
start_mfrd
check "refused rule at start: READY=1 within 60 s (not after ready_timeout)" \
	notified_within 60 '^READY=1'
check "... the module has the two other rules, the late cgroup's by path" \
	bash -c "'$ctl' -j rules list | '$PYTHON' -c 'import json, sys; d = json.load(sys.stdin); sys.exit(0 if len(d) == 2 and {r.get(\"name_glob\") for r in d} == {\"guest-ram*\", \"late-*\"} and any(r.get(\"cgroup_path\") == \"/mfrd-late.slice\" for r in d) else 1)'"
check "... STATUS: not every rule in force, 1 of 3 refused" \
	notified_within 20 'STATUS=DEGRADED, not every rule in force: .*1 of 3 rules NOT in force'
check "... metrics: mfrd_rules_refused 1, mfrd_protected 0, mfrd_ready_unprotected 0" \
	wait_until 20 bash -c "grep -qx 'mfrd_rules_refused 1' '$T/metrics/mfr.prom' && grep -qx 'mfrd_protected 0' '$T/metrics/mfr.prom' && grep -qx 'mfrd_ready_unprotected 0' '$T/metrics/mfr.prom'"
check "... the refusal logged with its FILE:LINE" \
	logged "$T/rules/30-gone.conf:1: rule refused by mfr.ko: .*cgroup-id"
mkdir /sys/fs/cgroup/mfrd-late.slice
sh -c 'echo $$ > /sys/fs/cgroup/mfrd-late.slice/cgroup.procs && exec "$@"' sh \
	"$script" late-vm 1 "ready:$T/late" "wait:$T/late-go" close >/dev/null &
late=$!
wait_file "$T/late"
read -r _ _ late_ino <"$T/late"
check "a memfd made in the cgroup made after the start: kept by its rule, first memfd" \
	json "any(m['inode'] == $late_ino and m['policy'] == 'keep' and m.get('rule_id') for m in d)" \
	< <("$ctl" -j memfd list)
touch "$T/late-go"
wait "$late"
rmdir /sys/fs/cgroup/mfrd-late.slice
rm "$T/rules/30-gone.conf" "$T/rules/40-late.conf"
stop_mfrd

section a memfd name set by a tenant
# ---- a memfd name with a newline and a line of its own: the log (stderr
# here) keeps one line per entry, the name escaped
: >"$T/notify"
start_mfrd
notified_within 60 '^READY=1'
"$script" "$(printf 'guest-ram-x\nmfrd: forged line')" 1 poison:1 "ready:$T/nl" close >/dev/null
check "a memfd name with a newline: its entries escaped (\\x0a), one line each" \
	wait_until 20 logged 'MFR_MEMFD=guest-ram-x\\x0amfrd: forged line'
check "... no line of the log begins with the forged text" bash -c "! grep -q '^mfrd: forged line' '$log'"
stop_mfrd

section full state directory
# ---- the state directory full at the first error (a tmpfs): the store
# opens (a reader keeps its WAL index and log, then nothing is left), the
# first event's commit fails; mfrd goes on, the page is kept aside, a
# restart on the still-full disk is READY (it used to exit in its
# start-up reconcile, again and again), and once there is room the page
# is in the file
full=$T/full
mkdir -p "$full"
mount -t tmpfs -o size=4M none "$full"
cp "$db" "$full/mfrd.db"
sed "s|^state_dir = .*|state_dir = $full|" "$T/mfrd.conf" >"$T/full.conf"
"$PYTHON" -c 'import sqlite3, sys, time; c = sqlite3.connect(sys.argv[1]); c.execute("select count(*) from poisoned_pages").fetchone(); open(sys.argv[2], "w").close(); time.sleep(900)' \
	"$full/mfrd.db" "$T/held" &
holder=$!
wait_file "$T/held"
cat /dev/zero >"$full/filler" 2>/dev/null
check "full: premise: nothing left on the state directory" \
	bash -c "[ \$(stat -f -c %a '$full') = 0 ]"
start_full() {
	"$mfrd" --config "$T/full.conf" --rules-dir "$T/rules" >>"$log" 2>&1 &
	mfrd_pid=$!
}
: >"$T/notify"
start_full
check "full: READY, the store open" wait_until 60 notified '^READY=1'
full_pid=$mfrd_pid
"$script" guest-ram-full 1 poison:5 "ready:$T/fullw" "wait:$T/fullw-go" close >/dev/null &
fullw=$!
wait_file "$T/fullw"
read -r _ _ full_ino <"$T/fullw"
standin_has() { # the stand-in in the runtime directory has the page
	local f
	for f in "$T"/run/store-standin-*.db; do
		[ -e "$f" ] && "$PYTHON" -c 'import sqlite3, sys; sys.exit(0 if sqlite3.connect(sys.argv[1], timeout=10).execute("select count(*) from poisoned_pages where inode = ? and boot_id = ?", (int(sys.argv[2]), sys.argv[3])).fetchone()[0] == 1 else 1)' "$f" "$full_ino" "$boot" && return 0
	done
	return 1
}
check "full: the page poisoned on the full disk is recorded aside (runtime stand-in)" \
	wait_until 60 standin_has
check "full: mfrd did not exit (same pid), STATUS says where the records are" \
	bash -c "kill -0 $full_pid && grep -q 'store file not usable, records kept in $T/run/store-standin' '$T/notify'"
kill -TERM "$mfrd_pid"; wait "$mfrd_pid"
: >"$T/notify"
start_full
check "full: a restart on the still-full disk is READY (no exit before it)" \
	wait_until 60 notified '^READY=1'
check "... still running, the page still aside" bash -c "kill -0 $mfrd_pid" && check "... (stand-in)" standin_has
rm -f "$full/filler"
in_file() { "$PYTHON" -c 'import sqlite3, sys; sys.exit(0 if sqlite3.connect(sys.argv[1], timeout=10).execute("select count(*) from poisoned_pages where inode = ? and boot_id = ?", (int(sys.argv[2]), sys.argv[3])).fetchone()[0] == 1 else 1)' "$full/mfrd.db" "$full_ino" "$boot"; }
check "full: room again, the page is in the store file" wait_until 60 in_file
touch "$T/fullw-go"
wait "$fullw"
stop_mfrd
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
umount "$full"

section boot offlining
# ---- boot offlining: pfns "of an earlier boot" (one poisoned already,
# one free page, one that does not exist) are offlined once per boot
poisoned_pfn=$(sql "SELECT pfn FROM poisoned_pages LIMIT 1")
free_pfn=$("$PYTHON" - <<'PY'
import struct
# A free buddy page above 1 GiB, not poisoned.  kpageflags is read in
# multiples of 8 bytes or not at all.
BUDDY, HWPOISON, CHUNK = 1 << 10, 1 << 19, 65536
with open('/proc/kpageflags', 'rb', buffering=0) as f:
    pfn = 0x40000
    f.seek(8 * pfn)
    while data := f.read(8 * CHUNK):
        for i, flags in enumerate(struct.unpack(f'{len(data) // 8}Q', data)):
            if flags & BUDDY and not flags & HWPOISON:
                print(pfn + i)
                raise SystemExit
        pfn += len(data) // 8
PY
)
bogus_pfn=$((1 << 40))
"$PYTHON" -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2]); c.commit()' "$db" \
	"INSERT INTO poisoned_pages (boot_id, pfn, state, first_seen_usec, last_update_usec) VALUES ('earlier', $poisoned_pfn, 'offlined', 1, 1), ('earlier', $free_pfn, 'kept', 1, 1), ('earlier', $bogus_pfn, 'kept', 1, 1)"
rm -f "$T/state/recorded-pfns-offlined"	# as if this were the next boot
before=$(grep -c 'MESSAGE_ID=d9463ef76f3d458c937ec83dd6fb5712' "$log")
start_mfrd
check "boot offlining before READY: offlined 1, already 1, failed 1" \
	wait_until 30 logged "MESSAGE_ID=d9463ef76f3d458c937ec83dd6fb5712 MFR_OFFLINED=1 MFR_ALREADY=1 MFR_FAILED=1 MFR_FAILED_PFNS=0x$(printf %x $bogus_pfn)"
hwpoisoned() { "$PYTHON" -c 'import struct, sys; f = open("/proc/kpageflags", "rb"); f.seek(8 * int(sys.argv[1])); sys.exit(0 if struct.unpack("Q", f.read(8))[0] & (1 << 19) else 1)' "$1"; }
check "the free pfn $free_pfn is hwpoisoned now" hwpoisoned "$free_pfn"
wait_until 30 notified '^READY=1'
stop_mfrd
start_mfrd
wait_until 30 logged 'offlined in this boot already'
check "a restart in the same boot does not offline again" \
	test "$(grep -c 'MESSAGE_ID=d9463ef76f3d458c937ec83dd6fb5712' "$log")" = $((before + 1))
stop_mfrd
check "--check: a good configuration exits 0" "$mfrd" --config "$T/mfrd.conf" --rules-dir "$T/rules" --check
check "usage error exits 2" bash -c "'$mfrd' --frobnicate 2>/dev/null; [ \$? = 2 ]"

section end
cp "$log" "$out.mfrd.log"
echo "# this output: $out.out, mfrd's log: $out.mfrd.log"
finish
