# SPDX-License-Identifier: GPL-2.0-or-later
# make test-vmm's opted-in 2 MiB scenario with the host's real
# machine-check path, as part of make test: Debian 13's guest on QEMU 10
# (bookworm-backports, unmodified) with KVM (nested: the boot has an AMD
# vCPU with SVM), guest RAM a HugeTLB memfd that the packaged example
# rules opt in; the outer emulator's monitor puts a deferred error on one
# host page under the guest's memory checker (tests/vmm/outer-monitor.sh,
# started by tests/run), the host kernel's MCE poller hands it to
# memory-failure.  The guest must get one deferred error at that 4 KiB
# page's guest physical address, survive it (QEMU 10 gives the AMD guest
# SUCCOR), read no wrong word, lose that 4 KiB only, and the host lose
# 4 KiB after QEMU exits.  The premise (SVM, nested paging, kvm_amd, QEMU
# unmodified, SUCCOR, RAM in 2 MiB pages, the memfd opted in) is checked
# by tests/vmm/guest.sh itself; the image is built on the host (tests/run).
. ./lib.sh
[ -f "$MFR_ROOT/build/vmm/image-d13/initramfs.cpio.gz" ] || {
	fail "no guest image: tests/vmm/image.sh did not run on the host"
	exit 1
}
# Its result line and logs stay in the checkout (build/vmm/tvmm-keep-2m-mce).
dir=$MFR_ROOT/build/vmm/tvmm-keep-2m-mce
rm -rf "$dir" && mkdir -p "$dir"
VMM_DIR=$dir VMM_SCENARIOS=keep-2m-mce/d13/10 bash "$MFR_ROOT/tests/vmm/guest.sh" >"$dir/log" 2>&1
rc=$?
cat "$dir/log"
exit $rc
