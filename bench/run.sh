#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make bench: the benchmark kernels with and without the series (built
# once, cached), mfr.ko for the first, the benchmark programs, then one VM
# per kernel under QEMU TCG with -icount shift=0,sleep=off (the guest
# clock advances 1 ns per guest instruction, so rates are per instruction
# executed and repeat to well under 1 %), and bench/RESULTS.md from what
# both VMs printed.  BENCH_QUICK=1 runs everything briefly, to try the
# machinery; its numbers are not worth keeping.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$MFR_ROOT"

started=$(date -u '+%Y-%m-%d %H:%M UTC')
t0=$SECONDS
kernels=$(bench/kernels.sh)
mfr_kdir=$(sed -n 's/^mfr //p' <<<"$kernels")
stock_kdir=$(sed -n 's/^stock //p' <<<"$kernels")

# mfr.ko for the benchmark kernel, apart from the test kernel's.
mod=$MFR_ROOT/build/bench/module
module_source_copy "$mod"
make -s -C "$mfr_kdir" M="$mod" modules >&2

bin=$MFR_ROOT/build/bench/bin
mkdir -p "$bin"
for p in p1_memory_cost p2_hugetlb_faults p3_release_cost p4_storm p7_gup p9_kept_elsewhere; do
	libs=-lpthread
	[ "$p" != p7_gup ] || libs="$libs -luring"
	${CC:-cc} -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE -Itests/helpers \
		-o "$bin/$p" "bench/$p.c" $libs
done

if [ -n "${BENCH_QUICK:-}" ]; then
	export P2_SECONDS=0.2 P2_RUNS=2 P3_RUNS=1 P5_SECONDS=2 P7_SECONDS=0.05 P7_RUNS=2 P8_ROUNDS=3 P9_SECONDS=0.05 P9_RUNS=2 BENCH_P2_BOOTS=2
fi
res=$MFR_ROOT/build/bench
rm -f "$res"/results-*.txt
# -cpu max: SVM with nested paging, for P9's KVM guest (both VMs alike, so
# that the kernels are all that differs).
icount="-icount shift=0,sleep=off -cpu max"

# The two VMs run side by side: under -icount what one measures does not
# depend on what else the host runs, only how long it takes.  One vCPU
# each: with two, -icount runs them round-robin in one host thread
# anyway, and a sleeping task on the idle vCPU sometimes never woke up.
# Both VMs get the same memory and hugepage pools, so that the kernels
# are all that differs.  1 GiB pages: the VM with the series uses all 12
# (P1 leaks 2 and dissolves 2, P3 reuses 1 and dissolves 5), and two more
# for P7, which dissolves the one it poisons in each of its two modes.
vm_mem=15G
vm_append="hugepagesz=1G hugepages=12 hugepagesz=2M hugepages=128"

# bench_boot BOOT PARTS: one VM per kernel, side by side, running PARTS;
# results appended to results-{stock,mfr}.txt.
bench_boot() {
	local boot=$1 parts=$2 stock_vm mfr_vm rc=0
	echo "bench: boot $boot ($parts): the kernel without the series ($stock_kdir)" >&2
	KDIR=$stock_kdir VM_NO_MODULE=1 VM_CPUS=1 VM_MEM=$vm_mem VM_TIMEOUT=5400 VM_QEMU_OPTS=$icount \
		VM_APPEND=$vm_append \
		scripts/vm-run.sh "BENCH_BOOT=$boot BENCH_PARTS='$parts' P2_SECONDS=${P2_SECONDS:-} \
			P2_RUNS=${P2_RUNS:-} P5_SECONDS=${P5_SECONDS:-} \
			P7_SECONDS=${P7_SECONDS:-} P7_RUNS=${P7_RUNS:-} $MFR_ROOT/bench/guest.sh stock $res/results-stock.txt" >"$res/vm-stock-$boot.log" 2>&1 &
	stock_vm=$!

	echo "bench: boot $boot ($parts): the kernel with the series ($mfr_kdir)" >&2
	KDIR=$mfr_kdir VM_NO_MODULE=1 VM_CPUS=1 VM_MEM=$vm_mem VM_TIMEOUT=5400 VM_QEMU_OPTS=$icount \
		VM_APPEND=$vm_append \
		scripts/vm-run.sh "MFR_MODULE=$mod/mfr.ko BENCH_BOOT=$boot BENCH_PARTS='$parts' \
			P2_SECONDS=${P2_SECONDS:-} P2_RUNS=${P2_RUNS:-} P3_RUNS=${P3_RUNS:-} \
			P5_SECONDS=${P5_SECONDS:-} P7_SECONDS=${P7_SECONDS:-} P7_RUNS=${P7_RUNS:-} \
			P8_ROUNDS=${P8_ROUNDS:-} P9_SECONDS=${P9_SECONDS:-} P9_RUNS=${P9_RUNS:-} \
			$MFR_ROOT/bench/guest.sh mfr $res/results-mfr.txt" \
		>"$res/vm-mfr-$boot.log" 2>&1 &
	mfr_vm=$!

	wait "$stock_vm" || { rc=1; echo "bench: the VM without the series failed:" >&2; tail -n 40 "$res/vm-stock-$boot.log" >&2; }
	wait "$mfr_vm" || { rc=1; echo "bench: the VM with the series failed:" >&2; tail -n 40 "$res/vm-mfr-$boot.log" >&2; }
	return $rc
}

# Boot 0 runs everything; the others only P2, whose fork loop moves by a
# few per cent with the state of a boot: the report takes the median of
# the boots' medians.
bench_boot 0 "${BENCH_PARTS:-p1 p2 p3 p4 p5 p7 p8 p9}" || exit 1
for boot in $(seq 1 $((${BENCH_P2_BOOTS:-3} - 1))); do
	case " ${BENCH_PARTS:-p2} " in *" p2 "*) ;; *) break ;; esac
	bench_boot "$boot" p2 || exit 1
done
cat "$res/results-stock.txt" "$res/results-mfr.txt" >"$res/results.txt"

# BENCH_PARTS (some parts only) replaces those parts' sections and keeps
# the others, saying which run each comes from.
"$PYTHON" bench/report.py --results "$res/results.txt" --started "$started" \
	--minutes $(((SECONDS - t0 + 59) / 60)) --mfr-kdir "$mfr_kdir" --stock-kdir "$stock_kdir" \
	${BENCH_QUICK:+--quick} ${BENCH_PARTS:+--parts "$BENCH_PARTS" --previous bench/RESULTS.md} \
	>"$res/RESULTS.md"
mv "$res/RESULTS.md" bench/RESULTS.md
# make test-vmm's part (P6) from its last result lines, which it keeps.
[ ! -f bench/vmm-results.txt ] ||
	"$PYTHON" tests/vmm/table.py bench/vmm-results.txt --update bench/RESULTS.md
echo "bench: wrote bench/RESULTS.md" >&2
