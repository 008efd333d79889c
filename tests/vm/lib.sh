# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the VM tests (run as root inside the guest by vm/suite.sh).
# MFR_ROOT and MFR_KSRC (linux-source tree for the YNL CLI) come from there.

PYTHON=${PYTHON:-/usr/bin/python3}
SPEC=$MFR_ROOT/module/mfr.yaml
failures=0

pass() { echo "ok - $*"; }
fail() {
	echo "not ok - $*"
	failures=$((failures + 1))
}
# check DESCRIPTION COMMAND...: run COMMAND, record ok/not ok.
check() {
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
finish() { [ "$failures" = 0 ]; }

# The kernel's YNL CLI driving the family through module/mfr.yaml.  The
# spec is validated against the genetlink schema once (t-nl-ops and the
# code generator): validating it on every call costs seconds under TCG.
ynl() {
	"$PYTHON" "$MFR_KSRC/tools/net/ynl/cli.py" --spec "$SPEC" --no-schema "$@"
}

# Value of one counter of the status reply ("" if the call failed), by
# its spec name.  Through mfrctl stats: under TCG with the debug kernel a
# call of the YNL CLI (Python, the spec parsed each time) takes 20-30 s,
# mfrctl about 1 s, and the keep tests make several each.  t-nl-ops and
# t-status drive the status through the YNL CLI itself.
MFRCTL=$MFR_ROOT/build/daemon/mfrctl
status_attr() {
	"$MFRCTL" stats 2>/dev/null | stats_value "$1"
}
# del_all_rules: the module's rule table emptied, whoever filled it.
del_all_rules() {
	local id
	for id in $("$MFRCTL" -j rules list | "$PYTHON" -c 'import json, sys; print(*[r["id"] for r in json.load(sys.stdin)])'); do
		"$MFRCTL" rules del "$id"
	done
}
# stats_value KEY: its value in mfrctl stats output on stdin.
stats_value() { awk -v k="$1" '$1 == k { print $2 }'; }

module_loaded() { [ -d /sys/module/mfr ]; }

# The pool's counters agree: vm.nr_hugepages (the default size's
# persistent pool) with HugePages_Total less HugePages_Surp (a surplus
# page, in use or not freed yet, is in the total only), and for every
# size the pool and its surplus with the sums over the nodes.  Prints
# what disagrees.
pool_consistent() {
	local bad=0 sz dir total surp nodes_total nodes_surp
	read -r total surp < <(awk '/^HugePages_Total:/ { t = $2 } /^HugePages_Surp:/ { s = $2 } END { print t, s }' /proc/meminfo)
	if [ "$(cat /proc/sys/vm/nr_hugepages)" != $((total - surp)) ]; then
		echo "vm.nr_hugepages $(cat /proc/sys/vm/nr_hugepages) != HugePages_Total $total - HugePages_Surp $surp"
		bad=1
	fi
	for dir in /sys/kernel/mm/hugepages/hugepages-*; do
		sz=${dir##*/}
		total=$(cat "$dir/nr_hugepages")
		surp=$(cat "$dir/surplus_hugepages")
		nodes_total=$(cat /sys/devices/system/node/node*/hugepages/"$sz"/nr_hugepages | awk '{ s += $1 } END { print s }')
		nodes_surp=$(cat /sys/devices/system/node/node*/hugepages/"$sz"/surplus_hugepages | awk '{ s += $1 } END { print s }')
		if [ "$total" != "$nodes_total" ] || [ "$surp" != "$nodes_surp" ]; then
			echo "$sz: pool $total surplus $surp, nodes $nodes_total surplus $nodes_surp"
			bad=1
		fi
	done
	return $bad
}

# The hugepage size (2M or 1G) to sysfs directory name.
hugepages_dir() {
	case $1 in
	2M) echo /sys/kernel/mm/hugepages/hugepages-2048kB ;;
	1G) echo /sys/kernel/mm/hugepages/hugepages-1048576kB ;;
	esac
}

# node_pool NODE SIZE FILE: a per-node pool counter (nr_hugepages,
# free_hugepages, surplus_hugepages); set_node_pool NODE SIZE COUNT.
node_pool() {
	cat "/sys/devices/system/node/node$1/hugepages/$(basename "$(hugepages_dir "$2")")/$3"
}
# node_pools_2m FILE: that counter of the 2 MiB pools of nodes 0 and 1.
node_pools_2m() {
	echo "$(node_pool 0 2M "$1") $(node_pool 1 2M "$1")"
}
set_node_pool() {
	echo "$3" >"/sys/devices/system/node/node$1/hugepages/$(basename "$(hugepages_dir "$2")")/nr_hugepages"
}

