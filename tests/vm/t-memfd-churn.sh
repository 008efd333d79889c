# SPDX-License-Identifier: GPL-2.0-or-later
# Unprivileged opt-in cannot exhaust the host: any user may create
# MFD_MF_KEEP_UE_MAPPED memfds, so
#  1. the notifications one user causes are rate limited (module
#     parameters event_rate, event_burst), and what is not sent is counted
#     in status events-suppressed: exactly, sent + suppressed = caused;
#  2. 10 000 create/close cycles of flagged memfds as nobody, with a
#     listener on "events", leave slab usage flat: the module's records
#     (cache mfr_memfd) back to their count, the kernel's Slab total within
#     CHURN_SLAB_SLACK_KB (default 2048) once KASAN's quarantine is
#     flushed, and kmemleak finds nothing.
# CHURN_CYCLES changes the 10 000: a leak of the 455 bytes a record takes
# would pass the slack after about 4 600 (any leak of 210 bytes or more a
# cycle passes it in 10 000), and the record count catches one record;
# 100 000 (the figures in the README) take 10 minutes here.
. ./lib.sh

churn=$MFR_ROOT/build/helpers/memfd_churn
cycles=${CHURN_CYCLES:-10000}
slack=${CHURN_SLAB_SLACK_KB:-2048}
kmemleak=/sys/kernel/debug/kmemleak
params=/sys/module/mfr/parameters
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)

# 1. The rate limit, with small limits to see it act quickly.
rate_before=$(cat "$params/event_rate") burst_before=$(cat "$params/event_burst")
echo 20 >"$params/event_rate"
echo 50 >"$params/event_burst"
check "rate limit: nobody's 1000 create/close cycles, sent + suppressed = 2000, sent <= 50 + 20/s" \
	"$PYTHON" - "$MFR_KSRC" "$SPEC" "$churn" <<'PY'
import socket, subprocess, sys, time
sys.path.insert(0, sys.argv[1] + '/tools/net/ynl')
from lib import YnlFamily
spec, churn = sys.argv[2], sys.argv[3]
status = lambda: YnlFamily(spec, '').do('status-get', {})
ynl = YnlFamily(spec, '')
# Room for every notification: none may be lost to an overrun here.
ynl.sock.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)   # SO_RCVBUFFORCE
ynl.ntf_subscribe('events')
before = status()['events-suppressed']
start = time.monotonic()
subprocess.run(['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups',
                churn, 'cycles', '1000', 'keep'], check=True, stdout=subprocess.DEVNULL)
secs = time.monotonic() - start
suppressed = status()['events-suppressed'] - before
ynl.check_ntf()
sent = sum(1 for ev in ynl.async_msg_queue
           if ev['name'] in ('memfd-kept-ntf', 'memfd-evicted-ntf')
           and ev['msg']['name'] == 'churn')
print(f'{secs:.1f} s: {sent} notifications sent, {suppressed} suppressed')
ok = sent + suppressed == 2000 and sent <= 50 + 20 * secs + 1 and suppressed > 0
sys.exit(0 if ok else 1)
PY
echo "$rate_before" >"$params/event_rate"
echo "$burst_before" >"$params/event_burst"

# 2. Slab usage over the churn.
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
leakcheck=
if [ -e "$kmemleak" ]; then
	# Objects younger than 5 s are never reported: age the previous test's.
	sleep 5
	echo scan >"$kmemleak" && echo clear >"$kmemleak" && leakcheck=1
fi
[ -n "$leakcheck" ] || fail "kmemleak scan and clear ($kmemleak)"

# Free what can be freed: reclaimable caches, RCU-deferred frees, and
# every cache's objects in KASAN's quarantine (shrinking a cache flushes
# them), so that Slab counts live objects only.
slab_settle() {
	local f
	sleep 1
	echo 3 >/proc/sys/vm/drop_caches
	for f in /sys/kernel/slab/*/shrink; do echo 1 >"$f" 2>/dev/null; done
}
slab_kb() { awk '/^Slab:/ { print $2 }' /proc/meminfo; }
records() { cut -d' ' -f1 /sys/kernel/slab/mfr_memfd/objects; }

check "no memfd kept before" ./expect-status memfds-kept=0
"${nobody[@]}" "$churn" cycles 2000 keep >/dev/null # warm the caches up
t=$SECONDS
slab_settle
echo "settling the slab caches took $((SECONDS - t)) s"
slab_before=$(slab_kb) records_before=$(records)

# A listener that never reads: notifications are built and dropped.
"$PYTHON" - "$MFR_KSRC" "$SPEC" <<'PY' &
import sys, time
sys.path.insert(0, sys.argv[1] + '/tools/net/ynl')
from lib import YnlFamily
YnlFamily(sys.argv[2], '').ntf_subscribe('events')
time.sleep(3600)
PY
listener=$!
sup_before=$(./status-value events-suppressed)
t=$SECONDS
out=$("${nobody[@]}" "$churn" cycles "$cycles" keep)
echo "$cycles cycles as nobody in $((SECONDS - t)) s: $out"
check "$cycles create/close cycles as nobody" [ -n "$out" ]
echo "events suppressed during the churn: $(($(./status-value events-suppressed) - sup_before))"
kill "$listener"
wait "$listener" 2>/dev/null
slab_settle
slab_after=$(slab_kb) records_after=$(records)
echo "Slab: $slab_before kB before, $slab_after kB after ($((slab_after - slab_before)) kB)"
echo "mfr_memfd objects: $records_before before, $records_after after"
check "no memfd kept after" ./expect-status memfds-kept=0
check "the module's records are all freed ($records_after, was $records_before)" \
	[ "$records_after" -le "$records_before" ]
check "Slab flat: grew $((slab_after - slab_before)) kB <= $slack kB" \
	[ $((slab_after - slab_before)) -le "$slack" ]

if [ -n "$leakcheck" ]; then
	echo scan >"$kmemleak"
	sleep 6
	echo scan >"$kmemleak"
	leaks=$(cat "$kmemleak")
	check "kmemleak reports nothing" [ -z "$leaks" ]
	echo "$leaks" | head -n 100
fi
finish
