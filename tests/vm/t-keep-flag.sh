# SPDX-License-Identifier: GPL-2.0-or-later
# MFD_MF_KEEP_UE_MAPPED: EINVAL without MFD_HUGETLB, EOPNOTSUPP without
# mfr.ko (fail closed), accepted with it.
. ./lib.sh
h=$MFR_ROOT/build/helpers

rmmod mfr
check "without mfr.ko" "$h/memfd_flags" EOPNOTSUPP
insmod "$MFR_ROOT/module/mfr.ko"
check "with mfr.ko" "$h/memfd_flags" ok
check "no memfd left opted in" ./expect-status memfds-kept=0
finish
