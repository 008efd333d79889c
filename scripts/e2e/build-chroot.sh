#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The build chroot of distribution SUITE (trixie): a debootstrapped root
# with that distribution's compiler, linux-source-6.12, debhelper, dkms
# tooling and mfr's Build-Depends, where make e2e builds what a host of
# that distribution installs (the patched kernel's .debs, mfr's .debs), as
# its operators would build them: on that distribution.  Cached in
# $MFR_CACHE/e2e/build-SUITE-<key>, keyed by scripts/e2e/build-packages,
# debian/control, this script and the linux-source-6.12 version the
# suite offers now (a security update makes a new chroot).  Prints the
# directory.  Needs root (debootstrap, chroot).
#
#   build-chroot.sh SUITE
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

suite=${1:?usage: build-chroot.sh SUITE}
here=$MFR_ROOT/scripts/e2e
[ "$(id -u)" = 0 ] || die "build-chroot.sh needs root (debootstrap)"

source_version=$("$MFR_ROOT/scripts/suite-apt.sh" "$suite" apt-cache policy linux-source-6.12 |
	sed -n 's/^ *Candidate: //p')
[ -n "$source_version" ] && [ "$source_version" != "(none)" ] ||
	die "$suite offers no linux-source-6.12"
key=$({
	echo "$suite $source_version"
	cat "$here/build-packages" "$here/build-chroot.sh" "$MFR_ROOT/debian/control"
} | sha256sum | cut -c1-16)
dir=$MFR_CACHE/e2e/build-$suite-$key

mkdir -p "$MFR_CACHE/e2e"
exec 9>"$MFR_CACHE/e2e/.build-$suite.lock"
flock 9
if [ -f "$dir/.done" ]; then
	echo "$dir"
	exit 0
fi

mirror=$("$MFR_ROOT/scripts/debian-mirror.sh" bookworm)
r=$dir.tmp
rm -rf "$dir" "$r"
packages=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/build-packages" | tr '\n' ' ')
echo "build chroot: debootstrap $suite into $dir (from $mirror)" >&2
# apt, not debootstrap, resolves the packages: debootstrap's resolver
# cannot configure lintian's Perl dependencies.
debootstrap --variant=minbase "$suite" "$r" "$mirror" >&2
# The security suite too: linux-source-6.12's updates come from there.
# The chroot's own keyring (its debian-archive-keyring) checks them.
"$MFR_ROOT/scripts/suite-apt.sh" "$suite" --sources | sed 's/ \[signed-by=[^]]*\]//' \
	>"$r/etc/apt/sources.list"
cp -L /etc/resolv.conf "$r/etc/resolv.conf"
"$here/chroot-run.sh" "$r" sh -ec "
	apt-get update -q
	apt-get install -y -q --no-install-recommends $packages linux-source-6.12=$source_version
	apt-get build-dep -y -q --no-install-recommends '$MFR_ROOT'
	apt-get clean
" >&2
[ "$("$here/chroot-run.sh" "$r" dpkg-query -W -f '${Version}' linux-source-6.12)" = "$source_version" ] ||
	die "the $suite chroot did not get linux-source-6.12 $source_version"
rm -f "$r/etc/resolv.conf"
touch "$r/.done"
mv "$r" "$dir"
for old in "$MFR_CACHE/e2e/build-$suite"-*; do
	[ "$old" = "$dir" ] || [ ! -d "$old" ] || rm -rf --one-file-system "$old"
done
echo "$dir"
