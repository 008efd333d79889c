#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make test-vmm: unmodified Debian QEMU with KVM through an uncorrected
# memory error.  Boots the patched kernel under TCG with "-cpu max" (SVM and
# nested paging), where tests/vmm/guest.sh runs Debian's qemu-system-x86_64
# -accel kvm on a HugeTLB memfd and poisons one host page under the guest's
# memory checker, once not opted in (stock) and once kept by mfrd's rule.
# Prints one line per check, the result lines, and "N passed, N failed".
#
#   VMM_SCENARIOS="stock-2m keep-2m" VMM_CPU=host,vendor=GenuineIntel
set -uo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"
cd "$MFR_ROOT"

KDIR=${KDIR:-$(scripts/build-kernel.sh)} || exit 1
dir=$MFR_ROOT/build/vmm
mkdir -p "$dir"
tests/vmm/image.sh >/dev/null || { echo "not ok - the guest image"; echo "0 passed, 1 failed"; exit 1; }
scenarios=${VMM_SCENARIOS:-stock-2m keep-2m}
# 2 MiB scenarios: 256 pages of guest RAM each, and 2 MiB lost by stock.
append="hugepages=300"
mem=3G
case " $scenarios " in
*-1g*) append="hugepagesz=1G hugepages=2 hugepagesz=2M hugepages=300" mem=5G ;;
esac
start=$SECONDS
KDIR=$KDIR VM_MEM=$mem VM_CPUS=${VM_CPUS:-2} VM_APPEND="$append" VM_QEMU_OPTS="-cpu max" \
	VM_TIMEOUT=${VM_TIMEOUT:-3600} scripts/vm-run.sh \
	"VMM_DIR=$dir VMM_SCENARIOS='$scenarios' VMM_CPU='${VMM_CPU:-}' VMM_PROBE_CPUS='${VMM_PROBE_CPUS:-}' $MFR_ROOT/tests/vmm/guest.sh" 2>&1 |
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
# lines (kept next to it, as make bench keeps its own).
if grep -q '^result ' "$dir/results" 2>/dev/null; then
	# A run of some scenarios replaces their rows and keeps the others.
	touch bench/vmm-results.txt
	awk 'NR == FNR { if ($1 == "result") fresh[$2] = $0; next }
		$1 == "result" && ($2 in fresh) { print fresh[$2]; delete fresh[$2]; next }
		{ print }
		END { for (n in fresh) print fresh[n] }' "$dir/results" bench/vmm-results.txt \
		>"$dir/results.merged" && mv "$dir/results.merged" bench/vmm-results.txt
	"$PYTHON" tests/vmm/table.py bench/vmm-results.txt --update bench/RESULTS.md &&
		echo "# wrote bench/RESULTS.md (P6) and bench/vmm-results.txt"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
