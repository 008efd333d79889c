# SPDX-License-Identifier: GPL-2.0-or-later
# After release the poisoned pfns are never handed out again, even when a
# process allocates and touches ~85 % of free memory.
. ./lib.sh
check "keep_hwpoison 2M 8 madvise close, then memory pressure" \
	env MFR_PRESSURE=1 "$MFR_ROOT/build/helpers/keep_hwpoison" 2M 8 madvise close
finish
