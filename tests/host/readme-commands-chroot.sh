#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The README's two commands, read from README.md, on a stock Debian 12
# and a stock Debian 13 whose package lists are empty (Debian's container
# images, cloud images before their first update): a "debootstrap
# --variant=minbase bookworm" (and "trixie") chroot with nothing in
# /var/lib/apt/lists.  Each line runs in a fresh copy: as root on a
# system without sudo, and as a user with passwordless sudo (as cloud
# images set one up); Debian 12 gets all four cases, Debian 13 the make
# demo line as root and the make test line as the user (each line once,
# each kind of user once: the apt part of the two lines is the same).
# apt runs for real, from the Debian mirror the host's apt uses
# (scripts/debian-mirror.sh); a stand-in for make ahead of /usr/bin on
# PATH records how it was started and stops the line there.  Then make
# must be installed.  The two distributions run side by side (most of
# the time is waiting for the mirror and dpkg).
#
# The pristine chroot is cached as a tarball in $MFR_CACHE/readme-chroot,
# keyed by what shapes it: the suite, the mirror, the architecture,
# debootstrap's version, the point release the suite's package lists
# name (scripts/suite-apt.sh), and the recipe (build_pristine).  Building
# it takes a minute or two, unpacking it seconds; each case is an overlay
# on the unpacked tree, not a copy.  Needs root (debootstrap, chroot,
# mount) and overlayfs; re-runs itself through sudo when not root.
#
#   readme-commands-chroot.sh [SUITE [WHO:TARGET...]]
#     SUITE bookworm or trixie; WHO root or user; TARGET demo or test
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"
. "$MFR_ROOT/tests/host/lib-readme.sh"

cache=$MFR_CACHE/readme-chroot
user=newcomer

if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || die "needs root (debootstrap, chroot, mount) and there is no sudo"
	mkdir -p "$cache" # owned by the user, not by root
	exec sudo env MFR_CACHE="$MFR_CACHE" "$0" "$@"
fi
command -v debootstrap >/dev/null ||
	die "no debootstrap: scripts/install-deps.sh (make deps) installs it"

# Both distributions, side by side; their output one after the other.
if [ $# = 0 ]; then
	logs=$(mktemp -d)
	"$0" bookworm >"$logs/bookworm" 2>&1 &
	bookworm=$!
	"$0" trixie root:demo user:test >"$logs/trixie" 2>&1 &
	trixie=$!
	rc=0
	wait "$bookworm" || rc=1
	wait "$trixie" || rc=1
	sed 's/^/bookworm: /' "$logs/bookworm"
	sed 's/^/trixie: /' "$logs/trixie"
	rm -rf "$logs"
	[ "$rc" = 0 ] && echo "all README command checks passed on both distributions"
	exit "$rc"
fi
SUITE=$1
shift
case $SUITE in
bookworm | trixie) ;;
*) die "SUITE: bookworm or trixie, not '$SUITE'" ;;
esac
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(root:demo root:test user:demo user:test)

start=$SECONDS
declare -A line
line[demo]=$(readme_command demo)
line[test]=$(readme_command test)
mirror=$("$MFR_ROOT/scripts/debian-mirror.sh")
arch=$(dpkg --print-architecture)
echo "README, make demo: ${line[demo]}"
echo "README, make test: ${line[test]}"
echo "mirror (the host's apt): $mirror; suite $SUITE; cases ${cases[*]}"

failed=0
ok() { echo "ok - $1"; }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }

