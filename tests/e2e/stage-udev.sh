# SPDX-License-Identifier: GPL-2.0-or-later
# The operator's configuration, then mfrd stopped and the module loaded
# again: udev tags the module for systemd, whose sys-module-mfr.device
# wants mfrd.service; mfrd comes up (READY after pushing the rules) and
# the module has the rule.

mkdir -p /etc/mfrd/rules.d /var/lib/prometheus/node-exporter
cat >/etc/mfrd/mfrd.conf <<'CONF'
# e2e: record, and offline at boot what earlier boots recorded.
offline_recorded_pfns = yes
metrics_interval = 5
CONF
cat >/etc/mfrd/rules.d/guest-ram.conf <<'CONF'
# Guest RAM of the VMs keeps its hugepages on a memory error.
[rule]
name-glob = guest-ram*
action = keep
CONF

mfrd_wanted_by_device() {
	systemctl show -p Wants --value sys-module-mfr.device | grep -qw mfrd.service
}
guest_ram_rule_pushed() {
	mfrctl -j rules list |
		json "any(r['name_glob'] == 'guest-ram*' and r['action'] == 'keep' for r in d)"
}
mfrd_status() { systemctl show -p StatusText --value mfrd | grep .; }
store_is_wal() { [ "$(sql 'PRAGMA journal_mode')" = wal ]; }

check "systemctl stop mfrd; rmmod mfr" bash -c "systemctl stop mfrd && rmmod mfr"
check "modprobe mfr" modprobe mfr
check "udev made systemd start mfrd.service (active within 120 s)" \
	wait_until 120 systemctl is-active -q mfrd
check "... through sys-module-mfr.device (the rule's SYSTEMD_WANTS)" mfrd_wanted_by_device
check "mfrd pushed the guest-ram* rule (mfrctl -j rules list)" guest_ram_rule_pushed
check "mfrd reports a status (StatusText)" mfrd_status
check "the store is in WAL mode" store_is_wal
exposure_low() {
	local line
	line=$(systemd-analyze security --no-pager mfrd | tail -n 1)
	echo "$line"
	echo "E2E: # systemd-analyze security mfrd: $line" >/dev/console
	awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+$/) { exit !($i <= 2.0) } exit 1 }' <<<"$line"
}
check "systemd-analyze security mfrd: exposure 2.0 or less" exposure_low
