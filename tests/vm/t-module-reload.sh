# SPDX-License-Identifier: GPL-2.0-or-later
# mfr.ko unloads and loads cleanly 20 times; the family comes and goes.
. ./lib.sh

ok=1
for i in $(seq 20); do
	if ! rmmod mfr; then fail "rmmod #$i"; ok=0; break; fi
	if module_loaded || ynl --do status-get >/dev/null 2>&1; then
		fail "mfr family still present after rmmod #$i"; ok=0; break
	fi
	if ! insmod "$MFR_ROOT/module/mfr.ko"; then fail "insmod #$i"; ok=0; break; fi
	if [ "$(status_attr hooks-api-version)" = "" ]; then
		fail "status after insmod #$i"; ok=0; break
	fi
done
[ "$ok" = 1 ] && pass "20 unload/load cycles, status answered after each"
finish