# Disk, not tmpfs: the trees take some 300 MB.
work=$(mktemp -d "${TMPDIR:-/var/tmp}/mfr-readme-chroot.XXXXXX")
mounts_under_work() {
	findmnt -rn -o TARGET | awk -v p="$work/" 'index($0, p) == 1' | sort -r
}
# Mounts first, innermost first; the tree only once none is left.
cleanup() {
	local m
	for m in $(mounts_under_work); do
		umount "$m" 2>/dev/null || umount -l "$m" || true
	done
	if [ -n "$(mounts_under_work)" ]; then
		echo "warning: mounts left under $work, not removing it" >&2
	else
		rm -rf --one-file-system "$work"
	fi
	echo "total: $((SECONDS - start)) s"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# build_pristine DIR: a minbase bookworm as a stock image holds it: no
# package lists, no downloaded .debs, no resolv.conf of the machine that
# built it.
build_pristine() {
	debootstrap --variant=minbase --arch="$arch" "$SUITE" "$1" "$mirror"
	rm -rf "${1:?}"/var/lib/apt/lists/* "$1"/var/cache/apt/archives/*.deb
	rm -f "$1/etc/resolv.conf"
}
point=$("$MFR_ROOT/scripts/suite-apt.sh" "$SUITE" apt-get indextargets --format '$(VERSION)' \
	'Identifier: Packages' "Repo-URI: $mirror/" "Codename: $SUITE" 2>/dev/null | head -n1)
key=$({
	echo "$SUITE $arch $mirror ${point:-unknown}"
	dpkg-query -W -f '${Version}\n' debootstrap
	declare -f build_pristine
} | sha256sum | cut -c1-16)
tarball=$cache/$SUITE-minbase-$arch-$key.tar.gz

# One pristine tree per run, unpacked under the lock: a run with another
# key may replace the tarball meanwhile.
stock=$work/stock
mkdir -p "$cache"
exec 9>"$cache/.lock-$SUITE"
flock 9
if [ -f "$tarball" ]; then
	echo "pristine chroot: $tarball (cached, $SUITE ${point:-point release unknown})"
else
	t=$SECONDS
	echo "pristine chroot: debootstrap --variant=minbase $SUITE from $mirror"
	build_pristine "$work/build" >"$work/debootstrap.log" 2>&1 ||
		{ tail -n 30 "$work/debootstrap.log"; die "debootstrap failed (log above)"; }
	tar -C "$work/build" -czf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
	for old in "$cache/$SUITE-minbase-"*.tar.gz; do
		[ "$old" = "$tarball" ] || rm -f "$old"
	done
	[ -z "${SUDO_UID:-}" ] || chown "$SUDO_UID:$SUDO_GID" "$cache" "$cache/.lock-$SUITE" "$tarball"
	echo "pristine chroot: built $tarball in $((SECONDS - t)) s"
fi
t=$SECONDS
mkdir "$stock"
tar -C "$stock" -xzf "$tarball"
exec 9>&-
echo "pristine chroot: unpacked in $((SECONDS - t)) s"

# overlay DIR LOWER...: a writable tree at DIR over the LOWER trees (the
# first on top), its changes in DIR.upper.
overlay() {
	local dir=$1 lower
	shift
	lower=$(IFS=:; echo "$*")
	mkdir -p "$dir" "$dir.upper" "$dir.ovwork"
	mount -t overlay overlay -o "lowerdir=$lower,upperdir=$dir.upper,workdir=$dir.ovwork" "$dir" ||
		die "cannot mount an overlay on $lower (overlayfs: modprobe overlay)"
}

# mount_chroot ROOT: what apt needs: /proc, a devpts of its own for
# dpkg's terminal (the device nodes debootstrap made are in the tree; the
# host's /dev is never bound), the host's resolver.
mount_chroot() {
	mount -t proc proc "$1/proc"
	mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts "$1/dev/pts"
	cp -L /etc/resolv.conf "$1/etc/resolv.conf"
}
umount_chroot() {
	umount "$1/dev/pts" "$1/proc"
}

# The stock tree with sudo and a user allowed everything by it without a
# password, its package lists and .debs removed again: a layer,
# $sudo_base.upper, for the user's cases.
t=$SECONDS
sudo_base=$work/sudo-base
overlay "$sudo_base" "$stock"
mount_chroot "$sudo_base"
if ! chroot "$sudo_base" env DEBIAN_FRONTEND=noninteractive sh -ec "
	apt-get update -q
	apt-get install -y -q sudo
	useradd -m -s /bin/bash $user
	echo '$user ALL=(ALL:ALL) NOPASSWD: ALL' >/etc/sudoers.d/$user
	chmod 0440 /etc/sudoers.d/$user
	apt-get clean
	rm -rf /var/lib/apt/lists/*
" >"$work/sudo-base.log" 2>&1; then
	cat "$work/sudo-base.log"
	die "could not add sudo and a user to the chroot (log above)"
fi
umount_chroot "$sudo_base"
umount "$sudo_base"
echo "sudo and $user added in $((SECONDS - t)) s"

# The stand-in for make: the README's line stops where make starts.
make_shim='#!/bin/sh
{
	echo "args: $*"
	if [ -x /usr/bin/make ]; then echo "make: installed"; else echo "make: missing"; fi
} >/tmp/make-started
'

# premise ROOT WHO: the copy is what the case claims, or the case is hollow.
premise() {
	local r=$1 who=$2 out
	if find "$r/var/lib/apt/lists" -type f ! -name lock | grep -q .; then
		fail "$who: premise: /var/lib/apt/lists is not empty"
		return 1
	fi
	if chroot "$r" dpkg-query -W -f '${Status}' make 2>/dev/null | grep -q 'ok installed' ||
		[ -e "$r/usr/bin/make" ]; then
		fail "$who: premise: make is already installed"
		return 1
	fi
	out=$(chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin apt-get install -y make 2>&1) &&
		{ fail "$who: premise: apt-get install -y make works before apt-get update"; return 1; }
	if ! grep -q 'Unable to locate package make' <<<"$out"; then
		fail "$who: premise: apt-get install -y make fails otherwise than on the empty lists: $out"
		return 1
	fi
	case $who in
	root*)
		if chroot "$r" sh -c 'command -v sudo' >/dev/null; then
			fail "$who: premise: sudo is installed"
			return 1
		fi
		;;
	*)
		if ! chroot "$r" sh -c 'command -v sudo' >/dev/null; then
			fail "$who: premise: sudo is missing"
			return 1
		fi
		;;
	esac
}

# run_case WHO TARGET: the README's "make TARGET" line in a fresh copy, as
# root without sudo (WHO root) or as $user with sudo (WHO user).
run_case() {
	local who=$1 target=$2 r rc t run status started name
	t=$SECONDS
	r=$work/$who-$target
	if [ "$who" = root ]; then
		name="root without sudo, the make $target line"
		overlay "$r" "$stock"
	else
		name="$user with sudo, the make $target line"
		overlay "$r" "$sudo_base.upper" "$stock"
	fi
	mount_chroot "$r"
	if premise "$r" "$name"; then
		printf '%s' "$make_shim" >"$r/usr/local/bin/make"
		chmod 0755 "$r/usr/local/bin/make"
		if [ "$who" = root ]; then
			run=(chroot "$r" env -i -C /root HOME=/root USER=root LOGNAME=root
				PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
		else
			local uid
			uid=$(chroot "$r" id -u "$user")
			run=(chroot --userspec="$uid:$uid" --groups="$uid" "$r"
				env -i -C "/home/$user" HOME="/home/$user" USER="$user" LOGNAME="$user"
				PATH=/usr/local/bin:/usr/bin:/bin)
		fi
		rc=0
		"${run[@]}" bash -c "${line[$target]}" </dev/null >"$r.log" 2>&1 || rc=$?
		status=$(chroot "$r" dpkg-query -W -f '${Status} ${Version}' make 2>/dev/null || true)
		started=$(cat "$r/tmp/make-started" 2>/dev/null || true)
		if [ "$rc" != 0 ]; then
			fail "$name: exit status $rc"
			tail -n 20 "$r.log" | sed 's/^/    /'
		elif [ "$started" != "args: $target"$'\n'"make: installed" ]; then
			fail "$name: make was not started as 'make $target' with make installed: ${started:-not started}"
		elif [[ $status != "install ok installed "* ]] || ! chroot "$r" /usr/bin/make --version >/dev/null; then
			fail "$name: make is not installed afterwards: ${status:-no package}"
		else
			ok "$name: apt-get ran, make ${status##* } installed, 'make $target' started ($((SECONDS - t)) s)"
		fi
	fi
	umount_chroot "$r"
	umount "$r"
	rm -rf --one-file-system "$r" "$r.upper" "$r.ovwork"
}

for c in "${cases[@]}"; do
	case $c in
	root:demo | root:test | user:demo | user:test) run_case "${c%:*}" "${c#*:}" ;;
	*) fail "unknown case '$c' (WHO:TARGET, WHO root or user, TARGET demo or test)" ;;
	esac
done
[ "$failed" = 0 ] && echo "all README command checks passed ($SUITE)"
[ "$failed" = 0 ]
