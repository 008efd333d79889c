# SPDX-License-Identifier: GPL-2.0-or-later
# The series' kernel selftest tools/testing/selftests/mm/hugetlb-mfr (patch
# 0024) in this boot (1 GiB variants; the others skip for want of free
# hugepages of their size): it passes with mfr.ko and skips (exit 4,
# KSFT_SKIP) without it.
. ./lib.sh
check "a free 1 GiB page" one_free_1g_page
kselftest_hugetlb_mfr 1g_close
finish
