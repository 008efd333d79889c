# SPDX-License-Identifier: GPL-2.0-or-later
# The series' kernel selftest tools/testing/selftests/mm/hugetlb-mfr (patch
# 0024) in this boot (2 MiB variants; the others skip for want of free
# hugepages of their size): it passes with mfr.ko and skips (exit 4,
# KSFT_SKIP) without it.
. ./lib.sh
kselftest_hugetlb_mfr 2m_close 2m_truncate 2m_punch
finish
