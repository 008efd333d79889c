# SPDX-License-Identifier: GPL-2.0-or-later
# Keep UE mapped, one 2M page with one poisoned 4 KiB page P (MADV_HWPOISON):
# the futex operations that update their word in place never write P,
# through either kind of futex, with the mapping changed under them
# (mmap(MAP_FIXED) from another thread) or with exit_group() pending; PI
# operations fail on P and work on a healthy page; the robust-list walk at
# exit ends at P.  Checked by reading P back: under MADV_HWPOISON an update
# that reached it would succeed without a trace.
. ./lib.sh
helper=$MFR_ROOT/build/helpers/kept_futex
before=$(./status-value folios-offlined)
check "each update on P fails, on H works; robust list ends at P" "$helper" 2M ops
check "FUTEX_WAKE_OP racing mmap(MAP_FIXED) of the kept memfd never writes P" \
	"$helper" 2M remap 10
check "FUTEX_WAKE_OP racing exit_group() never writes P" "$helper" 2M exit 150
check "status: the three hugepages offlined, nothing kept" ./expect-status \
	memfds-kept=0 raw-pages-kept=0 folios-pending=0 folios-offlined=$((before + 3))
finish
