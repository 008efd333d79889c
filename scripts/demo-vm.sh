#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make demo-vm: make demo's story with a real guest.  The patched kernel
# boots under TCG with an AMD vCPU (SVM: KVM runs nested); in it mfrd
# starts with the packaged rules, QEMU 10 (Debian's, unmodified) runs a
# Debian 13 guest whose RAM is a 2 MiB HugeTLB memfd and whose init checks
# its memory pass after pass; one host page under it gets an uncorrected
# error through the host's machine-check path (a deferred error from this
# emulator's monitor, tests/vmm/outer-monitor.sh); the guest's kernel
# offlines the page, its checker goes on with 4 KiB lost; then the host's
# mfrctl, journal (mfrd's log) and metrics.  A progress line per step; it
# is tests/vmm/guest.sh's opted-in 2 MiB deferred-error scenario, so its
# checks must pass too.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$MFR_ROOT"

t0=$SECONDS
say() { echo "[demo-vm $((SECONDS - t0))s] $*"; }
say "building the patched kernel, mfr.ko, mfrd and mfrctl (seconds when built)"
KDIR=${KDIR:-$(scripts/build-kernel.sh)}
dir=build/vmm/demo
mkdir -p "$dir"
say "fetching Debian 13's kernel for the guest and checking QEMU 10 (tests/vmm/image.sh, qemu.sh)"
tests/vmm/image.sh d13 >"$dir/image.log" 2>&1 && tests/vmm/qemu.sh 10 >>"$dir/image.log" 2>&1 ||
	{ cat "$dir/image.log"; die "the guest image or QEMU 10 (make deps installs it)"; }
mon=$(mktemp -u /tmp/mfr-demo-vm.XXXXXX)
rm -rf build/vmm/outer-monitor
tests/vmm/outer-monitor.sh "$mon" build/vmm/outer-monitor 2>"$dir/outer-monitor.log" &
server=$!
trap 'kill "$server" 2>/dev/null' EXIT
say "booting the patched kernel under TCG (-cpu max: AMD, SVM, nested paging), about a minute"
set +e
KDIR=$KDIR VM_MEM=3G VM_CPUS=2 VM_APPEND="hugepages=300 highres=off" \
	VM_QEMU_OPTS="-cpu max -monitor unix:$mon,server=on,wait=off" VM_TIMEOUT=1800 \
	scripts/vm-run.sh "VMM_DEMO=1 VMM_DIR=$MFR_ROOT/$dir VMM_SCENARIOS=keep-2m-mce/d13/10 $MFR_ROOT/tests/vmm/guest.sh" \
	>"$dir/log" 2>&1 &
vm=$!
# The guest side's progress lines as they come, and any failed check.
tail -n +1 -F --pid="$vm" "$dir/log" 2>/dev/null | while IFS= read -r line; do
	case $line in
	"[demo-vm] "*) say "${line#"[demo-vm] "}" ;;
	"not ok - "*) echo "$line" ;;
	esac
done
wait "$vm"
rc=$?
set -e
say "done: $(grep -c '^ok - ' "$dir/log") checks passed, $(grep -c '^not ok - ' "$dir/log") failed (whole log: $dir/log)"
exit "$rc"
