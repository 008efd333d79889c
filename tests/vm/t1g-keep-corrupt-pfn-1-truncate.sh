# SPDX-License-Identifier: GPL-2.0-or-later
# Keep UE mapped: 1G page, 1 poisoned 4 KiB page(s) by corrupt-pfn, released by truncate.
. ./lib.sh
modprobe hwpoison_inject
before=$(./status-value folios-offlined)
hold="./expect-status memfds-kept=1 raw-pages-kept=1 folios-pending=0 && ! rmmod mfr 2>/dev/null"
check "keep_hwpoison 1G 1 corrupt-pfn truncate" "$MFR_ROOT/build/helpers/keep_hwpoison" 1G 1 corrupt-pfn truncate "cd $PWD && $hold"
check "status after release" ./expect-status memfds-kept=0 raw-pages-kept=0 folios-pending=0 \
	folios-offlined=$((before + 1))
finish
