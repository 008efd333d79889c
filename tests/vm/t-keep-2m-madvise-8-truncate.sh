# SPDX-License-Identifier: GPL-2.0-or-later
# Keep UE mapped: 2M pages, 8 poisoned 4 KiB page(s) by madvise, released by truncate.
. ./lib.sh
modprobe hwpoison_inject
before=$(./status-value folios-offlined)
hold="./expect-status memfds-kept=1 raw-pages-kept=8 folios-pending=0 && ! rmmod mfr 2>/dev/null"
check "keep_hwpoison 2M 8 madvise truncate" "$MFR_ROOT/build/helpers/keep_hwpoison" 2M 8 madvise truncate "cd $PWD && $hold"
check "status after release" ./expect-status memfds-kept=0 raw-pages-kept=0 folios-pending=0 \
	folios-offlined=$((before + 1))
check "rmmod succeeds once nothing is kept" rmmod mfr
insmod "$MFR_ROOT/module/mfr.ko"
finish
