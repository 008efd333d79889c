#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The make test-vmm guest: Debian's own linux-image-amd64 kernel (fetched
# with "apt-get download", cached in $MFR_VMM_CACHE by package version)
# and an initramfs of busybox-static, the msr module and memcheck.c.
# Prints the directory holding vmlinuz and initramfs.cpio.gz.
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"

MFR_VMM_CACHE=${MFR_VMM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mfr-vmm}
out=$MFR_ROOT/build/vmm/image

# The metapackage names the kernel package of the moment.
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n1)
[ -n "$pkg" ] || die "apt-cache knows no linux-image-amd64 (apt-get update?)"
ver=$(apt-cache policy "$pkg" | sed -n 's/^ *Candidate: //p')
cache=$MFR_VMM_CACHE/$pkg-$ver
if [ ! -f "$cache/.done" ]; then
	echo "image: fetching $pkg $ver into $cache" >&2
	rm -rf "$cache" && mkdir -p "$cache/deb"
	# apt's _apt user must be able to write where it downloads.
	(cd "$cache/deb" && chmod 777 . && apt-get download -q "$pkg=$ver" >&2)
	dpkg-deb -x "$cache"/deb/*.deb "$cache/root"
	cp "$cache"/root/boot/vmlinuz-* "$cache/vmlinuz"
	cp "$(find "$cache/root/lib/modules" -name msr.ko)" "$cache/msr.ko"
	rm -rf "$cache/root" "$cache/deb"
	touch "$cache/.done"
fi

rm -rf "$out" && mkdir -p "$out/root"/{bin,dev,proc,sys,lib}
cp /bin/busybox "$out/root/bin/busybox"
# ldd fails on a static executable.
! ldd /bin/busybox >/dev/null 2>&1 ||
	die "/bin/busybox is not static: install busybox-static"
cp "$cache/msr.ko" "$out/root/lib/msr.ko"
install -m 0755 "$MFR_ROOT/tests/vmm/init" "$out/root/init"
${CC:-gcc} -static -O2 -Wall -Wextra -Werror ${CPPFLAGS:-} ${CFLAGS:-} ${LDFLAGS:-} \
	-o "$out/root/memcheck" "$MFR_ROOT/tests/vmm/memcheck.c"
# Run in the outer VM, next to QEMU: what KVM lets QEMU offer.
${CC:-gcc} -O2 -Wall -Wextra -Werror ${CPPFLAGS:-} ${CFLAGS:-} ${LDFLAGS:-} \
	-o "$out/kvm-mce-cap" "$MFR_ROOT/tests/vmm/kvm-mce-cap.c"
(cd "$out/root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initramfs.cpio.gz"
cp "$cache/vmlinuz" "$out/vmlinuz"
echo "$pkg $ver" >"$out/version"
echo "$out"
