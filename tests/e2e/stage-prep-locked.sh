# SPDX-License-Identifier: GPL-2.0-or-later
# The last of boot 2: how boot 3 starts.  mfrd's store is locked by an
# operator's sqlite3 shell (e2e-store-lock.service, wanted by mfrd and
# ordered before it: BEGIN EXCLUSIVE, held 30 s) and a rule names a
# cgroup that does not exist yet (/e2e-late.slice), which mfr.ko matches
# by name once it does.  The store's incidents so far (the
# damaged store of store-corrupt) are acknowledged, so that boot 3's
# mfrd_store_recovered is boot 3's own.  mfrd is stopped before the
# store's rows are kept for comparison: nothing changes them after.

check "mfrctl store ack: the damaged store's incident seen" bash -c \
	"mfrctl store ack | grep -q '^acknowledged [1-9]'"
check "... mfrd_store_recovered 0" wait_until 30 metric_is mfrd_store_recovered 0
check "systemctl stop mfrd" systemctl stop mfrd
check "the store read for the next boot (snapshot before-boot3)" store_snapshot before-boot3
check "premise: the store has pfns of this and earlier boots for boot 3 ($(wc -l <"$STATE/before-boot3.pfns") pfns, $(wc -l <"$STATE/before-boot3.rows") rows)" \
	test "$(wc -l <"$STATE/before-boot3.pfns")" -ge 8
check "enable e2e-store-lock.service (WantedBy=mfrd.service, Before=mfrd.service)" \
	systemctl enable e2e-store-lock.service
cat >/etc/mfrd/rules.d/70-late.conf <<'CONF'
# e2e: a cgroup that appears only after boot (a VM's slice created late).
[rule]
cgroup-path = /e2e-late.slice
action = keep
CONF
check "rules.d/70-late.conf names /e2e-late.slice, which does not exist" \
	test ! -e /sys/fs/cgroup/e2e-late.slice
