# SPDX-License-Identifier: GPL-2.0-or-later
# make test-vmm's 2 MiB action-optional scenario, opted in, as part of
# make test: Debian's unmodified QEMU with KVM (nested, the boot has an
# SVM vCPU) runs a guest whose RAM is a HugeTLB memfd that the packaged
# example rules opt in; one host page under the guest's memory checker
# gets corrupt-pfn.  The guest must get one machine check at that 4 KiB
# page's guest physical address, read no wrong word, and the host lose
# 4 KiB after QEMU exits.  The premise (SVM, nested paging, kvm_amd,
# QEMU unmodified, RAM in 2 MiB pages, the memfd opted in) is checked by
# tests/vmm/guest.sh itself; the image is built on the host (tests/run).
. ./lib.sh
[ -f "$MFR_ROOT/build/vmm/image/initramfs.cpio.gz" ] || {
	fail "no guest image: tests/vmm/image.sh did not run on the host"
	exit 1
}
# Its result line and logs stay in the checkout (build/vmm/tvmm-keep-2m).
dir=$MFR_ROOT/build/vmm/tvmm-keep-2m
rm -rf "$dir" && mkdir -p "$dir"
VMM_DIR=$dir VMM_SCENARIOS=keep-2m bash "$MFR_ROOT/tests/vmm/guest.sh" >"$dir/log" 2>&1
rc=$?
cat "$dir/log"
exit $rc
