#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build (cached under $MFR_CACHE/kernel) the two benchmark kernels: the
# non-debug configuration of kernel-hooks/bench.config with the series,
# and the same configuration and source without it.  Prints two lines,
# "mfr KDIR" and "stock KDIR".
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
cd "$MFR_ROOT"

mfr=$(KERNEL_FLAVOR=bench scripts/build-kernel.sh)

# The reference: no patches, and no CONFIG_MFR_HOOKS (it would not exist).
ref=$MFR_ROOT/build/bench/stock-series
mkdir -p "$ref"
cp kernel-hooks/BASE "$ref/"
printf '# no patches: the benchmark kernel without the mfr series\n' >"$ref/series"
grep -v '^CONFIG_MFR_HOOKS=y$' kernel-hooks/bench.config >"$ref/benchstock.config"
stock=$(MFR_SERIES_DIR=$ref KERNEL_FLAVOR=benchstock scripts/build-kernel.sh)

echo "mfr $mfr"
echo "stock $stock"