# A free 1 GiB page for the next test, allocated at run time if the pool
# has none: the HVO boot gets its 1 GiB pages this way (Debian 6.12.117's
# HVO of boot-time gigantic pages warns under DEBUG_VM, see README).
one_free_1g_page() {
	local dir
	dir=$(hugepages_dir 1G)
	[ "$(cat "$dir/free_hugepages")" -gt 0 ] && return 0
	echo $(($(cat "$dir/nr_hugepages") + 1)) >"$dir/nr_hugepages"
	[ "$(cat "$dir/free_hugepages")" -gt 0 ]
}

# kept_helper SIZE HELPER: run a helper that poisons one page of a kept
# memfd of that hugepage size by MADV_HWPOISON and closes it (kept_access,
# kept_uffd), then check the hugepage was offlined.
kept_helper() {
	local size=$1 helper=$2 before
	[ "$size" != 1G ] || check "a free 1 GiB page" one_free_1g_page
	before=$(./status-value folios-offlined)
	check "$helper $size madvise" "$MFR_ROOT/build/helpers/$helper" "$size" madvise
	check "status after close: offlined, nothing kept or pending" ./expect-status \
		memfds-kept=0 raw-pages-kept=0 folios-pending=0 folios-offlined=$((before + 1))
	check "pool counters agree after release" pool_consistent
}

# kselftest_hugetlb_mfr VARIANT...: the series' selftest (patch 0024) with
# mfr.ko, where each VARIANT named must have run, not skipped; then without
# mfr.ko, where it must skip (exit 4, KSFT_SKIP).
kselftest_hugetlb_mfr() {
	local bin=$MFR_ROOT/build/kselftest/mm/hugetlb-mfr out rc v
	out=$("$bin" 2>&1)
	rc=$?
	check "hugetlb-mfr with mfr.ko (exit $rc)" test "$rc" = 0
	for v in "$@"; do
		# TAP: "ok N hugetlb_mfr.VARIANT.keep_and_release", no "# SKIP".
		check "hugetlb-mfr: $v ran and passed" \
			grep -qE "^ok [0-9]+ hugetlb_mfr\.$v\.keep_and_release\$" <<<"$out"
	done
	[ "$failures" = 0 ] || echo "$out" | tail -n 30
	check "rmmod mfr" rmmod mfr
	"$bin" >/dev/null 2>&1
	rc=$?
	check "insmod mfr.ko again" insmod "$MFR_ROOT/module/mfr.ko"
	check "hugetlb-mfr without mfr.ko skips (exit 4, got $rc)" test "$rc" = 4
}

# keep_scenario SIZE NPAGES INJECT RELEASE: run keep_hwpoison (see
# tests/helpers/keep_hwpoison.c) with the module's view checked while the
# memfd lives (counters, unload refused) and after the release.
keep_scenario() {
	local size=$1 npages=$2 inject=$3 release=$4 before hold
	modprobe hwpoison_inject
	[ "$size" != 1G ] || check "a free 1 GiB page" one_free_1g_page
	before=$(./status-value folios-offlined)
	hold="./expect-status memfds-kept=1 raw-pages-kept=$npages folios-pending=0"
	hold+=" && ! rmmod mfr 2>/dev/null"
	check "keep_hwpoison $size $npages $inject $release" \
		"$MFR_ROOT/build/helpers/keep_hwpoison" "$size" "$npages" "$inject" \
		"$release" "cd $PWD && $hold"
	check "status after release" ./expect-status memfds-kept=0 raw-pages-kept=0 \
		folios-pending=0 folios-offlined=$((before + 1))
	check "pool counters agree after release" pool_consistent
}

