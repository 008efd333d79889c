#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Peer suites on the patched kernel with mfr.ko loaded, on the patched
# kernel without it (the hooks off: exactly stock, the series promises), and
# on the same config without the series: the kernel's run_vmtests.sh -t
# hugetlb and the hugetlb cases of uffd-unit-tests.  Prints a table and
# fails if any result differs.  Run by "make test-peer" (builds a second kernel, so it
# is not part of "make test").
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"
cd "$MFR_ROOT"

KDIR=$(scripts/build-kernel.sh)
KSRC=$(dirname "$KDIR")/linux

# The same fragment, no patches: the reference kernel.
peer=$MFR_ROOT/build/peer-series
mkdir -p "$peer"
cp kernel-hooks/BASE "$peer/"
printf '# no patches: the same kernel without the mfr series\n' >"$peer/series"
grep -v '^CONFIG_MFR_HOOKS=y$' kernel-hooks/debug.config >"$peer/stock.config"
STOCK_KDIR=$(MFR_SERIES_DIR=$peer KERNEL_FLAVOR=stock scripts/build-kernel.sh)

# One build of the selftests serves both kernels (6.12's khugepaged.c does
# not build; -k goes on past it, the hugetlb and uffd tests do build).
sel=$MFR_ROOT/build/kselftest/mm
mkdir -p "$sel"
make -s -k -C "$KSRC/tools/testing/selftests/mm" OUTPUT="$sel" \
	KHDR_INCLUDES="-isystem $KDIR/usr/include" >/dev/null 2>&1 || true
cp "$KSRC"/tools/testing/selftests/mm/*.sh "$sel/"
for t in hugepage-mmap hugepage-shm map_hugetlb hugepage-mremap hugepage-vmemmap \
	hugetlb-madvise hugetlb_dio hugetlb_fault_after_madv hugetlb_madv_vs_map \
	thuge-gen uffd-unit-tests; do
	[ -x "$sel/$t" ] || die "selftest $t did not build"
done

out=$MFR_ROOT/build/peer
rm -rf "$out" && mkdir -p "$out"
# In the guest: the cgroup scripts mount hugetlbfs on /mnt/huge (the
# guest's root is read-only: a tmpfs over /mnt), and run_vmtests.sh calls
# sudo (already root: a shim that runs the command).
cat >"$out/guest.sh" <<EOF
set -u
mount -t tmpfs peer /mnt
mkdir -p /tmp/peer-bin
printf '#!/bin/sh\\nexec "\$@"\\n' >/tmp/peer-bin/sudo
chmod +x /tmp/peer-bin/sudo
export PATH=/tmp/peer-bin:\$PATH
cd $sel
./run_vmtests.sh -n -t hugetlb >"$out/\$1-vmtests.txt" 2>&1
./uffd-unit-tests >"$out/\$1-uffd.txt" 2>&1
exit 0
EOF
# The three side by side; charge_reserved_hugetlb.sh alone takes about
# 20 minutes under TCG.
KDIR=$KDIR VM_TIMEOUT=7200 scripts/vm-run.sh "bash $out/guest.sh mfr" &
mfr_vm=$!
KDIR=$KDIR VM_NO_MODULE=1 VM_TIMEOUT=7200 scripts/vm-run.sh "bash $out/guest.sh hooks" &
hooks_vm=$!
KDIR=$STOCK_KDIR VM_NO_MODULE=1 VM_TIMEOUT=7200 scripts/vm-run.sh "bash $out/guest.sh stock" ||
	die "the VM without the series failed"
wait "$mfr_vm" || die "the VM with the series failed"
wait "$hooks_vm" || die "the VM with the series, mfr.ko not loaded, failed"

# "name result" lines from each log.
results() {
	awk '/^# running|^running / { sub(/^# /, ""); name = $0; sub(/^running /, "", name); gsub(/ /, "_", name) }
	     /\[(PASS|FAIL|SKIP)\]/ { match($0, /\[(PASS|FAIL|SKIP)\]/);
	          print "vmtests:" name, substr($0, RSTART + 1, RLENGTH - 2) }' "$1-vmtests.txt"
	sed -n 's/^Testing \([^ ]*\) on \(hugetlb[^.]*\)\.\.\. \([a-z]*\).*/uffd:\1@\2 \3/p' \
		"$1-uffd.txt"
}
results "$out/mfr" | sort >"$out/mfr.res"
results "$out/hooks" | sort >"$out/hooks.res"
results "$out/stock" | sort >"$out/stock.res"
for k in mfr hooks; do
	[ -s "$out/$k.res" ] || die "no results parsed from $out/$k-*.txt"
done

printf '| test | patched + mfr.ko | patched, no module | without the series |\n|---|---|---|---|\n'
join -a1 -a2 -e missing -o 0,1.2,2.2 "$out/mfr.res" "$out/hooks.res" |
	join -a1 -a2 -e missing -o 0,1.2,1.3,2.2 - "$out/stock.res" |
	awk '{ printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4; if ($2 != $4 || $3 != $4) diff++ }
	     END { exit diff ? 1 : 0 }'
