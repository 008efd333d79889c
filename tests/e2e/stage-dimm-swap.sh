# SPDX-License-Identifier: GPL-2.0-or-later
# The last of boot 1: a DIMM swap, simulated in the store.  The records
# carry the physical address and the DIMM the guest's SMBIOS table names;
# the first recorded pfn's record is rewritten as if it had been made on
# another DIMM, so that boot offlining in boot 2 skips it (after-reboot).

identified() {
	[ "$(sql "SELECT count(*) FROM poisoned_pages WHERE boot_id = '$(boot_id)'
		 AND phys_addr = pfn * 4096 AND dimm_id IS NOT NULL")" = "$(wc -l <"$STATE/recorded-pfns")" ]
}
check "the SMBIOS table is there (/sys/firmware/dmi/tables/DMI)" test -r /sys/firmware/dmi/tables/DMI
check "every record of this boot has its physical address and DIMM" identified
swapped=$(head -n 1 "$STATE/recorded-pfns")
echo "$swapped" >"$STATE/swapped-pfn"
check "simulate a DIMM swap: pfn $swapped recorded on DIMM 'old'" \
	sql "UPDATE poisoned_pages SET dimm = 'old', dimm_id = 'locator=old serial=OLD' WHERE pfn = $swapped"
