# SPDX-License-Identifier: GPL-2.0-or-later
# Fresh pfns for the boots to come: 8 errors in a guest-ram memfd of this
# boot, released and offlined.  Boot 1's records went through a damaged
# store (store-corrupt: what was salvaged of them is not known in
# advance); these 8 are in the store for certain, so the boots after
# this one each have pfns of earlier boots to offline at their start.

b2_steps=()
for p in 3 70 130 190 250 310 370 430; do b2_steps+=("poison:$p"); done
"$BIN/memfd_script" guest-ram-b2 1 "${b2_steps[@]}" close \
	>"$SHARE/logs/earlier-pfns.out" 2>&1
b2_rc=$?
diag <"$SHARE/logs/earlier-pfns.out"
check "8 errors in a guest-ram memfd, each a 4 KiB SIGBUS, then released" bash -c \
	"[ $b2_rc = 0 ] && [ \$(grep -c 'code=AR lsb=12 exact=1' '$SHARE/logs/earlier-pfns.out') = 8 ]"
b2_offlined() {
	[ "$(sql "SELECT count(*) FROM poisoned_pages WHERE boot_id = '$(boot_id)'
		AND memfd_name = 'guest-ram-b2' AND state = 'offlined'
		AND phys_addr = pfn * 4096")" = 8 ]
}
check "the store has the 8 pages, offlined, with their physical address" wait_until 60 b2_offlined
