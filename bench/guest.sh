#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Runs inside a benchmark VM (bench/run.sh): every benchmark this kernel
# takes part in, as "kernel=K config=C <result>" lines appended to OUT.
#
#   guest.sh stock OUT   the kernel without the series
#   guest.sh mfr OUT     the kernel with it: P2 before mfr.ko is loaded,
#                        then everything with the module ($MFR_MODULE)
set -euo pipefail
role=$1
out=$2
bin=$MFR_ROOT/build/bench/bin
helpers=$MFR_ROOT/build/helpers
ncpus=$(nproc)
P2_SECONDS=${P2_SECONDS:-0.3}
P2_RUNS=${P2_RUNS:-4}
P3_RUNS=${P3_RUNS:-5}
P5_SECONDS=${P5_SECONDS:-8}
P7_SECONDS=${P7_SECONDS:-0.3}
P7_RUNS=${P7_RUNS:-4}
P8_ROUNDS=${P8_ROUNDS:-21}
P9_SECONDS=${P9_SECONDS:-0.3}
P9_RUNS=${P9_RUNS:-5}
# To try a part alone: BENCH_PARTS="p3 p4", BENCH_P1_SIZES=2M.
BENCH_PARTS=${BENCH_PARTS:-p1 p2 p3 p4 p5 p7 p8 p9}
BENCH_P1_SIZES=${BENCH_P1_SIZES:-2M 1G}
part() { [[ " $BENCH_PARTS " == *" $1 "* ]]; }

# Which boot of this kernel this is (bench/run.sh boots each several times
# for P2, whose fork loop moves with the state of a boot).
BENCH_BOOT=${BENCH_BOOT:-0}

# emit CONFIG COMMAND...: the command's result lines, labelled.
emit() {
	local config=$1
	shift
	"$@" | sed "s/^/kernel=$role config=$config boot=$BENCH_BOOT /" | tee -a "$out"
}

# One instance, then two: the VMs have one vCPU (see run.sh), so the
# second figure measures two loops sharing it, not two vCPUs.  With
# address-space randomisation off (setarch -R): a fork copies and frees
# the page tables of the whole process, and how many there are depends
# on where ASLR put its mappings, which moved the fork loop by up to 6 %
# from one process to the next (3175-3372 forks/s over 9 runs in one
# boot; 3436-3445 without ASLR).
p2() { # CONFIG [keep]
	local w n
	for w in fault fork both; do
		for n in 1 2; do
			emit "$1" setarch "$(uname -m)" -R \
				"$bin/p2_hugetlb_faults" "$w" "$n" "$P2_SECONDS" "$P2_RUNS" ${2:-}
		done
	done
}

# P7: GUP over a 1 GiB page, O_DIRECT reads and io_uring registrations.
# First in each VM, while the 1 GiB pool is whole.
p7() { # CONFIG [keep [poison]]
	local config=$1 m
	shift
	for m in odirect register; do
		emit "$config" setarch "$(uname -m)" -R \
			"$bin/p7_gup" "$m" "$P7_SECONDS" "$P7_RUNS" "$@"
	done
}

# P8: a flagged memfd's create and close with 10 000 flagged memfds open
# and with none, as nobody: each batch of 100 is timed against a batch of
# plain HugeTLB memfds (which mfr.ko does not track) right after it
# (memfd_churn timing).  One line per number open.
p8() {
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$helpers/memfd_churn" timing 10000 100 "$P8_ROUNDS" | awk -F= '
		{
			n = $1; sub(/.*_/, "", n)
			k = $1; sub(/_[0-9]+$/, "", k)
			v[n] = v[n] " " k "=" $2
		}
		END { for (n in v) print "p8 open=" n v[n] }'
}

p1() { # CONFIG MODE
	local size e
	for size in $BENCH_P1_SIZES; do
		for e in 1 8; do
			emit "$1" "$bin/p1_memory_cost" "$size" "$e" "$2"
		done
	done
}

