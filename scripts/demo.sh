#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The demo, run inside the VM by "make demo" (mfr.ko already loaded): mfrd
# opts a guest-RAM memfd in by rule, the workload survives an uncorrected
# error in one 4 KiB page, mfrctl, the journal, the store and the metrics
# report it, and closing the memfd returns all of the hugepage but that
# page to the allocator.
set -euo pipefail

B=$MFR_ROOT/build
ctl=$B/daemon/mfrctl
work=$(mktemp -d /tmp/mfr-demo.XXXXXX)
page_poisoned=eb5269e54a5a4debadd6ea2bba88f801	# MESSAGE_ID, daemon/mfrd.catalog

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
indent() { sed 's/^/  /'; }
wait_until() { # SECONDS COMMAND...
	local end=$((SECONDS + $1))
	shift
	until "$@" 2>/dev/null; do
		[ $SECONDS -lt $end ] || {
			echo "demo: timed out: $*" >&2
			cat "$work/mfrd.log" >&2 2>/dev/null
			exit 1
		}
		sleep 0.2
	done
}
meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
status() { "$ctl" -j status | "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }
PYTHON=/usr/bin/python3
for bin in "$B/daemon/mfrd" "$ctl"; do
	[ -x "$bin" ] || { echo "demo: $bin not built (make daemon)" >&2; exit 1; }
done

step "Patched kernel, mfr.ko loaded"
cat /proc/version
grep -o 'CONFIG_MFR_HOOKS=y' "$MFR_KDIR/.config"
grep '^mfr ' /proc/modules

# The VM has no systemd: start journald by hand so mfrd logs as on a host.
if [ ! -S /run/systemd/journal/socket ]; then
	mkdir -p /run/systemd/journal
	/lib/systemd/systemd-journald &
	wait_until 30 test -S /run/systemd/journal/socket
fi

step "mfrd with one rule: memfds named guest-ram* keep their hugepages"
mkdir -p "$work/rules.d" "$work/metrics"
cat >"$work/mfrd.conf" <<EOF
state_dir = $work/state
metrics_file = $work/metrics/mfr.prom
metrics_interval = 1
EOF
cat >"$work/rules.d/50-guests.conf" <<'EOF'
[rule]
name-glob = guest-ram*
action = keep
EOF
sed 's/^/  /' "$work/rules.d/50-guests.conf"
"$B/daemon/mfrd" --config "$work/mfrd.conf" --rules-dir "$work/rules.d" \
	>"$work/mfrd.log" 2>&1 &
mfrd=$!
trap 'kill $mfrd 2>/dev/null || true' EXIT
rule_pushed() { "$ctl" -j rules list | grep -q guest-ram; }
wait_until 60 rule_pushed
echo "\$ mfrctl rules list"
"$ctl" rules list | indent

step "A guest-RAM workload: 64 MiB of 2 MiB pages, 2 threads checking every word, one UE"
hp_total=$(meminfo HugePages_Total)
hwc_before=$(meminfo HardwareCorrupted)
"$B/helpers/guest_ram" --poison 5 --ready "$work/ran" --wait "$work/close" \
	guest-ram-vm1 64 6 >"$work/guest_ram.out" 2>&1 &
guest=$!
wait_until 120 test -e "$work/ran"
indent <"$work/guest_ram.out"
echo "  (MADV_HWPOISON of page 5, from the thread that owns it: an action-required error)"

step "mfrctl: the memfd, its owner, and the poisoned page"
echo "\$ mfrctl memfd list"
"$ctl" memfd list | indent
echo "\$ mfrctl poison list"
"$ctl" poison list | indent

step "The journal (mfrd, MESSAGE_ID per kind of event)"
journaled() { journalctl -q --no-pager MESSAGE_ID=$page_poisoned | grep -q .; }
wait_until 30 journaled
journalctl -q --no-pager -o short -t mfrd | indent
echo "\$ journalctl MESSAGE_ID=$page_poisoned -o verbose"
journalctl -q --no-pager -o verbose MESSAGE_ID=$page_poisoned |
	grep -E '^ +(MESSAGE|MFR_[A-Z_]+)=' | indent

step "Close the memfd: the hugepage is dissolved, only the bad 4 KiB stays offline"
touch "$work/close"
wait "$guest"
none_pending() { [ "$(status folios_pending)" = 0 ]; }
wait_until 60 none_pending
"$ctl" poison list | indent
hp_after=$(meminfo HugePages_Total)
hwc_after=$(meminfo HardwareCorrupted)
printf '  HugePages_Total     %4d -> %4d   (the damaged hugepage left the pool)\n' \
	"$hp_total" "$hp_after"
printf '  HardwareCorrupted %4d kB -> %d kB (offline: one 4 KiB page)\n' \
	"$hwc_before" "$hwc_after"
printf '  mfr counters: raw-pages-isolated=%s healthy-pages-returned=%s\n' \
	"$(status raw_pages_isolated)" "$(status healthy_pages_returned)"

step "mfrd's durable record (SQLite, WAL) and Prometheus metrics"
sleep 2
"$PYTHON" - "$work/state/mfrd.db" <<'PY' | indent
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
cols = "printf('%#x', pfn), memfd_name, pid, comm, printf('%#x', offset), state"
print("pfn        memfd          pid  comm       offset   state")
for r in db.execute(f"SELECT {cols} FROM poisoned_pages"):
    print("%-10s %-14s %-4s %-10s %-8s %s" % r)
PY
grep -E '^mfr_(poisoned_pages|raw_pages_isolated_total|healthy_pages_returned_total|memfds_kept)' \
	"$work/metrics/mfr.prom" | indent

kill -TERM "$mfrd"
wait "$mfrd" || true
trap - EXIT
echo
echo "demo: the workload kept its 64 MiB but 4 KiB through the error; mfr.ko, mfrctl,"
echo "      the journal, the store and the metrics all account for that one page."
