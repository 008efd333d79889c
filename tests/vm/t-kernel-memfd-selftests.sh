# SPDX-License-Identifier: GPL-2.0-or-later
# The kernel's memfd_test and run_hugetlbfs_test.sh (same source tree)
# still pass on the patched kernel with mfr.ko loaded.
. ./lib.sh
cd "$MFR_ROOT/build/kselftest/memfd" || exit 1
check "memfd_test" ./memfd_test
check "run_hugetlbfs_test.sh" bash ./run_hugetlbfs_test.sh
finish
