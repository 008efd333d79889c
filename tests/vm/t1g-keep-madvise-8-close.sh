# SPDX-License-Identifier: GPL-2.0-or-later
# Keep UE mapped: 1G page, 8 poisoned 4 KiB page(s) by madvise, released by close.
. ./lib.sh
keep_scenario 1G 8 madvise close
finish
