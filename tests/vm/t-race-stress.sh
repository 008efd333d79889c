# SPDX-License-Identifier: GPL-2.0-or-later
# 60 s of faults, hole punches, truncates, forks, io_uring pins and poison
# injections (MADV_HWPOISON and corrupt-pfn) on three kept memfds at once
# (tests/helpers/race_stress.c): afterwards every injected pfn is offlined
# and counted, nothing is kept or pending, and the module unloads.
. ./lib.sh
modprobe hwpoison_inject
isolated=$(./status-value raw-pages-isolated)
offlined=$(./status-value folios-offlined)
out=$(mktemp)

race_stress() { "$MFR_ROOT/build/helpers/race_stress" 60 3 >"$out"; }
check "race stress 60 s" race_stress
# The pfns go on one line: the suite shows only a failed log's tail.
grep -v '^pfn ' "$out"
echo "injected pfns: $(sed -n 's/^pfn //p' "$out" | tr '\n' ' ')"
# What the kernel said of a pfn still in a hugepage (the log keeps it all).
for p in $(sed -n 's/^still-huge \(0x[0-9a-f]*\) .*/\1/p' "$out"); do
	dmesg | grep -E "$p([^0-9a-f]|\$)" | tail -n 8 | sed "s/^/# $p: /"
done
injected=$(sed -n 's/^injected //p' "$out")
# pfns stock code left in a free hugepage (the helper says why): mfr
# never saw them.
stuck=$(sed -n 's/^stock-stuck //p' "$out")

check "status: nothing kept or pending" \
	./expect-status memfds-kept=0 raw-pages-kept=0 folios-pending=0

# at_least NAME BEFORE AFTER MIN [MAX]: the counter grew by MIN..MAX.
at_least() {
	local grew
	grew=$(($3 - $2))
	echo "$1: $2 -> $3 (+$grew), want +$4${5:+..+$5}"
	[ "$grew" -ge "$4" ] && { [ -z "${5:-}" ] || [ "$grew" -le "$5" ]; }
}
if [[ $injected =~ ^[0-9]+$ && $stuck =~ ^[0-9]+$ && $isolated =~ ^[0-9]+$ && $offlined =~ ^[0-9]+$ ]]; then
	# Each injected pfn once, however often it was poisoned.
	check "raw-pages-isolated grew by at least the $injected injected pfns (less $stuck left by stock)" \
		at_least raw-pages-isolated "$isolated" "$(./status-value raw-pages-isolated)" $((injected - stuck))
	# Each offlined hugepage holds at least one of them.
	check "folios-offlined grew by 1..$injected" \
		at_least folios-offlined "$offlined" "$(./status-value folios-offlined)" \
		$((injected > 0)) "$injected"
else
	fail "counters before ($isolated, $offlined) or injected pfns ($injected) unknown"
fi
check "pool counters agree" pool_consistent
rm -f "$out"

check "rmmod mfr once nothing is kept or pending" rmmod mfr
insmod "$MFR_ROOT/module/mfr.ko"
finish