# P5: 64 MiB of guest RAM, 2 threads, one error half way.  Without mfr
# the VMM maps 4 KiB pages over the hugepage it lost.
p5() { # CONFIG guest_ram-options...
	local config=$1
	shift
	"$helpers/guest_ram" "$@" --threads 2 --poison 1000 bench-ram 64 "$P5_SECONDS" |
		awk -v k="$role" -v c="$config" '
			/^lost/ { lost = $2 }
			/^replaced/ { replaced = $2 }
			/wrong$/ { wrong = $(NF - 1) }
			/^throughput/ { before = $2; after = $(NF - 1) }
			END { printf "kernel=%s config=%s p5 before=%s after=%s lost_kib=%s replaced_kib=%s wrong=%s\n",
			      k, c, before, after, lost, replaced + 0, wrong }' | tee -a "$out"
}

modprobe hwpoison_inject
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
echo "# kernel=$role $(uname -r), $ncpus vCPUs" >>"$out"

if [ "$role" = stock ]; then
	part p7 && p7 stock
	part p2 && p2 stock
	part p1 && p1 stock default
	part p5 && p5 stock --replace
	exit 0
fi

# P2's configurations of this kernel in alternating order from boot to
# boot: module loaded first in odd boots, so that neither is always
# measured on the fresher boot.
if part p2 && [ $((BENCH_BOOT % 2)) = 1 ]; then
	insmod "$MFR_MODULE"
	p2 module
	p2 keep keep
	rmmod mfr
	p2 hooks
	insmod "$MFR_MODULE"
else
	part p7 && p7 hooks
	part p2 && p2 hooks
	insmod "$MFR_MODULE"
	part p7 && p7 module
	part p7 && p7 keep keep
	part p7 && p7 keep-poisoned keep poison
	part p2 && p2 module
	part p2 && p2 keep keep
fi
part p1 && p1 module default
part p1 && p1 keep keep
# P9: futexes and vCPU loads of processes that have nothing to do with a
# kept poisoned page elsewhere, and a guest's reads over its own kept
# hugepage with a poisoned page, split to 4 KiB in stage 2.
if part p9; then
	modprobe kvm_amd
	for b in futex vcpu stage2; do
		emit module "$bin/p9_kept_elsewhere" "$b" "${P9_SECONDS:-0.3}" "${P9_RUNS:-5}"
	done
fi
# 10 000 memfds and a batch: the limit raised before dropping privileges.
part p8 && (ulimit -Hn 65536 && ulimit -Sn 65536 && emit keep p8)

# P3: release cost, kept memfds (1 GiB: one run per count, a page each),
# and the reference: a healthy hugepage dissolved to the allocator.
part p3 && for n in 0 0 0 1 8 64 512 shrink; do
	emit keep "$bin/p3_release_cost" 1G "$n"
done
part p3 && for r in $(seq "$P3_RUNS"); do
	for n in 0 1 8 64 511 shrink; do
		emit keep "$bin/p3_release_cost" 2M "$n"
	done
done

# The storm starts once mfrd has started: its rule pushed and its first
# dump of the module's records reconciled (the earlier parts left
# thousands), so that every storm error reaches it as an event, not in
# that dump.  p4_storm passes mfrd's other log lines on to $T/mfrd.log.
p4_go_when_started() {
	local i
	for i in $(seq 1500); do
		grep -q 'started: ' "$T/mfrd.log" && break
		sleep 0.2
	done
	grep -q 'started: ' "$T/mfrd.log" ||
		{ echo "bench: mfrd did not start within 300 s" >&2; cat "$T/mfrd.log" >&2; return 1; }
	"$MFR_ROOT/build/daemon/mfrctl" -j rules list | grep -q bench-storm
	touch "$T/go"
}