# kernel_func_range NAME...: the running kernel's text range "START END"
# (hex) of the first of the named functions the build kept out of line,
# from the build's System.map moved by the KASLR offset of _stext: sorting
# /proc/kallsyms of this debug kernel takes minutes under TCG.  For the
# stack filters of fault injection (require-start, require-end).
kernel_func_range() {
	local map=$MFR_KDIR/System.map run built off start end names
	names=" $* "
	run=$(grep -m1 ' _stext$' /proc/kallsyms | cut -d' ' -f1)
	built=$(grep -m1 ' _stext$' "$map" | cut -d' ' -f1)
	off=$((0x$run - 0x$built))
	read -r start end < <(awk -v names="$names" '
		found { print start, $1; exit }
		index(names, " " $3 " ") { found = 1; start = $1 }' "$map")
	[ -n "$end" ] && printf '%x %x\n' $((0x$start + off)) $((0x$end + off))
}

# notify_listener SOCKET LOG: a systemd notify socket of our own; each
# datagram becomes a line of LOG, "SECONDS-SINCE-START MSG|MSG".  Sets
# $listener to its pid.
notify_listener() {
	"$PYTHON" - "$1" >"$2" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
t0 = time.monotonic()
while True:
    m = s.recv(4096).decode().replace('\n', '|')
    print('%.3f %s' % (time.monotonic() - t0, m), flush=True)
PY
	listener=$!
	for _ in $(seq 100); do [ -S "$1" ] && break; sleep 0.1; done
}

# failslab for the atomic allocations of the tasks marked make-it-fail
# (inherited by their threads), under memory_failure() only: the first is
# the entry of a hugepage's list of poisoned base pages.  failslab_setup
# (disarmed, returns 1 if memory_failure is not in System.map),
# failslab_arm (fail the next one), failslab_disarm, failslab_reset.
FAILSLAB=/sys/kernel/debug/failslab
failslab_setup() {
	local start end
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	read -r start end < <(kernel_func_range memory_failure)
	[ -n "$end" ] || return 1
	echo 0 >"$FAILSLAB/verbose"
	echo Y >"$FAILSLAB/ignore-gfp-wait"
	echo Y >"$FAILSLAB/task-filter"
	echo "0x$start" >"$FAILSLAB/require-start"
	echo "0x$end" >"$FAILSLAB/require-end"
	echo 0 >"$FAILSLAB/probability"
}
failslab_arm() { echo 1 >"$FAILSLAB/times" && echo 100 >"$FAILSLAB/probability"; }
failslab_disarm() { echo 0 >"$FAILSLAB/probability"; }
failslab_injected() { [ "$(cat "$FAILSLAB/times")" = 0 ]; }
failslab_reset() {
	echo 0 >"$FAILSLAB/probability"
	echo N >"$FAILSLAB/task-filter"
	echo N >"$FAILSLAB/ignore-gfp-wait"
	echo 0 >"$FAILSLAB/require-start"
	echo 0xffffffffffffffff >"$FAILSLAB/require-end"
}
# wait_until SECONDS COMMAND...: until COMMAND succeeds, polled every 0.2 s.
wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
}
# wait_file FILE: up to 60 s for a helper to create FILE.
wait_file() {
	local _
	for _ in $(seq 600); do [ -e "$1" ] && return 0; sleep 0.1; done
	return 1
}
# untracked_said: how often mfr.ko said it was told of an untracked error.
untracked_said() { dmesg | grep -c 'the kernel lost track of which pages of its hugepage are'; }
# vmstat KEY: a /proc/vmstat counter; memmap_pages: the struct pages' own
# pages (HVO frees some of them).
vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
memmap_pages() { echo $(($(vmstat nr_memmap_pages) + $(vmstat nr_memmap_boot_pages))); }
# hugepages_in_block BLOCK [free]: how many hugepages (HugeTLB heads) start
# in that memory block; with "free", only those with refcount 0 and not
# poisoned.  By /proc/kpageflags and /proc/kpagecount.
hugepages_in_block() {
	python3 - "$1" "$((0x$(cat /sys/devices/system/memory/block_size_bytes) / 4096))" "${2:-}" <<'PY'
import struct, sys
block, n, free = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == 'free'
huge, head, poison = 1 << 17, 1 << 15, 1 << 19
with open('/proc/kpageflags', 'rb') as f, open('/proc/kpagecount', 'rb') as c:
    f.seek(block * n * 8)
    c.seek(block * n * 8)
    flags = struct.unpack(f'{n}Q', f.read(n * 8))
    counts = struct.unpack(f'{n}Q', c.read(n * 8))
print(sum(1 for fl, cnt in zip(flags, counts) if fl & huge and fl & head and
          (not free or (not fl & poison and cnt == 0))))
PY
}
free_in_block() { hugepages_in_block "$1" free; }
