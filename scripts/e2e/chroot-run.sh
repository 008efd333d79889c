#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Run COMMAND as root in the build chroot ROOT (scripts/e2e/build-chroot.sh)
# with this checkout, $MFR_CACHE and $CCACHE_DIR at the same paths as on
# the host, so that the build trees and ccache's entries a command makes
# there are the ones the host sees.  The mounts live in a mount namespace
# of their own and go away with it, whatever COMMAND does.  The
# environment is a clean one plus MFR_CACHE, CCACHE_DIR, MFR_KERNEL_SUITE
# and KERNEL_FLAVOR.  Needs root.
#
#   chroot-run.sh ROOT COMMAND [ARGS...]
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

root=${1:?usage: chroot-run.sh ROOT COMMAND [ARGS...]}
shift
[ $# -gt 0 ] || die "usage: chroot-run.sh ROOT COMMAND [ARGS...]"
[ -x "$root/bin/sh" ] || die "$root is not a chroot"
[ "$(id -u)" = 0 ] || die "chroot-run.sh needs root (mount, chroot)"
export CCACHE_DIR=${CCACHE_DIR:-$MFR_CACHE/ccache}
export MFR_CACHE KERNEL_FLAVOR MFR_KERNEL_SUITE=${MFR_KERNEL_SUITE:-}
mkdir -p "$MFR_CACHE" "$CCACHE_DIR"

# Binds, outermost first (the cache may hold the checkout or ccache).
binds=$(printf '%s\n' "$MFR_CACHE" "$CCACHE_DIR" "$MFR_ROOT" | awk '!seen[$0]++' |
	awk '{ print length, $0 }' | sort -n | cut -d' ' -f2-)
exec unshare --mount --propagation private bash -euc '
root=$1
binds=$2
shift 2
mount -t proc proc "$root/proc"
# apt logs through a terminal of its own.
mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$root/dev/pts"
while IFS= read -r d; do
	[ -n "$d" ] || continue
	mkdir -p "$root$d"
	mount --bind "$d" "$root$d"
done <<<"$binds"
exec chroot "$root" env -i HOME=/root LANG=C.UTF-8 \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	MFR_CACHE="$MFR_CACHE" CCACHE_DIR="$CCACHE_DIR" \
	MFR_KERNEL_SUITE="$MFR_KERNEL_SUITE" KERNEL_FLAVOR="$KERNEL_FLAVOR" \
	DEBIAN_FRONTEND=noninteractive "$@"
' chroot-run "$root" "$binds" "$@"
