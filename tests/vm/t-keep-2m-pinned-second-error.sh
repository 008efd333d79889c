# SPDX-License-Identifier: GPL-2.0-or-later
# A second error in a kept hugepage after its memfd released it, while an
# io_uring fixed buffer still pins it, after the close and racing it: the
# hugepage stays pending (unpoison refused, module held), and once unpinned
# both poisoned pages are isolated, the rest returned, the module free to go.
# Each second error is answered EBUSY: the pin maps the page.
. ./lib.sh
modprobe hwpoison_inject
for variant in close race; do
	isolated=$(./status-value raw-pages-isolated)
	returned=$(./status-value healthy-pages-returned)
	offlined=$(./status-value folios-offlined)
	check "second error while pinned ($variant)" \
		"$MFR_ROOT/build/helpers/kept_lifecycle" pinned 2M "$variant" \
		"cd $PWD && ./expect-status memfds-kept=0 folios-pending=1 raw-pages-kept=2 && ! rmmod mfr 2>/dev/null"
	check "status after unpin ($variant)" ./expect-status folios-pending=0 raw-pages-kept=0 \
		raw-pages-isolated=$((isolated + 2)) healthy-pages-returned=$((returned + 510)) \
		folios-offlined=$((offlined + 1))
	check "pool counters agree ($variant)" pool_consistent
done
# The first error's reference is gone with the release: a second error
# while only a coalesced fixed buffer (one reference) holds the hugepage
# is not reported recovered either.
isolated=$(./status-value raw-pages-isolated)
offlined=$(./status-value folios-offlined)
check "second error after the release, one pin left" \
	"$MFR_ROOT/build/helpers/kept_lifecycle" pinned-released 2M
check "status after unpin (one pin left)" ./expect-status folios-pending=0 raw-pages-kept=0 \
	raw-pages-isolated=$((isolated + 2)) folios-offlined=$((offlined + 1))
check "rmmod succeeds once nothing is pending" rmmod mfr
insmod "$MFR_ROOT/module/mfr.ko"
finish
