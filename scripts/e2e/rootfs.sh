#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Debootstrap the root file system of the end-to-end test for Debian SUITE
# (bookworm, the default, or trixie), once: cached in
# $MFR_CACHE/e2e/rootfs-SUITE-<key>, keyed by the suite,
# scripts/e2e/packages and this script.  Prints the directory.  Needs
# root (debootstrap, chroot).
#
#   rootfs.sh [SUITE]
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

suite=${1:-bookworm}
E2E_MIRROR=${E2E_MIRROR:-http://deb.debian.org/debian}
here=$MFR_ROOT/scripts/e2e
key=$({
	echo "$suite"
	cat "$here/packages" "$here/rootfs.sh"
} | sha256sum | cut -c1-16)
dir=$MFR_CACHE/e2e/rootfs-$suite-$key
[ "$(id -u)" = 0 ] || die "rootfs.sh needs root (debootstrap)"

mkdir -p "$MFR_CACHE/e2e"
exec 9>"$MFR_CACHE/e2e/.rootfs.lock"
flock 9
if [ -f "$dir/.done" ]; then
	echo "$dir"
	exit 0
fi

rm -rf "$dir" "$dir.tmp"
# A package, or a package and the suites it is for.
include=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$here/packages" |
	awk -v s="$suite" 'NF == 1 { print $1; next } { for (i = 2; i <= NF; i++) if ($i == s) print $1 }' |
	paste -sd,)
echo "debootstrap $suite into $dir (from $E2E_MIRROR)" >&2
debootstrap --variant=minbase --include="$include" "$suite" "$dir.tmp" "$E2E_MIRROR" >&2

r=$dir.tmp
# Root without password on the serial console (for debugging by hand);
# the test itself is driven by a unit (mfr-e2e.service), not a login.
chroot "$r" passwd -d root >/dev/null
echo mfr-e2e >"$r/etc/hostname"
printf '/dev/vda / ext4 rw,errors=remount-ro 0 1\n' >"$r/etc/fstab"
# Deterministic, quiet boots: no machine-id churn, no units that wait for
# hardware the guest does not have.
: >"$r/etc/machine-id"
ln -sf /dev/null "$r/etc/systemd/system/getty@tty1.service"
ln -sf /dev/null "$r/etc/systemd/system/systemd-timesyncd.service"
chroot "$r" apt-get clean
rm -rf "$r/var/lib/apt/lists"/*_Packages
touch "$r/.done"
mv "$r" "$dir"
# Older root file systems of this suite (and those named before the suite
# was part of the name) are dead weight.
for old in "$MFR_CACHE/e2e"/rootfs-"$suite"-* "$MFR_CACHE/e2e"/rootfs-????????????????; do
	[ "$old" = "$dir" ] || [ ! -d "$old" ] || rm -rf "$old"
done
echo "$dir"