# P4: mfrd opts the storm's memfds in by rule and persists every report.
p4() {
	T=$(mktemp -d)
	mkdir "$T/rules"
	# Every report logged (no rate limit): the log times the report path.
	printf 'state_dir = %s/state\nmetrics_file = none\nlog_rate_limit_burst = 0\n' "$T" >"$T/mfrd.conf"
	printf '[rule]\nname-glob = bench-storm-*\naction = keep\n' >"$T/rules/10-storm.conf"
	mkfifo "$T/log"
	"$bin/p4_storm" "$T/log" "$T/go" 4 5 10000 >"$T/p4" 2>"$T/mfrd.log" &
	storm=$!
	"$MFR_ROOT/build/daemon/mfrd" --config "$T/mfrd.conf" --rules-dir "$T/rules" 2>"$T/log" &
	mfrd=$!
	p4_go_when_started
	until [ -s "$T/p4" ]; do sleep 1; done
	# Earlier parts left offlined records; the storm's pages are kept.
	module=$("$MFR_ROOT/build/daemon/mfrctl" -j poison list |
		python3 -c 'import json, sys; print(sum(e["state"] == "kept" for e in json.load(sys.stdin)))')
	rm "$T/go"
	wait "$storm" || true
	kill -TERM "$mfrd"
	wait "$mfrd" || true
	persisted=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(
		"SELECT count(DISTINCT pfn) FROM poisoned_pages WHERE memfd_name LIKE ?",
		("bench-storm-%",)).fetchone()[0])' "$T/state/mfrd.db")
	grep '^p4 ' "$T/p4" |
		sed "s/\$/ module_records=$module persisted=$persisted/; s/^/kernel=$role config=keep /" | tee -a "$out"
	cat "$T/mfrd.log" >&2
	rm -rf "$T"
}

# P4, bounded: the same storm (smaller: the pool lost P4's hugepages)
# with the journal rate limit at its default and an events log of at most
# 500 rows: every page record persisted, the events log bounded, the
# journal entries left out counted.
p4_bounded() {
	local errors=2000 persisted module i
	T=$(mktemp -d)
	mkdir "$T/rules"
	printf 'state_dir = %s/state\nmetrics_file = %s/mfr.prom\nmetrics_interval = 1\nevents_max_rows = 500\n' \
		"$T" "$T" >"$T/mfrd.conf"
	printf '[rule]\nname-glob = bench-storm-*\naction = keep\n' >"$T/rules/10-storm.conf"
	mkfifo "$T/log"
	"$bin/p4_storm" "$T/log" "$T/go" 2 2 "$errors" 0 >"$T/p4" 2>"$T/mfrd.log" &
	storm=$!
	"$MFR_ROOT/build/daemon/mfrd" --config "$T/mfrd.conf" --rules-dir "$T/rules" 2>"$T/log" &
	mfrd=$!
	p4_go_when_started
	until [ -s "$T/p4" ]; do sleep 1; done
	store_count() {
		python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1], timeout=10).execute(
			"SELECT count(DISTINCT pfn) FROM poisoned_pages WHERE memfd_name LIKE ?",
			("bench-storm-%",)).fetchone()[0])' "$T/state/mfrd.db"
	}
	for i in $(seq 600); do
		[ "$(store_count)" -ge "$errors" ] && break
		sleep 0.2
	done
	sleep 3	# a retention pass and a metrics write after the last event
	module=$("$MFR_ROOT/build/daemon/mfrctl" -j poison list |
		python3 -c 'import json, sys; print(sum(e["state"] == "kept" for e in json.load(sys.stdin)))')
	persisted=$(store_count)
	metric() { sed -n "s/^$1 //p" "$T/mfr.prom"; }
	rows=$(metric mfrd_events_rows)
	pruned=$(metric mfrd_events_pruned_total)
	suppressed=$(metric mfrd_journal_suppressed_total)
	rm "$T/go"
	wait "$storm" || true
	logged=$(sed -n 's/^p4end log_lines=//p' "$T/p4")
	echo "p4bounded memfds=2 errors=$errors module_records=$module persisted=$persisted" \
		"events_max_rows=500 events_rows=$rows events_pruned=$pruned" \
		"journal_logged=$logged journal_suppressed=$suppressed" |
		sed "s/^/kernel=$role config=keep /" | tee -a "$out"
	kill -TERM "$mfrd"
	wait "$mfrd" || true
	cat "$T/mfrd.log" >&2
	rm -rf "$T"
}

part p4 && p4
part p4 && p4_bounded
part p5 && p5 keep --keep
# A part left out (BENCH_PARTS) must not make the last test fail the VM.
exit 0
