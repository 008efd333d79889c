# SPDX-License-Identifier: GPL-2.0-or-later
# A pinned (io_uring fixed buffer) kept folio is pending after close and
# offlined once the pin goes; the module cannot unload meanwhile.
. ./lib.sh
before=$(./status-value folios-offlined)
check "pin_hwpoison" "$MFR_ROOT/build/helpers/pin_hwpoison" \
	"cd $PWD && ./expect-status memfds-kept=0 folios-pending=1 raw-pages-kept=1 && ! rmmod mfr 2>/dev/null" \
	"cd $PWD && ./expect-status folios-pending=0 raw-pages-kept=0 folios-offlined=$((before + 1))"
check "rmmod succeeds once nothing is pending" rmmod mfr
insmod "$MFR_ROOT/module/mfr.ko"
finish
