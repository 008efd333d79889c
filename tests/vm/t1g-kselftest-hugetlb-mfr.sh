# SPDX-License-Identifier: GPL-2.0-or-later
# The series' kernel selftest tools/testing/selftests/mm/hugetlb-mfr (patch
# 0013) in this boot (1 GiB variants; the others skip for want of free
# hugepages of their size): it passes with mfr.ko and skips (exit 4,
# KSFT_SKIP) without it.
. ./lib.sh
bin=$MFR_ROOT/build/kselftest/mm/hugetlb-mfr
check "a free 1 GiB page" one_free_1g_page
check "hugetlb-mfr with mfr.ko" "$bin"
check "rmmod mfr" rmmod mfr
"$bin" >/dev/null 2>&1
rc=$?
check "insmod mfr.ko again" insmod "$MFR_ROOT/module/mfr.ko"
check "hugetlb-mfr without mfr.ko skips (exit 4, got $rc)" test "$rc" = 4
finish
