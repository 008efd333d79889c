# SPDX-License-Identifier: GPL-2.0-or-later
# The last of boot 6: its records kept for boot 7, whose start finds
# /var/lib/mfrd still full (the disk is not made room on before the
# reboot) and 80-typo.conf still there.

check "the store read for the next boot (snapshot before-boot7)" store_snapshot before-boot7
boot6_page_recorded() {
	[ "$(sql "SELECT count(*) FROM poisoned_pages WHERE boot_id = '$(boot_id)'")" -ge 1 ]
}
check "premise: boot 6's page is among the pfns for boot 7" boot6_page_recorded
boot_id >"$STATE/boot6-id"
