#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The make test-vmm guests: Debian's own linux-image-amd64, one per
# release (d12: Debian 12, 6.1; d13: Debian 13, 6.12), fetched with
# "apt-get download" (tests/vmm/apt.sh) and cached in $MFR_VMM_CACHE by
# package version, each with an initramfs of busybox-static, the kernel's
# msr module, gpa_touch.ko (tests/vmm/gpa-touch, built against that
# kernel's own headers) and memcheck.c.  Writes build/vmm/image-GUEST/
# (vmlinuz, initramfs.cpio.gz, version) and build/vmm/tools/kvm-mce-cap.
#
#   image.sh [GUEST...]      (default: d12 d13)
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"

MFR_VMM_CACHE=${MFR_VMM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mfr-vmm}
export MFR_VMM_CACHE
apt=$MFR_ROOT/tests/vmm/apt.sh
guests=${*:-d12 d13}
CC=${CC:-gcc}

# ldd fails on a static executable.
! ldd /bin/busybox >/dev/null 2>&1 ||
	die "/bin/busybox is not static: install busybox-static"

# depends CODENAME PKG PATTERN: the first dependency of PKG matching PATTERN.
depends() {
	"$apt" "$1" apt-cache depends "$2" 2>/dev/null |
		sed -n "s/^ *Depends: \($3\)\$/\1/p" | head -n1
}

