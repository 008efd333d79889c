# SPDX-License-Identifier: GPL-2.0-or-later
# A pinned (io_uring fixed buffer) kept folio is pending after close and
# offlined once the pin goes; the module cannot unload meanwhile.  The
# error is not reported recovered while the pin holds the page.
. ./lib.sh
before=$(./status-value folios-offlined)
marker="mfr-test: io-uring-pin $$ $RANDOM"
echo "$marker" >/dev/kmsg
check "pin_hwpoison" "$MFR_ROOT/build/helpers/pin_hwpoison" \
	"cd $PWD && ./expect-status memfds-kept=0 folios-pending=1 raw-pages-kept=1 && ! rmmod mfr 2>/dev/null" \
	"cd $PWD && ./expect-status folios-pending=0 raw-pages-kept=0 folios-offlined=$((before + 1))"
check "the kernel log says the pinned page stays in the direct map" \
	grep -Eq "kept hugepage still referenced by [0-9]+ users: left in the direct map" \
	<<<"$(dmesg | sed -n "/$marker/,\$p")"
check "rmmod succeeds once nothing is pending" rmmod mfr
insmod "$MFR_ROOT/module/mfr.ko"
finish
