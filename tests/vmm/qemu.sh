#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The VMMs of make test-vmm, Debian's packages as they are:
#   10    QEMU 10 as scripts/install-deps.sh installs it (Debian 13's own, or
#         bookworm-backports on Debian 12): the system's
#   7.2   Debian 12's QEMU 7.2, fetched with apt-get download (bookworm)
#         and unpacked in $MFR_VMM_CACHE, never installed
# Makes build/vmm/qemu-VERSION a link to a root R: R/usr/bin/qemu-system-
# x86_64 is that QEMU, R/usr/share/{qemu,seabios} its firmware,
# R/usr/lib/x86_64-linux-gnu/qemu its modules and
# R/var/lib/dpkg/info/qemu-system-x86.md5sums the package's md5sums.  The
# test VM sees the host's root and the checkout, so the link works there.
#
#   qemu.sh VERSION...
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"

MFR_VMM_CACHE=${MFR_VMM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mfr-vmm}
export MFR_VMM_CACHE
apt=$MFR_ROOT/tests/vmm/apt.sh
mkdir -p "$MFR_ROOT/build/vmm"

for want in "$@"; do
	case $want in
	10)
		have=$(dpkg-query -W -f '${Version}' qemu-system-x86 2>/dev/null || true)
		case $have in
		1:10.*) ;;
		*) die "qemu.sh: the installed qemu-system-x86 is '${have:-none}', not 10.x: run make deps" ;;
		esac
		root=/
		;;
	7.2)
		# Debian 12's, whatever this host has installed.
		ver=$("$apt" bookworm apt-cache madison qemu-system-x86 |
			awk -F' *[|] *' '$2 ~ /^1:7\.2/ { print $2; exit }')
		[ -n "$ver" ] || die "qemu.sh: bookworm offers no qemu-system-x86 7.2"
		root=$MFR_VMM_CACHE/qemu-${ver//:/_}
		if [ ! -f "$root/.done" ]; then
			echo "qemu.sh: fetching qemu-system-x86 $ver into $root" >&2
			rm -rf "$root" && mkdir -p "$root/deb" "$root/var/lib/dpkg/info"
			# Each from bookworm itself, as Debian 12 installs it.
			(cd "$root/deb" && "$apt" bookworm apt-get download -q \
				qemu-system-x86/bookworm qemu-system-common/bookworm \
				qemu-system-data/bookworm seabios/bookworm >&2)
			for d in "$root"/deb/*.deb; do
				dpkg-deb -x "$d" "$root"
				pkg=$(dpkg-deb -f "$d" Package)
				dpkg-deb --ctrl-tarfile "$d" | tar -xO ./md5sums \
					>"$root/var/lib/dpkg/info/$pkg.md5sums"
			done
			rm -rf "$root/deb"
			"$root/usr/bin/qemu-system-x86_64" --version | grep -q 'version 7\.2' ||
				die "qemu.sh: $root does not hold QEMU 7.2"
			touch "$root/.done"
		fi
		;;
	*) die "qemu.sh: no VMM '$want' (10 or 7.2)" ;;
	esac
	ln -sfn "$root" "$MFR_ROOT/build/vmm/qemu-$want"
	echo "qemu.sh: QEMU $want: $root" >&2
done
