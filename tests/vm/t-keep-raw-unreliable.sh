# SPDX-License-Identifier: GPL-2.0-or-later
# An error the kernel cannot record among a hugepage's poisoned base pages
# (the GFP_ATOMIC allocation in hugetlb_update_hwpoison() fails, so it no
# longer knows which of them are poisoned): the hugepage is not kept, or a
# kept one falls back to the default handling, and the module is told.
# Kept with its poisoned pages unknown, GUP and KVM would refuse every base
# page of it.  The failure is injected with failslab: the first atomic
# allocation of the poisoning thread under memory_failure().
#   first error untracked:  not kept, as stock: hugepage-sized SIGBUS,
#                           leaked after close;
#   second error untracked: the kept hugepage falls back (hugepage-sized
#                           SIGBUS, unmapped), then is leaked whole after
#                           close and reported offlined.
. ./lib.sh
script=$MFR_ROOT/build/helpers/memfd_script
pool=$(hugepages_dir 2M)/nr_hugepages
check "failslab set up under memory_failure()" failslab_setup

d=$(mktemp -d)
# Each untracked error is a page-untracked notification with its state;
# mfrd records it and says why.
"$MFRCTL" -j monitor >"$d/events" &
mon=$!
mkdir "$d/rules"
printf 'state_dir = %s\nready_timeout = 600\n' "$d/state" >"$d/mfrd.conf"
notify_listener "$d/notify.sock" "$d/notify"
NOTIFY_SOCKET=$d/notify.sock RUNTIME_DIRECTORY=$d "$MFR_ROOT/build/daemon/asan/mfrd" \
	--config "$d/mfrd.conf" --rules-dir "$d/rules" >"$d/mfrd.log" 2>&1 &
mfrd=$!
check "mfrd is READY" wait_until 120 grep -q READY=1 "$d/notify"

# --- the first error is untracked ---
echo $(($(cat "$pool") + 1)) >"$pool"
pool_before=$(cat "$pool")
said=$(untracked_said)
failslab_arm
# make-it-fail is inherited by the helper's threads.
sh -c "echo 1 >/proc/self/make-it-fail && exec $script --keep guest-ram-untracked-1 1 \
	poison:3 read:3 read:5 ready:$d/ready1 wait:$d/go1 close" >"$d/out1" &
helper=$!
check "first: the helper is ready" wait_file "$d/ready1"
failslab_disarm
check "first: a failure was injected under memory_failure()" failslab_injected
check "first: not kept, the poisoning thread got SIGBUS lsb 21" \
	grep -qx 'sigbus 3 code=AR lsb=21 exact=.' "$d/out1"
check "first: the whole hugepage is gone: a healthy word raises SIGBUS lsb 21" \
	grep -qx 'read 5 sigbus lsb=21' "$d/out1"
check "first: the module was told" test "$(untracked_said)" -gt "$said"
check "first: status, nothing kept" ./expect-status memfds-kept=1 raw-pages-kept=0
touch "$d/go1"
wait "$helper"
check "first: the helper ran its steps" test $? = 0
check "first: after close the hugepage is leaked, as stock leaks it" \
	test "$(cat "$pool")" = "$pool_before"
check "first: pool counters agree" pool_consistent

# --- the second error is untracked ---
echo $(($(cat "$pool") + 1)) >"$pool"
pool_before=$(cat "$pool")
offlined=$(./status-value folios-offlined)
leaked_before=$(dmesg | grep -c 'cannot be dissolved: all of it stays offline')
said=$(untracked_said)
sh -c "echo 1 >/proc/self/make-it-fail && exec $script --keep guest-ram-untracked-2 1 \
	poison:3 read:5 ready:$d/ready2 wait:$d/arm2 poison:7 read:5 read:9 \
	ready:$d/fell2 wait:$d/go2 close" >"$d/out2" &
helper=$!
check "second: the helper is ready" wait_file "$d/ready2"
check "second: first error kept, SIGBUS lsb 12" grep -qx 'sigbus 3 code=AR lsb=12 exact=1' "$d/out2"
check "second: a healthy word reads back" grep -qx 'read 5 ok' "$d/out2"
check "second: status, one page kept" ./expect-status memfds-kept=1 raw-pages-kept=1
failslab_arm
touch "$d/arm2"
check "second: the helper is past the second error" wait_file "$d/fell2"
failslab_disarm
check "second: a failure was injected under memory_failure()" failslab_injected
check "second: the hugepage fell back, the poisoning thread got SIGBUS lsb 21" \
	grep -qx 'sigbus 7 code=AR lsb=21 exact=.' "$d/out2"
check "second: and it is unmapped: healthy words raise SIGBUS lsb 21" \
	grep -qx 'read 9 sigbus lsb=21' "$d/out2"
check "second: the module was told" test "$(untracked_said)" -gt "$said"
check "second: status, nothing kept any more" ./expect-status memfds-kept=1 raw-pages-kept=0
touch "$d/go2"
wait "$helper"
check "second: the helper ran its steps" test $? = 0
cat "$d/out2"
for _ in $(seq 100); do
	[ "$(./status-value folios-pending)" = 0 ] && break
	sleep 0.2
done
check "second: released, leaked whole, and said so" test \
	"$(dmesg | grep -c 'cannot be dissolved: all of it stays offline')" -gt "$leaked_before"
check "second: status, offlined, nothing pending or kept" ./expect-status folios-pending=0 \
	memfds-kept=0 raw-pages-kept=0 folios-offlined=$((offlined + 1))
check "second: the pool is one lower" test "$(cat "$pool")" = $((pool_before - 1))
check "second: pool counters agree" pool_consistent
kill "$mon"
wait "$mon" 2>/dev/null
kill "$mfrd"
check "mfrd stopped cleanly" wait "$mfrd"
kill "$listener"
cat "$d/mfrd.log"
check "mfrd said it twice: the kernel lost track" \
	test "$(grep -Ec 'the kernel lost track of which pages of its .* hugepage are poisoned' "$d/mfrd.log")" = 2
check "mfrd's store: the first error's page fell back, the second's offlined with its hugepage" \
	"$PYTHON" -c '
import json, sqlite3, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
u = [e["pfn"] for e in evs if e["event"] == "page-untracked"]
rows = dict((r[0], r[1:]) for r in sqlite3.connect(sys.argv[2]).execute(
    "select pfn, memfd_name, state from poisoned_pages"))
print(u, rows)
sys.exit(0 if len(u) == 2 and rows.get(u[0]) == ("guest-ram-untracked-1", "fallback")
         and rows.get(u[1]) == ("guest-ram-untracked-2", "offlined") else 1)' "$d/events" "$d/state/mfrd.db"
check "page-untracked notifications: the first error's and the second's, state fallback" \
	"$PYTHON" -c '
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
u = [e for e in evs if e["event"] == "page-untracked"]
print(u)
sys.exit(0 if len(u) == 2 and all(e["state"] == "fallback" and e["pfn"] and e["folio_size"] == 2097152
                                  for e in u) else 1)' "$d/events"
check "rmmod mfr works" rmmod mfr
insmod "$MFR_ROOT/module/mfr.ko"
check "mfr loads again" module_loaded

failslab_reset
rm -rf "$d"
finish
