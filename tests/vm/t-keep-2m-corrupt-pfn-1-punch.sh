# SPDX-License-Identifier: GPL-2.0-or-later
# Keep UE mapped: 2M pages, 1 poisoned 4 KiB page(s) by corrupt-pfn, released by punch.
. ./lib.sh
keep_scenario 2M 1 corrupt-pfn punch
check "rmmod succeeds once nothing is kept" rmmod mfr
insmod "$MFR_ROOT/module/mfr.ko"
finish
