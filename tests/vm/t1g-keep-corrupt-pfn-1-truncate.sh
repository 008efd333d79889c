# SPDX-License-Identifier: GPL-2.0-or-later
# Keep UE mapped: 1G page, 1 poisoned 4 KiB page(s) by corrupt-pfn, released by truncate.
. ./lib.sh
keep_scenario 1G 1 corrupt-pfn truncate
finish
