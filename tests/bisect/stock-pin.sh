#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The stock pin test of scripts/bisect-check.sh, run as root in a guest
# booted without mfr.ko on a kernel with a prefix of the series:
#   stock-pin.sh EINVAL|EOPNOTSUPP
# a HugeTLB memfd without the flag behaves as on stock 6.12 (whole-hugepage
# SIGBUS, hugepage leaked at close), and MFD_HUGETLB |
# MFD_MF_KEEP_UE_MAPPED fails with the given errno (EINVAL before the uAPI
# patch, EOPNOTSUPP from it on: no module).
set -u
root=${MFR_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
rc=0
if [ -d /sys/module/mfr ]; then
	echo "not ok - mfr.ko is loaded: the stock pin test runs without it"
	exit 1
fi
echo "ok - mfr.ko is not loaded"
"$root/build/helpers/stock_hwpoison" || rc=1
"$root/build/helpers/memfd_flags" "$1" || rc=1
exit $rc
