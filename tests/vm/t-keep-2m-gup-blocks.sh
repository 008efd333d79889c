# SPDX-License-Identifier: GPL-2.0-or-later
# Keep UE mapped, one 2M page with eight poisoned 4 KiB pages (MADV_HWPOISON):
# GUP (process_vm_readv, io_uring buffer registration) and pread() of the
# memfd take every healthy run of base pages up to the next poisoned one,
# never one page more (kernel-hooks: hugetlb_folio_next_hwpoisoned() and
# the blocks of follow_huge_hwpoison()).
. ./lib.sh
kept_helper 2M kept_gup_blocks
finish
