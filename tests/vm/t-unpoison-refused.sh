# SPDX-License-Identifier: GPL-2.0-or-later
# unpoison-pfn on any page of a kept hugepage is refused and changes
# nothing (the pending case is in t-keep-2m-pinned-second-error).
. ./lib.sh
modprobe hwpoison_inject
offlined=$(./status-value folios-offlined)
check "unpoison refused on a kept hugepage" \
	"$MFR_ROOT/build/helpers/kept_lifecycle" unpoison 2M
check "status: released and offlined" ./expect-status raw-pages-kept=0 folios-pending=0 \
	folios-offlined=$((offlined + 1))
check "pool counters agree" pool_consistent
finish
