#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Package the patched kernel that scripts/build-kernel.sh built as Debian
# packages (linux-image, linux-headers) with the kernel's own "bindeb-pkg",
# in the cached build tree itself, with the same compiler, build number and
# build stamp as the build: make finds everything up to date and only
# packs (a copy of the tree would not do: tools/objtool records absolute
# paths, relinks, and every object then depends on a newer objtool).
# Cached in <kernel dir>/debs/ for the build it packed.  Prints the
# directory holding the .deb files.
#
# The headers package gets the kernel's .config added: bookworm's dkms
# checks BUILD_EXCLUSIVE_CONFIG only when $kernel_source_dir/.config exists.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

kdir=$(dirname "$("$MFR_ROOT/scripts/build-kernel.sh")")
src=$kdir/linux
debs=$kdir/debs
mkdir -p "$debs"
# The build's own lock: no kernel build runs in the tree meanwhile.
exec 9>"$kdir/.lock"
flock 9
# .done names the build it packed (the key in .built): the build
# directory is reused for every series and config.
key=$(cat "$kdir/.built")
if [ "$(cat "$debs/.done" 2>/dev/null)" = "$key" ]; then
	echo "$debs"
	exit 0
fi
command -v dh_testdir >/dev/null || die "debhelper missing: run 'make deps'"

obj=$kdir/obj
rm -rf "$debs"/*.deb "$kdir"/*.deb "$kdir"/*.buildinfo "$kdir"/*.changes "$obj/debian"
release=$(cat "$obj/include/config/kernel.release")
# The revision is the build number the kernel already carries (#N in
# uname -v): bindeb-pkg passes it on as KBUILD_BUILD_VERSION.
revision=$(cat "$obj/.version")
stamp=$(stat -c %Y "$obj/vmlinux")
export KBUILD_BUILD_TIMESTAMP="2025-01-01 00:00 UTC" KBUILD_BUILD_USER=mfr KBUILD_BUILD_HOST=mfr
export CCACHE_DIR=${CCACHE_DIR:-$MFR_CACHE/ccache}
export CCACHE_BASEDIR=$kdir CCACHE_NOHASHDIR=1
echo "packaging $release from $obj (bindeb-pkg)" >&2
make -C "$src" O="$obj" ARCH=x86_64 CC="ccache gcc" \
	KDEB_PKGVERSION="$release-$revision" DPKG_FLAGS=-d \
	-j"$(($(nproc) + 1))" bindeb-pkg >"$debs/bindeb-pkg.log" 2>&1 ||
	{ tail -n 40 "$debs/bindeb-pkg.log" >&2; die "bindeb-pkg failed (log: $debs/bindeb-pkg.log)"; }
[ "$(stat -c %Y "$obj/vmlinux")" = "$stamp" ] ||
	echo "warning: bindeb-pkg relinked vmlinux (see $debs/bindeb-pkg.log)" >&2
mv "$kdir"/*.deb "$debs"/
rm -rf "$kdir"/*.buildinfo "$kdir"/*.changes "$obj/debian"

hdr=$(ls "$debs"/linux-headers-"$release"_*.deb)
ls "$debs"/linux-image-"$release"_*.deb >/dev/null
tmp=$debs/headers.tmp
rm -rf "$tmp"
dpkg-deb -R "$hdr" "$tmp"
cp "$obj/.config" "$tmp/usr/src/linux-headers-$release/.config"
(cd "$tmp" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' |
	xargs -0 md5sum >DEBIAN/md5sums)
dpkg-deb -Zxz -b "$tmp" "$hdr" >/dev/null
rm -rf "$tmp"
echo "$key" >"$debs/.done"
echo "$debs"
