#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Install what building and testing mfr needs on Debian 12: Debian packages
# (only the missing ones) and virtme-ng in a virtualenv under $MFR_CACHE.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

VIRTME_NG_VERSION=1.42
# --daemon: only what building mfrd and mfrctl and their host tests use.
daemon_packages=(
	make gcc libc6-dev pkg-config libnl-3-dev libnl-genl-3-dev libjson-c-dev
	libsmartcols-dev libsqlite3-dev libsystemd-dev libudev-dev groff-base
	uthash-dev
)
# --deb: that, and what "make deb" and its lintian check use; the
# pkg-config files naming systemd's and udev's directories are in systemd
# and udev on Debian 12, in systemd-dev from Debian 13 on.
deb_packages=(debhelper dh-dkms dpkg-dev lintian)
if [ "$(host_suite)" = bookworm ]; then
	deb_packages+=(systemd udev)
else
	deb_packages+=(systemd-dev)
fi
only_daemon=
case "${1:-}" in
--daemon) only_daemon=1 ;;
--deb) only_daemon=1; daemon_packages+=("${deb_packages[@]}") ;;
esac

packages=(
	# kernel build
	linux-source-6.12 build-essential bc bison flex libelf-dev libssl-dev
	dwarves cpio rsync ccache patch xz-utils kmod
	# VMs (virtme-ng builds its initramfs from busybox); qemu-system-x86
	# comes from bookworm-backports on Debian 12 (qemu_10 below)
	busybox-static python3-venv numactl
	# virtme-ng-init finds its I/O ports through udev's /dev/virtio-ports links
	udev
	# kernel selftests for make test-peer
	libnuma-dev libcap-dev
	# the test helpers' io_uring submissions (tests/helpers/pin_mce.c)
	liburing-dev
	# YNL code generator and CLI
	python3-yaml python3-jsonschema
	# checkpatch.pl SPDX checks
	python3-ply python3-git
	# mfrctl and mfrd
	pkg-config libnl-3-dev libnl-genl-3-dev libjson-c-dev libsmartcols-dev
	# jq: the VM tests check mfrctl's JSON by path; bash-completion for
	# the completion's host test
	jq bash-completion
	# man page checks
	groff-base
	# mfrd
	libsqlite3-dev libsystemd-dev libudev-dev uthash-dev
	# promtool: the metrics file and the example alerting rules
	prometheus
	# make e2e: kernel .debs (bindeb-pkg), the Debian 12 guest image;
	# debootstrap also makes the stock Debian 12 chroot the README's two
	# commands are tested in (tests/host/readme-commands-chroot.sh)
	debhelper debootstrap e2fsprogs
	# make deb: mfr-dkms and mfrd packages, checked by lintian
	dh-dkms dpkg-dev lintian
)

[ -n "$only_daemon" ] && packages=("${daemon_packages[@]}")
missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
if [ ${#missing[@]} -gt 0 ]; then
	echo "installing: ${missing[*]}" >&2
	$sudo apt-get update -q
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

[ -n "$only_daemon" ] && exit 0

# QEMU 10, Debian 13's, which gives an AMD guest MCA recovery (SUCCOR)
# that QEMU 7.2 does not: the VMM of make test-vmm and of every VM boot.
# On Debian 12 it comes from bookworm-backports, whose sources entry is
# added (the mirror of bookworm, the Debian archive key); -t for its
# seabios, no recommends (they pull Mesa and SPICE).  It upgrades
# qemu-system-x86, -common, -data and seabios, no new libraries.
qemu_10() {
	local have codename mirror
	have=$(dpkg-query -W -f '${Version}' qemu-system-x86 2>/dev/null || true)
	[ -n "$have" ] && dpkg --compare-versions "$have" ge 1:10~ && return 0
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	if [ "$codename" != bookworm ]; then
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends qemu-system-x86
		return
	fi
	if ! grep -rqsw 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		mirror=$("$MFR_ROOT/scripts/debian-mirror.sh" bookworm)
		echo "adding bookworm-backports ($mirror) to /etc/apt/sources.list.d/mfr-bookworm-backports.sources" >&2
		printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: %s\n' \
			"$mirror" /usr/share/keyrings/debian-archive-keyring.gpg |
			$sudo tee /etc/apt/sources.list.d/mfr-bookworm-backports.sources >/dev/null
	fi
	echo "installing qemu-system-x86 from bookworm-backports (have: ${have:-none})" >&2
	$sudo apt-get update -q
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends \
		-t bookworm-backports qemu-system-x86
}
qemu_10

if ! "$VNG" --version 2>/dev/null | grep -qF "$VIRTME_NG_VERSION"; then
	echo "installing virtme-ng $VIRTME_NG_VERSION into $MFR_VENV" >&2
	rm -rf "$MFR_VENV"
	"$PYTHON" -m venv "$MFR_VENV"
	"$MFR_VENV/bin/pip" install -q "virtme-ng==$VIRTME_NG_VERSION"
fi
