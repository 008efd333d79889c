# SPDX-License-Identifier: GPL-2.0-or-later
# Debian 13 hosts, the boot after the KVM guest (stage-vm-guest.sh): the
# pfn that failed under the VM was offlined from boot on, with the other
# pfns of earlier boots, and the store still says which VM it was.

vm=e2e-vm1
vm_cgroup=/machine.slice/$vm.service
vm_pfn=$(cat "$STATE/vm-pfn" 2>/dev/null)
vm_boot=$(cat "$STATE/vm-boot-id" 2>/dev/null)
check "premise: the KVM guest's pfn of the boot before (${vm_pfn:-none})" test -n "$vm_pfn"
vm_pfn_recorded() {
	[ "$(sql "SELECT count(*) FROM poisoned_pages WHERE boot_id = '$vm_boot' AND pfn = $vm_pfn
		AND memfd_name = 'memory-backend-memfd' AND comm = '$vm'
		AND cgroup_path = '$vm_cgroup' AND state = 'offlined'")" = 1 ]
}
check "store: pfn $vm_pfn of the boot before, offlined, with the VM's memfd, comm and cgroup" vm_pfn_recorded
# Poison flags do not survive a reboot: only mfrd's boot offlining (whose
# count store-locked.sh checks) sets it again.
check "pfn $vm_pfn is poisoned again in this boot (KPF_HWPOISON)" pfns_hwpoisoned "$STATE/vm-pfn"
vm_in_history() {
	mfrctl -j history | json "any(r['pfn'] == $vm_pfn and r.get('comm') == '$vm' and
		r.get('memfd') == 'memory-backend-memfd' for r in d)"
}
check "mfrctl history: pfn $vm_pfn, memory-backend-memfd of $vm" vm_in_history
