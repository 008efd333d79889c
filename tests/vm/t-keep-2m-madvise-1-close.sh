# SPDX-License-Identifier: GPL-2.0-or-later
# Keep UE mapped: 2M pages, 1 poisoned 4 KiB page(s) by madvise, released by close.
. ./lib.sh
keep_scenario 2M 1 madvise close
check "rmmod succeeds once nothing is kept" rmmod mfr
insmod "$MFR_ROOT/module/mfr.ko"
finish
