# SPDX-License-Identifier: GPL-2.0-or-later
# Keep UE mapped: 2M pages, 8 poisoned 4 KiB page(s) by corrupt-pfn, released by madv-remove.
. ./lib.sh
keep_scenario 2M 8 corrupt-pfn madv-remove
check "rmmod succeeds once nothing is kept" rmmod mfr
insmod "$MFR_ROOT/module/mfr.ko"
finish
