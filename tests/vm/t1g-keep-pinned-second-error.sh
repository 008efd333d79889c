# SPDX-License-Identifier: GPL-2.0-or-later
# 1 GiB: a second error in a kept hugepage racing its memfd's close, while
# an io_uring fixed buffer pins it; offlined with both pages isolated once
# unpinned.
. ./lib.sh
modprobe hwpoison_inject
check "a free 1 GiB page" one_free_1g_page
isolated=$(./status-value raw-pages-isolated)
returned=$(./status-value healthy-pages-returned)
check "second error while pinned, racing the close" \
	"$MFR_ROOT/build/helpers/kept_lifecycle" pinned 1G race \
	"cd $PWD && ./expect-status folios-pending=1 raw-pages-kept=2 && ! rmmod mfr 2>/dev/null"
check "status after unpin" ./expect-status folios-pending=0 raw-pages-kept=0 \
	raw-pages-isolated=$((isolated + 2)) healthy-pages-returned=$((returned + 262142))
check "pool counters agree" pool_consistent
check "rmmod succeeds once nothing is pending" rmmod mfr
insmod "$MFR_ROOT/module/mfr.ko"
finish
