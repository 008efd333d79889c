# SPDX-License-Identifier: GPL-2.0-or-later
# Debian 13 hosts (trixie images): a real KVM guest under the
# distribution's own QEMU 10, as a fleet host runs it today.  The packaged
# example rules (/usr/share/doc/mfr/examples/10-vms.conf) go into
# /etc/mfrd/rules.d as the README says; QEMU runs as a unit in
# machine.slice named after the VM (e2e-vm1, also its process name), its
# RAM a 2 MiB HugeTLB memfd (memory-backend-memfd), the guest tests/vmm's
# memory checker.  One host pfn under the checker's memory gets an
# uncorrected error (hwpoison-inject's corrupt-pfn): the memfd keeps its
# hugepage, QEMU passes the error to the guest at the poisoned 4 KiB
# page's guest physical address, and mfrctl, the store, the journal and
# the metrics report the page with the VM's name, cgroup and pid.  After
# the VM stops, the pfn is offlined; boot 3 checks it is offline again
# from boot on (stage-vm-guest-offlined.sh).

vm=e2e-vm1
vm_unit=$vm.service
vm_cgroup=/machine.slice/$vm_unit
vm_dir=/run/$vm
vm_mem_mb=256
vm_pages=$((vm_mem_mb / 2))
hmp() { python3 "$E2E/vm/hmp.py" "$vm_dir/monitor" "$1"; }
hp_free() { cat /sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages; }
rm -rf "$vm_dir" && mkdir -p "$vm_dir"

# ---- premise: nested SVM with nested paging, KVM, trixie's QEMU 10
check "premise: the vCPU offers SVM and nested paging (svm, npt in /proc/cpuinfo)" \
	bash -c 'grep -qw svm /proc/cpuinfo && grep -qw npt /proc/cpuinfo'
check "premise: kvm_amd loaded with nested paging, /dev/kvm" bash -c \
	'modprobe kvm_amd && grep -qx Y /sys/module/kvm_amd/parameters/npt && [ -c /dev/kvm ]'
qemu_ver=$(dpkg-query -W -f '${Version}' qemu-system-x86)
qemu_from_trixie() {
	local md5
	md5=$(md5sum /usr/bin/qemu-system-x86_64 | cut -d' ' -f1)
	qemu-system-x86_64 --version | head -n 1
	echo "package qemu-system-x86 $qemu_ver"
	grep -q "^$md5  usr/bin/qemu-system-x86_64\$" /var/lib/dpkg/info/qemu-system-x86.md5sums &&
		[[ $qemu_ver == 1:10.0.*+deb13u* ]] &&
		qemu-system-x86_64 --version | grep -q '^QEMU emulator version 10\.0\.'
}
check "premise: QEMU 10.0 from Debian 13's qemu-system-x86 ($qemu_ver), unmodified" qemu_from_trixie
check "premise: hwpoison-inject's corrupt-pfn" bash -c \
	'modprobe hwpoison_inject && [ -w /sys/kernel/debug/hwpoison/corrupt-pfn ]'
hp_before=$(cat /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages)
echo $((hp_before + vm_pages + 8)) >/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
check "premise: $vm_pages free 2 MiB pages for the guest's RAM ($(hp_free) free)" \
	test "$(hp_free)" -ge "$vm_pages"

# ---- the packaged example rules, as the README installs them
cp /usr/share/doc/mfr/examples/10-vms.conf /etc/mfrd/rules.d/
vm_rule_pushed() {
	mfrctl -j rules list | json "any(r.get('name_glob') == 'memory-backend-memfd' and
		r['action'] == 'keep' for r in d)"
}
check "10-vms.conf from the package: mfrd --check, systemctl reload mfrd" bash -c \
	'mfrd --check && systemctl reload mfrd'
check "... mfrd pushed its memory-backend-memfd rule" wait_until 60 vm_rule_pushed

# ---- the VM
hp0=$(hp_free)
check "systemd-run: QEMU as $vm_unit in machine.slice" systemd-run --unit="$vm_unit" \
	--slice=machine.slice --description="KVM guest $vm" \
	qemu-system-x86_64 -name "guest=$vm,process=$vm" -accel kvm -cpu host -smp 1 \
	-m "${vm_mem_mb}M" -nodefaults -no-user-config -display none \
	-object "memory-backend-memfd,id=ram0,size=${vm_mem_mb}M,hugetlb=on,hugetlbsize=2M,share=on,prealloc=on" \
	-machine q35,memory-backend=ram0 \
	-kernel "$E2E/vm/vmlinuz" -initrd "$E2E/vm/initramfs.cpio.gz" \
	-append "console=ttyS0 quiet panic=0 memcheck.wait=600" \
	-serial "file:$vm_dir/serial" -monitor "unix:$vm_dir/monitor,server=on,wait=off"
