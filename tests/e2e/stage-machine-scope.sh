# SPDX-License-Identifier: GPL-2.0-or-later
# Boot 6: a libvirt-style guest started at boot right after mfrd, its
# VMM in a transient scope of machine.slice (systemd-run --scope), a
# slice that did not exist before it: its first memfd is kept by the
# cgroup-path = /machine.slice rule, which mfr.ko matches by name; mfrd
# pushed nothing for it.

check "premise: e2e-guest-scope.service is running" wait_until 60 test -e /run/e2e-vm1.ready
read -r vm_pid _ vm_ino </run/e2e-vm1.ready
scope_premise() {
	local cg
	cg=$(cut -d: -f3 "/proc/$vm_pid/cgroup")
	echo "the guest (pid $vm_pid) is in $cg; machine.slice active since $(unit_prop machine.slice ActiveEnterTimestampMonotonic) us, mfrd READY at $(unit_prop mfrd ActiveEnterTimestampMonotonic) us"
	[ "$cg" = /machine.slice/e2e-vm1.scope ] &&
		[ "$(unit_prop machine.slice ActiveEnterTimestampMonotonic)" -ge "$(unit_prop mfrd ExecMainStartTimestampMonotonic)" ]
}
check "premise: the guest is in /machine.slice/e2e-vm1.scope, a slice made after mfrd started" scope_premise
vm_kept() {
	local id
	id=$(mfrctl -j rules list | python3 -c '
import json, sys
print(next((r["id"] for r in json.load(sys.stdin) if r.get("cgroup_path") == "/machine.slice"), 0))')
	mfrctl -j memfd list | json "any(m['inode'] == $vm_ino and m['name'] == 'e2e-vm1-ram' and
		m['policy'] == 'keep' and m.get('rule_id') == $id and
		m.get('cgroup_path') == '/machine.slice/e2e-vm1.scope' for m in d)"
}
check "its first memfd is kept by the /machine.slice rule" vm_kept
pushes() { journalctl -b -u mfrd -o cat | grep -c 'pushed to mfr.ko'; }
check "mfrd pushed the rules only at its start ($(pushes): before the store, on connect), none for the guest" \
	bash -c "[ \$(journalctl -b -u mfrd -o cat | grep -c 'pushed to mfr.ko') -le 2 ]"
touch /run/e2e-vm1.stop
check "the guest ends" wait_until 60 bash -c "! systemctl is-active -q e2e-guest-scope.service"
check "disable e2e-guest-scope.service" systemctl disable e2e-guest-scope.service
