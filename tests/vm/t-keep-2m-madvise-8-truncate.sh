# SPDX-License-Identifier: GPL-2.0-or-later
# Keep UE mapped: 2M pages, 8 poisoned 4 KiB page(s) by madvise, released by truncate.
. ./lib.sh
keep_scenario 2M 8 madvise truncate
check "rmmod succeeds once nothing is kept" rmmod mfr
insmod "$MFR_ROOT/module/mfr.ko"
finish