guest_ready() {
	grep -qs '^MEMCHECK \(target\|no target\)' "$vm_dir/serial" || ! systemctl is-active -q "$vm_unit"
}
wait_until 900 guest_ready
qemu_pid=$(unit_prop "$vm_unit" MainPID)
cp "$vm_dir/serial" "$SHARE/logs/$BOOT_TAG-vm-serial-ready.txt" 2>/dev/null
check "the guest's memory checker filled its memory (guest kernel: $(cat "$E2E/vm/version"))" \
	grep -q '^MEMCHECK target' "$vm_dir/serial"
kvm_used() {
	ls -d /sys/kernel/debug/kvm/"$qemu_pid"-* && [ "$(comm_of "$qemu_pid")" = "$vm" ]
}
comm_of() { cat "/proc/$1/comm"; }
check "QEMU (pid $qemu_pid, comm $vm) runs its guest on KVM (/sys/kernel/debug/kvm/$qemu_pid-*)" kvm_used
check "the guest's RAM is $vm_pages 2 MiB pages of the pool (free $hp0 -> $(hp_free))" \
	test $((hp0 - $(hp_free))) = "$vm_pages"
vm_memfd_kept() {
	mfrctl -j memfd list | json "any(m['name'] == 'memory-backend-memfd' and m['pid'] == $qemu_pid and
		m['comm'] == '$vm' and m.get('cgroup_path') == '$vm_cgroup' and m['policy'] == 'keep' and
		m.get('rule_id') for m in d)"
}
check "mfrctl -j memfd list: QEMU's memory-backend-memfd kept by the packaged rule, pid, comm $vm, cgroup $vm_cgroup" \
	vm_memfd_kept
metrics_memfds_kept=$(metric mfr_memfds_kept)

# ---- one uncorrected error under the guest's memory checker
target=$(sed -n 's/^MEMCHECK target gpa=\(0x[0-9a-f]*\) .*/\1/p' "$vm_dir/serial" | head -n 1)
hpa=$(hmp "gpa2hpa $target" | sed -n 's/.* is \(0x[0-9a-f]*\)$/\1/p')
vm_pfn=$((hpa / 4096))
check "host pfn $vm_pfn backs guest physical $target (QEMU's gpa2hpa: $hpa)" test "$vm_pfn" -gt 0
echo "$vm_pfn" >"$STATE/vm-pfn"
boot_id >"$STATE/vm-boot-id"
echo "E2E: # corrupt-pfn $vm_pfn (guest physical $target)"
check "echo $vm_pfn >/sys/kernel/debug/hwpoison/corrupt-pfn" \
	bash -c "echo $vm_pfn >/sys/kernel/debug/hwpoison/corrupt-pfn"

qemu_log() { journalctl -b -u "$vm_unit" -o cat --no-pager; }
qemu_injected_exact() {
	qemu_log | grep 'Guest MCE Memory Error' | tee /dev/stderr | grep -q "GUEST addr $target of type"
}
check "QEMU 10 passed the error to the guest at $target exactly (its log in the unit's journal)" \
	wait_until 120 qemu_injected_exact
vm_page_kept() {
	mfrctl -j poison list | json "any(p['pfn'] == $vm_pfn and p['state'] == 'kept' for p in d)"
}
check "mfrctl -j poison list: pfn $vm_pfn kept (the hugepage stays mapped)" wait_until 60 vm_page_kept
vm_page_journal() {
	journal_json MESSAGE_ID=$MSG_PAGE_POISONED MFR_PFN="$(printf '0x%x' "$vm_pfn")" | python3 -c "
import json, sys
es = [json.loads(l) for l in sys.stdin]
for e in es:
    print(e.get('MESSAGE'))
    print({k: v for k, v in e.items() if k.startswith('MFR_')})
sys.exit(0 if any(e.get('MFR_MEMFD') == 'memory-backend-memfd' and e.get('MFR_COMM') == '$vm' and
                  e.get('MFR_CGROUP') == '$vm_cgroup' and int(e.get('MFR_PID', 0)) == $qemu_pid
                  for e in es) else 1)"
}
check "journal: page-poisoned for pfn $vm_pfn names the VM (memfd, comm $vm, cgroup $vm_cgroup, pid)" \
	wait_until 30 vm_page_journal
