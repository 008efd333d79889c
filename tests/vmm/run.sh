#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make test-vmm: unmodified Debian QEMU with KVM through an uncorrected
# memory error.  Boots the patched kernel under TCG with "-cpu max" (an
# AMD vCPU with SVM and nested paging), where tests/vmm/guest.sh runs
# Debian's qemu-system-x86_64 -accel kvm on a HugeTLB memfd with a Debian
# guest and puts an error in one host page under the guest's memory
# checker: hwpoison-inject's corrupt-pfn, or a deferred error from this
# emulator's own monitor (the host's real machine-check path), served by
# tests/vmm/outer-monitor.sh.  Prints one line per check, the result
# lines, and "N passed, N failed"; adds the result lines to
# bench/vmm-results.txt (tests/vmm/merge.py) and rewrites bench/RESULTS.md's
# P6 from it.
#
#   VMM_SCENARIOS="keep-2m-mce*5 keep-1g-cpfn/d12/7.2" VMM_RUNS=1 (guest.sh)
#   VMM_REPLACE=1   the batch replaces its scenarios' lines of this kernel too
set -uo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"
cd "$MFR_ROOT"

# The default: each injection opted in and not, 2 MiB, Debian 13 guest,
# QEMU 10; then the guest reading the poisoned page, and a reset.
scenarios=${VMM_SCENARIOS:-stock-2m-cpfn keep-2m-cpfn stock-2m-mce keep-2m-mce keep-2m-mce-touch keep-2m-cpfn-reset}
runs=${VMM_RUNS:-1}
# The kernel the result lines are of: the series and config this
# checkout builds, or not known when KDIR is given.
kernel=
[ -n "${KDIR:-}" ] || kernel=$(kernel_key)
KDIR=${KDIR:-$(scripts/build-kernel.sh)} || exit 1
dir=$MFR_ROOT/build/vmm
mkdir -p "$dir"

# What the scenarios need: guests, VMMs, 1 GiB pages (each run of a
# 1 GiB scenario takes one for good, the touch one two at once, the
# reset one two and a third for the boot after the reset).
guests= qemus= gig=0 total=0
for s in $scenarios; do
	n=$runs
	[ "$s" = "${s%\**}" ] || n=${s##*\*}
	s=${s%\**}
	g=$(cut -s -d/ -f2 <<<"$s") q=$(cut -s -d/ -f3 <<<"$s")
	g=${g:-${VMM_GUEST:-d13}} q=${q:-${VMM_QEMU:-10}}
	case " $guests " in *" $g "*) ;; *) guests+=" $g" ;; esac
	case " $qemus " in *" $q "*) ;; *) qemus+=" $q" ;; esac
	case $s in
	*-1g-*reset*first*) gig=$((gig + 2 * n)) ;;
	*-1g-*reset*) gig=$((gig + 2 * n + 1)) ;;
	*-1g-*touch*) gig=$((gig + n + 1)) ;;
	*-1g*) gig=$((gig + n)) ;;
	esac
	total=$((total + n))
done
case "${VMM_PROBE_CPUS:-}" in */7.2*) case " $qemus " in *" 7.2 "*) ;; *) qemus+=" 7.2" ;; esac ;; esac
# shellcheck disable=SC2086
if ! tests/vmm/image.sh $guests >"$dir/image.log" 2>&1 || ! tests/vmm/qemu.sh $qemus >>"$dir/image.log" 2>&1; then
	cat "$dir/image.log"
	echo "not ok - the guest images ($guests) and VMMs ($qemus)"
	echo "0 passed, 1 failed"
	exit 1
fi
# 2 MiB scenarios: 256 pages of guest RAM each, and 2 MiB lost by stock.
append="hugepages=300"
mem=3
if [ "$gig" -gt 0 ]; then
	append="hugepagesz=1G hugepages=$((gig + 1)) hugepagesz=2M hugepages=300"
	mem=$((4 + gig))
fi
# A periodic tick, which TCG does not lose on an idle vCPU (tests/run).
append="$append highres=off"

# This emulator's monitor, for the outer deferred errors (and for reading
# the test VM's memory): a socket of the host, requests in the checkout.
mon=$(mktemp -u /tmp/mfr-vmm-outer.XXXXXX)
rm -rf "$dir/outer-monitor"
tests/vmm/outer-monitor.sh "$mon" "$dir/outer-monitor" 2>>"$dir/outer-monitor.log" &
server=$!
trap 'kill "$server" 2>/dev/null' EXIT

start=$SECONDS
KDIR=$KDIR VM_MEM=${mem}G VM_CPUS=${VM_CPUS:-2} VM_APPEND="$append" \
	VM_QEMU_OPTS="-cpu max -monitor unix:$mon,server=on,wait=off" \
	VM_TIMEOUT=${VM_TIMEOUT:-$((3600 + (600 + 30 * ${VMM_PASSES:-2}) * total))} scripts/vm-run.sh \
	"VMM_DIR=$dir VMM_SCENARIOS='$scenarios' VMM_RUNS=$runs VMM_CPU='${VMM_CPU:-}' \
	VMM_GUEST='${VMM_GUEST:-}' VMM_QEMU='${VMM_QEMU:-}' VMM_PROBE_CPUS='${VMM_PROBE_CPUS:-}' \
	VMM_WAIT='${VMM_WAIT:-}' VMM_PASSES='${VMM_PASSES:-}' VMM_TOUCH_TRIES='${VMM_TOUCH_TRIES:-}' \
	VMM_BOOT_TIMEOUT='${VMM_BOOT_TIMEOUT:-}' $MFR_ROOT/tests/vmm/guest.sh" 2>&1 |
	tee "$dir/log"
rc=${PIPESTATUS[0]}

passed=$(grep -c '^ok - ' "$dir/log")
failed=$(grep -c '^not ok - ' "$dir/log")
if [ "$rc" != 0 ] && [ "$failed" = 0 ]; then
	echo "not ok - the VM run failed (exit $rc; kernel log above)"
	failed=$((failed + 1))
fi
echo "# $((SECONDS - start)) s"
# The side-by-side table: bench/RESULTS.md's last part, from the result
# lines (kept next to it, as make bench keeps its own).  A batch adds its
# runs to those of its scenarios made with the same kernel and replaces
# those of another kernel (VMM_REPLACE=1: replaces them all); the other
# scenarios stay.
if grep -q '^result ' "$dir/results" 2>/dev/null; then
	touch bench/vmm-results.txt
	"$PYTHON" tests/vmm/merge.py "$dir/results" bench/vmm-results.txt "$kernel" \
		${VMM_REPLACE:+--replace} &&
		"$PYTHON" tests/vmm/table.py bench/vmm-results.txt --update bench/RESULTS.md &&
		echo "# wrote bench/RESULTS.md (P6) and bench/vmm-results.txt"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
