#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Assemble the disk of one end-to-end run from a cached root file system
# (rootfs.sh): the patched kernel's .debs installed with dpkg, then mfr's
# own packages (mfr-dkms, whose postinst builds mfr.ko for the hooked
# kernel with the image's DKMS, and mfrd), as a fleet's image build would;
# the test helpers, the guest side of the test (tests/e2e/) started by
# mfr-e2e.service, and the KVM guest's kernel and initramfs
# (tests/vmm/image.sh) when VM_IMAGE is given.  Then mkfs.ext4 -d turns
# the tree into OUT/disk.img, without loop devices; the kernel to boot is
# copied to OUT/vmlinuz.  Needs root (chroot).
#
#   image.sh ROOTFS KERNEL_DEBS_DIR MFR_DEBS_DIR OUT_DIR [VM_IMAGE_DIR]
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

rootfs=${1:?usage: image.sh ROOTFS KERNEL_DEBS_DIR MFR_DEBS_DIR OUT_DIR [VM_IMAGE_DIR]}
debs=${2:?}
mdebs=${3:?}
out=${4:?}
vm_image=${5:-}
E2E_DISK_SIZE=${E2E_DISK_SIZE:-4G}
root=$out/root
log=$out/image.log

rm -rf "$root"
cp -a "$rootfs" "$root"
rm -f "$root/.done"
trap 'umount "$root/proc" 2>/dev/null || true' EXIT
mount -t proc proc "$root/proc"

mkdir -p "$root/tmp/debs"
cp "$debs"/linux-image-*.deb "$debs"/linux-headers-*.deb "$root/tmp/debs/"
# The test kernel boots without an initramfs (QEMU -kernel, its root
# driver built in) and its config has no initramfs decompressor; Debian
# 13's stock kernel brings initramfs-tools, whose kernel hook would fail
# on it: the hook is set aside (dpkg-divert) while it installs.
hook=/etc/kernel/postinst.d/initramfs-tools
chroot "$root" sh -ec "
	if [ -e $hook ]; then dpkg-divert --local --rename --divert $hook.e2e --add $hook; fi
	dpkg -i /tmp/debs/*.deb
	if [ -e $hook.e2e ]; then dpkg-divert --local --rename --remove $hook; fi
" >>"$log" 2>&1 || { tail -n 30 "$log" >&2; die "dpkg -i of the kernel packages failed"; }
rm -rf "$root/tmp/debs"

mkdir -p "$root/root/debs"
cp "$mdebs"/mfr-dkms_*.deb "$mdebs"/mfrd_*_amd64.deb "$root/root/debs/"
chroot "$root" sh -c 'dpkg -i /root/debs/mfr-dkms_*.deb /root/debs/mfrd_*.deb' >>"$log" 2>&1 ||
	{ tail -n 30 "$log" >&2; die "dpkg -i of mfr-dkms and mfrd failed"; }
# dkms.conf, for the version the guest checks
mkdir -p "$root/root/mfr"
cp "$MFR_ROOT/dkms.conf" "$root/root/mfr/"

e2e=$root/opt/mfr-e2e
mkdir -p "$e2e/bin"
cp "$MFR_ROOT"/build/helpers/* "$e2e/bin/"
cp "$MFR_ROOT"/tests/e2e/*.sh "$e2e/"
if [ -n "$vm_image" ]; then
	mkdir -p "$e2e/vm"
	cp "$vm_image/vmlinuz" "$vm_image/initramfs.cpio.gz" "$vm_image/version" \
		"$MFR_ROOT/tests/vmm/hmp.py" "$e2e/vm/"
fi
for unit in "$MFR_ROOT"/tests/e2e/*.service; do
	cp "$unit" "$root/etc/systemd/system/"
done
ln -sf /etc/systemd/system/mfr-e2e.service \
	"$root/etc/systemd/system/multi-user.target.wants/mfr-e2e.service"
# The test is unattended: no login prompt on the console it writes to.
ln -sf /dev/null "$root/etc/systemd/system/serial-getty@ttyS0.service"

umount "$root/proc"
cp "$root/boot/vmlinuz-"*-mfr "$out/vmlinuz"
rm -f "$out/disk.img"
mkfs.ext4 -q -F -L mfr-e2e -d "$root" "$out/disk.img" "$E2E_DISK_SIZE" >>"$log" 2>&1 ||
	{ tail -n 30 "$log" >&2; die "mkfs.ext4 -d failed"; }
rm -rf "$root"