# fetch_kernel GUEST CODENAME: the kernel, its msr module and its headers
# (with the kbuild tools) unpacked in the cache; prints the cache dir.
fetch_kernel() {
	local guest=$1 codename=$2 pkg ver hdr common kbuild cache kb d
	# The metapackage names the kernel package of the moment.
	pkg=$(depends "$codename" linux-image-amd64 'linux-image-[0-9].*-amd64')
	[ -n "$pkg" ] || die "$codename knows no linux-image-amd64"
	ver=$("$apt" "$codename" apt-cache policy "$pkg" | sed -n 's/^ *Candidate: //p')
	cache=$MFR_VMM_CACHE/$guest-$pkg-$ver
	if [ ! -f "$cache/.done" ]; then
		hdr=${pkg/linux-image-/linux-headers-}
		common=$(depends "$codename" "$hdr" 'linux-headers-.*-common')
		kbuild=$(depends "$codename" "$hdr" 'linux-kbuild-.*')
		[ -n "$common" ] && [ -n "$kbuild" ] || die "$codename: no headers for $pkg"
		echo "image: fetching $pkg $ver and its headers ($codename) into $cache" >&2
		rm -rf "$cache" && mkdir -p "$cache/deb"
		(cd "$cache/deb" && "$apt" "$codename" apt-get download -q \
			"$pkg=$ver" "$hdr=$ver" "$common=$ver" "$kbuild=$ver" >&2)
		for d in "$cache"/deb/*.deb; do dpkg-deb -x "$d" "$cache/root"; done
		cp "$cache"/root/boot/vmlinuz-* "$cache/vmlinuz"
		kb=$(find "$cache/root" -path '*/modules/*' -name 'msr.ko*' | head -n1)
		case $kb in
		*.xz) xz -dc "$kb" >"$cache/msr.ko" ;;
		*) cp "$kb" "$cache/msr.ko" ;;
		esac
		# The headers (usr/src) and kbuild tools (usr/lib/linux-kbuild-*)
		# stay where the package put them, relative to each other; the
		# headers' Makefile includes its -common part by absolute path.
		rm -rf "$cache/root/lib" "$cache/root/usr/lib/modules" "$cache/root/boot"
		sed -i "s|^include /usr/src/|include $cache/root/usr/src/|" \
			"$cache"/root/usr/src/linux-headers-*-amd64/Makefile
		# The BTF base: without it kbuild skips BTF for the module,
		# which needs a pahole as new as the kernel's.
		rm -f "$cache"/root/usr/src/linux-headers-*-amd64/vmlinux
		rm -rf "$cache/deb"
		fix_kbuild_tools "$cache/root/usr/lib/$kbuild"
		touch "$cache/.done"
	fi
	echo "$cache"
}

# fix_kbuild_tools KBUILD_DIR: Debian 13's modpost and objtool need glibc
# 2.38 (C23's strtol), Debian 12 has 2.36: where they cannot run here,
# the ones built with our own 6.12 kernel (scripts/build-kernel.sh, the
# same upstream release) take their place.
fix_kbuild_tools() {
	local kb=$1 kdir real
	real=$(ls "$kb"/scripts/mod/modpost.real-lsb-64 "$kb"/tools/objtool/objtool.real-x86 2>/dev/null || true)
	[ -n "$real" ] || return 0
	# shellcheck disable=SC2086
	grep -q 'not found' <<<"$(ldd $real 2>&1)" || return 0
	kdir=${KDIR:-$("$MFR_ROOT/scripts/build-kernel.sh")}
	echo "image: $(basename "$kb")'s modpost and objtool need a newer glibc: using $kdir's" >&2
	install -m 0755 "$kdir/scripts/mod/modpost" "$kb/scripts/mod/modpost"
	install -m 0755 "$kdir/tools/objtool/objtool" "$kb/tools/objtool/objtool"
}

# build_touch_module CACHE OUT: gpa_touch.ko against that kernel's headers.
build_touch_module() {
	local cache=$1 out=$2 h kcc ours
	h=$(ls -d "$cache"/root/usr/src/linux-headers-*-amd64)
	rm -rf "$out" && mkdir -p "$out"
	cp "$MFR_ROOT"/tests/vmm/gpa-touch/{Kbuild,gpa_touch.c} "$out/"
	# A kernel built by a newer gcc than ours (Debian 13's: gcc 14) asks
	# for -fmin-function-alignment, which gcc 12 lacks: kbuild then uses
	# -falign-functions, the same alignment.
	kcc=$(sed -n 's/^CONFIG_GCC_VERSION=//p' "$h/.config")
	ours=$("$CC" -dumpfullversion | awk -F. '{ printf "%d%02d%02d", $1, $2, $3 }')
	local extra=()
	[ "${kcc:-0}" -le "$ours" ] || extra+=(CONFIG_CC_HAS_MIN_FUNCTION_ALIGNMENT=)
	make -s -C "$h" M="$out" CC="$CC" "${extra[@]}" modules >&2
}

mkdir -p "$MFR_ROOT/build/vmm/tools"
# Run in the outer VM, next to QEMU: what KVM lets QEMU offer.
$CC -O2 -Wall -Wextra -Werror ${CPPFLAGS:-} ${CFLAGS:-} ${LDFLAGS:-} \
	-o "$MFR_ROOT/build/vmm/tools/kvm-mce-cap" "$MFR_ROOT/tests/vmm/kvm-mce-cap.c"
for guest in $guests; do
	case $guest in
	d12) codename=bookworm ;;
	d13) codename=trixie ;;
	*) die "image.sh: unknown guest $guest (d12 or d13)" ;;
	esac
	cache=$(fetch_kernel "$guest" "$codename")
	out=$MFR_ROOT/build/vmm/image-$guest
	rm -rf "$out" && mkdir -p "$out/root"/{bin,dev,proc,sys,lib}
	build_touch_module "$cache" "$out/gpa-touch"
	cp /bin/busybox "$out/root/bin/busybox"
	cp "$cache/msr.ko" "$out/gpa-touch/gpa_touch.ko" "$out/root/lib/"
	install -m 0755 "$MFR_ROOT/tests/vmm/init" "$out/root/init"
	$CC -static -O2 -Wall -Wextra -Werror ${CPPFLAGS:-} ${CFLAGS:-} ${LDFLAGS:-} \
		-o "$out/root/memcheck" "$MFR_ROOT/tests/vmm/memcheck.c"
	(cd "$out/root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out/initramfs.cpio.gz"
	cp "$cache/vmlinuz" "$out/vmlinuz"
	basename "$cache" | sed "s/^$guest-//" >"$out/version"
	echo "image: $guest: $(cat "$out/version") in $out" >&2
done
