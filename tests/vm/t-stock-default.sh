# SPDX-License-Identifier: GPL-2.0-or-later
# A HugeTLB memfd without policy behaves exactly like stock 6.12, with
# mfr.ko loaded: whole-hugepage SIGBUS (lsb 21), hugepage leaked at close.
. ./lib.sh

check "mfr.ko is loaded" module_loaded
"$MFR_ROOT/build/helpers/stock_hwpoison" && pass "stock_hwpoison" || fail "stock_hwpoison"
finish
