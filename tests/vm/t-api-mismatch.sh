# SPDX-License-Identifier: GPL-2.0-or-later
# A module built for another hook API version is refused with a clear
# message (tests/run builds it with MFR_FAKE_API_VERSION=48879).
. ./lib.sh

bad=$MFR_ROOT/build/badapi/mfr.ko
[ -f "$bad" ] || { fail "$bad not built"; exit 1; }
rmmod mfr
# Never clear the log (the run's final check needs all of it): mark it.
marker="mfr-test: api-mismatch $$ $RANDOM"
echo "$marker" >/dev/kmsg
if insmod "$bad" 2>/dev/null; then
	fail "mismatched module loaded"
	rmmod mfr
else
	pass "mismatched module refused"
fi
msg=$(dmesg | sed -n "/$marker/,\$p")
echo "$msg"
api=$(sed -n 's/^#define MFR_HOOKS_API_VERSION[[:space:]]*\([0-9]*\).*/\1/p' \
	"$MFR_KSRC/include/linux/mfr.h")
check "kernel log names both versions" \
	grep -q "built for hook API 48879, this kernel provides $api" <<<"$msg"
check "the module says how to mend it" grep -q "rebuild mfr.ko against this kernel's headers" <<<"$msg"
if ynl --do status-get >/dev/null 2>&1; then
	fail "an mfr family is registered after the refused load"
else
	pass "no mfr family left behind"
fi
check "the right module loads afterwards" insmod "$MFR_ROOT/module/mfr.ko"
finish