vm_page_stored() {
	[ "$(sql "SELECT count(*) FROM poisoned_pages WHERE boot_id = '$(boot_id)' AND pfn = $vm_pfn
		AND memfd_name = 'memory-backend-memfd' AND comm = '$vm' AND cgroup_path = '$vm_cgroup'
		AND pid = $qemu_pid AND state = 'kept'")" = 1 ]
}
check "store: pfn $vm_pfn with the VM's memfd, comm, cgroup and pid, kept" wait_until 30 vm_page_stored
vm_metrics() {
	grep -E '^mfr_(raw_pages_kept|memfds_kept|poisoned_pages\{state="kept"\}) ' "$METRICS"
	metric_is mfr_raw_pages_kept 1 && grep -qx 'mfr_poisoned_pages{state="kept"} 1' "$METRICS"
}
check "metrics textfile: one kept page (mfr_raw_pages_kept 1, mfr_poisoned_pages{state=\"kept\"} 1)" \
	wait_until 30 vm_metrics
vm_by_cgroup() {
	mfrctl -j summary | json "any(r.get('cgroup') == '$vm_cgroup' and r.get('comm') == '$vm'
		and r['pages'] >= 1 for r in d.get('by_cgroup', []))"
}
check "mfrctl summary by cgroup: the VM ($vm_cgroup, $vm)" vm_by_cgroup

# ---- the guest: it saw the error at that address and read nothing wrong
guest_done() { grep -q '^MEMCHECK done' "$vm_dir/serial" || ! systemctl is-active -q "$vm_unit"; }
wait_until 300 guest_done
cp "$vm_dir/serial" "$SHARE/logs/$BOOT_TAG-vm-serial.txt"
grep -E 'MEMCHECK (mce|sigbus|kmsg|done|wrong)|Kernel panic|Memory failure' "$vm_dir/serial" | head -n 20 | diag
# QEMU 10 gives an AMD guest SUCCOR.  Who comes first decides the kind:
# QEMU handling the host's action-optional SIGBUS passes it on as a
# deferred error, which the guest's poller logs; a vCPU that reads the
# page before that takes a stage-2 fault, KVM's action-required SIGBUS,
# and the guest a machine check in the checker's user mode (seen on this
# rig's trixie image, where the guest runs slower).  Either way the guest
# gets one record, at the poisoned 4 KiB, and its kernel recovers the page
# (tests/vmm/memcheck.c prints each record once: "MEMCHECK mce n=N
# kind=K addr=A mode=M ...").
guest_recovered() {
	local gpfn
	gpfn=$(printf '%#x' $((target / 4096)))
	grep -E '^MEMCHECK (mce|sigbus) ' "$vm_dir/serial"
	[ "$(awk '/^MEMCHECK done/ { exit } /^MEMCHECK mce n=/ && !seen[$3]++' "$vm_dir/serial" | wc -l)" = 1 ] &&
		grep -Eq "^MEMCHECK mce n=1 (kind=(deferred|action-optional) addr=$target |kind=action-required addr=$target mode=user )" "$vm_dir/serial" &&
		grep -q "Memory failure: $gpfn: recovery action for .*: Recovered" "$vm_dir/serial"
}
check "the guest got one machine-check record (deferred, or action required in user mode), at $target exactly, and its kernel recovered the page" \
	guest_recovered
check "the guest's checker read no wrong word" bash -c "! grep -q '^MEMCHECK wrong' '$vm_dir/serial'"
check "the guest is still running after the error (QEMU's monitor: running)" bash -c \
	"systemctl is-active -q '$vm_unit' && python3 '$E2E/vm/hmp.py' '$vm_dir/monitor' 'info status' | grep -q running"

# ---- the VM stops: the hugepage is dissolved, only the poisoned 4 KiB stays offline
hc0=$(awk '/^HardwareCorrupted:/ { print $2 }' /proc/meminfo)
check "systemctl stop $vm_unit" systemctl stop "$vm_unit"
vm_offlined() {
	mfrctl -j poison list | json "any(p['pfn'] == $vm_pfn and p['state'] == 'offlined' for p in d)" &&
		[ "$(sql "SELECT state FROM poisoned_pages WHERE boot_id = '$(boot_id)' AND pfn = $vm_pfn")" = offlined ]
}
check "after QEMU exited: pfn $vm_pfn offlined in the module and in the store" wait_until 60 vm_offlined
check "... the kernel has it poisoned (KPF_HWPOISON)" pfns_hwpoisoned "$STATE/vm-pfn"
check "metrics: mfr_raw_pages_kept 0 again" wait_until 30 metric_is mfr_raw_pages_kept 0
echo "E2E: # HardwareCorrupted before the stop: $hc0 kB, now $(awk '/^HardwareCorrupted:/ { print $2 }' /proc/meminfo) kB; mfr_memfds_kept was $metrics_memfds_kept"

# The next stages expect their own rules only, and the pool they had.
rm -f /etc/mfrd/rules.d/10-vms.conf
check "10-vms.conf removed again: systemctl reload mfrd" systemctl reload mfrd
echo "$hp_before" >/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
