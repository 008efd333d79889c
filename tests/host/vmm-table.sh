#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/vmm/table.py turns make test-vmm's result lines, those of the
# first rig ("keep-2m-pv": no injection, guest or VMM in the name) and
# today's ("keep-2m-mce-touch/d13/10", a touch run's with a stray
# carriage return, an old line's doubled console count), into bench/RESULTS.md's P6, one row per scenario,
# and --update replaces only that part.  make bench and
# make test-vmm both end by running it over bench/vmm-results.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
table=$root/tests/vmm/table.py

# The committed result lines render, a row per scenario name.
"$PYTHON" "$table" "$root/bench/vmm-results.txt" >"$tmp/p6"
names=$(awk '$1 == "result" { print $2 }' "$root/bench/vmm-results.txt" | sort -u | wc -l)
rows=$(sed -n '/^| scenario | guest kernel /,/^$/p' "$tmp/p6" | grep -v '^| scenario ' | grep -c '^| ')
[ "$rows" = "$names" ] || { echo "P6 has $rows rows for $names scenarios"; cat "$tmp/p6"; exit 1; }

# One line of each rig, a remark on the old one, and a run repeated.
new='optin=keep size=2M err=mce guest=linux-image-6.12.118+deb13-amd64-6.12.118-1 qemu=1:10.0.2+ds-2 cpu=host guest_kinds=1_deferred exact=exact-4k qemu_ao=1 qemu_ar=0 guest_hwcorrupted_kb=4 wrong=0 finished=yes survived=yes host_lost_kb=4 host_reports=0'
cat >"$tmp/results" <<EOF
result keep-2m-pv optin=keep size=2M cpu=host,vendor=GenuineIntel guest_mces=1 exact=exact-4k wrong=0 finished=no survived=panic host_lost_kb=4 qemu_ao=1 qemu_ar=0 qemu=Guest_MCE_of_type_BUS_MCEERR_AO_injected
note keep-2m-pv: the first rig's remark
result keep-2m-mce/d13/10 run=1 $new
result keep-2m-mce/d13/10 run=2 ${new/survived=yes/survived=panic}
EOF
# The guest kernel's console count: an old line's counted the checker's
# copies too (2 for one machine check), so only a stuck checker's is used;
# a guest QEMU keeps sending ARs while its checker never ends is in a storm.
ar1=${new/guest_kinds=1_deferred/guest_kinds=1_action-required guest_mce_console=2:0}
stuck=${new/guest_kinds=1_deferred/guest_kinds= guest_mce_printed=23:0}
cat >>"$tmp/results" <<EOF
result keep-1g-mce/d13/10 run=1 $ar1
result keep-1g-cpfn/d13/10 run=1 ${stuck/finished=yes/finished=no}
result stock-1g-mce/d13/10 run=1 ${new/finished=yes/finished=no} qemu_ar=15908
EOF
# A guest that reset itself (QEMU logged a vCPU reset) did not survive.
reset=${new/err=mce/err=cpfn}
reset=${reset/finished=yes survived=yes/finished=no survived=reset}
echo "result keep-2m-cpfn/d13/10 run=1 $reset guest_resets=1 guest_reset_rip=0xffffffff81000000" >>"$tmp/results"
# A reset whose guest never booted: QEMU's punch zeroed SeaBIOS's RAM copy.
echo "result keep-1g-cpfn-reset-first/d13/10 run=1 $new reset=bios-zeroed guest_resets=0" >>"$tmp/results"
# A touch run whose "touched" kept the guest console's carriage return.
printf 'result keep-2m-mce-touch/d13/10 run=1 %s touched=3+3\r touch_tries=3 qemu_ar_exact=7 qemu_ar_touch=6 stage2_before=476,237,0 stage2_after=987,236,0 spte_over=0,0,511\n' \
	"$new" >>"$tmp/results"
"$PYTHON" "$table" "$tmp/results" >"$tmp/p6"
want=(
	'| keep-2m-mce | Debian 13, 6.12.118-1 | 10.0.2+ds-2 | `-cpu host` | opted in | 2 | 1 deferred | 4 KiB page |'
	'| keep-1g-mce | Debian 13, 6.12.118-1 | 10.0.2+ds-2 | `-cpu host` | opted in | 1 | 1 action-required | 4 KiB page |'
	'| keep-1g-cpfn | Debian 13, 6.12.118-1 | 10.0.2+ds-2 | `-cpu host` | opted in | 1 | 23 action-required, still coming |'
	'| 0/1 | 0/1 (no: machine-check storm) |'
	'| 0/1 | 0/1 (no: reset itself) |'
	"| 1/1 | 1/1 | no reboot: the punch zeroed SeaBIOS's RAM copy |"
	'| keep-2m-cpfn-pv | Debian 12 | 7.2 | `-cpu host,vendor=GenuineIntel` | opted in | 1 | 1 kind not recorded |'
	'| 1/2 (no: panic) |'
	'| keep-2m-mce-touch/d13/10 | 1 | 3+3 of 6 | 6 | none | 476 / 237 / 0 | 987 / 236 / 0 | 0 / 0 / 511 | 1/1 |'
	'- keep-2m-cpfn-pv/d12/7.2: `Guest MCE of type BUS_MCEERR_AO injected`'
	'- keep-2m-cpfn-pv/d12/7.2: the first rig'"'"'s remark'
)
for w in "${want[@]}"; do
	grep -qF -- "$w" "$tmp/p6" || { echo "P6 lacks: $w"; cat "$tmp/p6"; exit 1; }
done

# --update replaces P6 and keeps what comes before it.
printf '# RESULTS\n\n## P9: kept\n\nP9 text\n\n## P6: guest-visible cost of one error\n\nold P6\n' >"$tmp/RESULTS.md"
"$PYTHON" "$table" "$tmp/results" --update "$tmp/RESULTS.md"
grep -q '^P9 text$' "$tmp/RESULTS.md" || { echo "--update lost P9"; exit 1; }
! grep -q '^old P6$' "$tmp/RESULTS.md" || { echo "--update kept the old P6"; exit 1; }
[ "$(grep -c '^## P6' "$tmp/RESULTS.md")" = 1 ] || { echo "--update left two P6 parts"; exit 1; }
grep -qF '| keep-2m-mce | Debian 13' "$tmp/RESULTS.md" || { echo "--update wrote no row"; exit 1; }

# No result line at all is an error, not an empty table.
: >"$tmp/empty"
if "$PYTHON" "$table" "$tmp/empty" >/dev/null 2>&1; then
	echo "table.py accepted a file without result lines"
	exit 1
fi
echo "P6 renders $names committed scenarios, both rigs' lines and --update"
