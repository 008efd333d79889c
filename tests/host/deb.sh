#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# "make deb": dpkg-buildpackage -b builds mfr-dkms and mfrd; lintian in
# pedantic mode finds no tag that debian/ does not override with a
# reason; each holds what it must (the module source with its
# BUILD_EXCLUSIVE dkms.conf and the dkms maintainer scripts; the daemon,
# CLI, unit enabled but not started by the postinst, stopped on removal,
# reloaded and restarted on upgrade, hardening flags, udev rule,
# modules-load.d, manuals, catalog, example configuration, completion).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
failed=0
ok() { echo "ok - $1"; }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }

version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
changelog=$(dpkg-parsechangelog -l debian/changelog -S Version)
[ "$changelog" = "$version" ] && ok "debian/changelog $changelog = dkms.conf $version" ||
	fail "debian/changelog $changelog, dkms.conf $version"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if make -s deb >"$log" 2>&1; then
	ok "make deb (dpkg-buildpackage -b)"
else
	tail -30 "$log"
	fail "make deb"
	exit 1
fi
dkms_deb=build/deb/mfr-dkms_${version}_all.deb
mfrd_deb=$(ls build/deb/mfrd_"${version}"_*.deb)

# lintian in pedantic mode, info tags too, over every .deb built (the
# dbgsym one as well): no tag at all but those overridden in debian/
# (shown as O:), and each override justified by a comment above it.
debs=(build/deb/*.deb)
out=$(lintian --pedantic -I -E --show-overrides "${debs[@]}" 2>&1 |
	grep -v 'running with root privileges' || true)
tags=$(grep -E '^[EWIPX]: ' <<<"$out" || true)
if [ -z "$tags" ]; then
	ok "lintian --pedantic -I -E over ${#debs[@]} .debs: no tag ($(grep -c '^O: ' <<<"$out") overridden)"
else
	fail "lintian --pedantic -I -E: tags not overridden:"; echo "$tags"
fi
overrides_commented() { # FILE: every override line follows a comment line
	awk '/^[[:space:]]*$/ { c = 0; next }
	     /^#/ { c = 1; next }
	     { if (!c) { print FILENAME ":" FNR ": override without a comment: " $0; bad = 1 } }
	     END { exit bad }' "$1"
}
for f in debian/*lintian-overrides; do
	[ -e "$f" ] || continue
	overrides_commented "$f" && ok "$f: each override says why" || fail "$f: an override without a comment"
done

contents() { dpkg-deb -c "$1" | awk '{ print $6 }' | sed 's|^\./|/|'; }
for f in /usr/src/mfr-$version/dkms.conf /usr/src/mfr-$version/module/rules.c \
	/usr/src/mfr-$version/module/Kbuild /usr/src/mfr-$version/module/include/uapi/linux/mfr.h; do
	contents "$dkms_deb" | grep -qx "$f" && ok "mfr-dkms has $f" || fail "mfr-dkms lacks $f"
done
tmp=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$tmp"' EXIT
dpkg-deb -x "$dkms_deb" "$tmp/dkms"
dpkg-deb -e "$dkms_deb" "$tmp/dkms-ctl"
grep -q '^BUILD_EXCLUSIVE_CONFIG="CONFIG_MFR_HOOKS"' "$tmp/dkms/usr/src/mfr-$version/dkms.conf" &&
	ok "mfr-dkms: dkms.conf keeps BUILD_EXCLUSIVE_CONFIG" || fail "mfr-dkms: no BUILD_EXCLUSIVE_CONFIG"
grep -q 'DKMS_NAME=mfr' "$tmp/dkms-ctl/postinst" && ok "mfr-dkms: dh_dkms postinst" ||
	fail "mfr-dkms: no dh_dkms postinst"
dpkg-deb -f "$dkms_deb" Depends | grep -q 'dkms' && ok "mfr-dkms depends on dkms" ||
	fail "mfr-dkms does not depend on dkms"

# The unit and the rule where this distribution's systemd and udev look
# for packaged ones (/lib on Debian 12, /usr/lib on 13).
unitdir=$(pkg-config --variable=systemdsystemunitdir systemd)
udevdir=$(pkg-config --variable=udevdir udev)
for f in /usr/sbin/mfrd /usr/sbin/mfrctl "$unitdir/mfrd.service" \
	"$udevdir/rules.d/60-mfr.rules" /usr/lib/modules-load.d/mfr.conf \
	/usr/share/man/man8/mfrd.8.gz /usr/share/man/man8/mfrctl.8.gz \
	/usr/share/man/man5/mfrd.conf.5.gz /usr/lib/systemd/catalog/mfrd.catalog \
	/usr/share/doc/mfr/examples/10-vms.conf /etc/mfrd/mfrd.conf \
	/usr/share/bash-completion/completions/mfrctl; do
	contents "$mfrd_deb" | grep -qx "$f" && ok "mfrd has $f" || fail "mfrd lacks $f"
done
dpkg-deb -e "$mfrd_deb" "$tmp/mfrd-ctl"
grep -q 'deb-systemd-helper enable .*mfrd.service' "$tmp/mfrd-ctl/postinst" &&
	ok "mfrd: the unit is enabled by the postinst" || fail "mfrd: the unit is not enabled"
! grep -qE 'deb-systemd-invoke start|_dh_action=start' "$tmp/mfrd-ctl/postinst" &&
	ok "mfrd: the postinst does not wait for a start" || fail "mfrd: the postinst starts the unit"

# The maintainer scripts as dpkg runs them, on a systemd host (a tmpfs
# over /run/systemd in a mount namespace of our own), with systemctl,
# deb-systemd-invoke and deb-systemd-helper stubs that log their calls.
maint() { # SCRIPT ARGS...: the calls it makes, one per line
	unshare -m sh -c 'mount -t tmpfs tmpfs /run/systemd && mkdir /run/systemd/system &&
		PATH=$1:$PATH "$2/$3" "$4" "$5"' sh "$tmp/stubs" "$tmp/mfrd-ctl" "$@" >/dev/null 2>&1 || true
	cat "$tmp/stubs/calls" 2>/dev/null
	rm -f "$tmp/stubs/calls"
}
mkdir "$tmp/stubs"
for stub in systemctl deb-systemd-invoke deb-systemd-helper; do
	printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\n' "$stub" "$tmp/stubs" >"$tmp/stubs/$stub"
	chmod +x "$tmp/stubs/$stub"
done
if ! unshare -m true 2>/dev/null || [ ! -d /run/systemd ]; then
	fail "mfrd maintainer scripts: no mount namespace (needs root) or no /run/systemd to run them in"
else
	calls=$(maint prerm remove)
	grep -qx "deb-systemd-invoke stop mfrd.service" <<<"$calls" &&
		ok "mfrd: prerm remove stops mfrd" || fail "mfrd: prerm remove: $calls"
	calls=$(maint prerm upgrade 0.1.1)
	! grep -q "stop" <<<"$calls" && ok "mfrd: prerm upgrade does not stop mfrd" ||
		fail "mfrd: prerm upgrade: $calls"
	calls=
	[ ! -e "$tmp/mfrd-ctl/preinst" ] || calls=$(maint preinst upgrade 0.0.9)
	! grep -q "stop" <<<"$calls" && ok "mfrd: preinst upgrade does not stop mfrd" ||
		fail "mfrd: preinst upgrade: $calls"
	calls=$(maint postinst configure 0.0.9 | grep -v deb-systemd-helper || true)
	if [ "$calls" = "systemctl --system daemon-reload
deb-systemd-invoke try-restart mfrd.service" ]; then
		ok "mfrd: an upgrade reloads the units, then restarts a running mfrd"
	else
		fail "mfrd: postinst configure 0.0.9 (an upgrade): $calls"
	fi
	calls=$(maint postinst configure "" | grep -v deb-systemd-helper || true)
	! grep -q "deb-systemd-invoke" <<<"$calls" &&
		ok "mfrd: a first install starts nothing ($(tr '\n' ';' <<<"$calls"))" ||
		fail "mfrd: postinst configure (a first install): $calls"
fi
# No hand-written systemctl call (lintian), and the hardening flags made
# it into the binaries (dpkg-buildflags' CPPFLAGS: _FORTIFY_SOURCE).
out=$(lintian -I -E --pedantic --tags maintainer-script-calls-systemctl,hardening-no-fortify-functions,hardening-no-relro,hardening-no-pie,hardening-no-bindnow \
	"$mfrd_deb" 2>&1 | grep -v 'running with root privileges' || true)
[ -z "$out" ] && ok "lintian: no systemctl call in the maintainer scripts, hardening flags present" ||
	fail "lintian: $out"
dpkg-deb -x "$mfrd_deb" "$tmp/mfrd"
# The same flags read from the binaries themselves, as hardening-check
# would: PIE, full RELRO (GNU_RELRO and BIND_NOW), the stack protector
# and _FORTIFY_SOURCE's checked functions.
for bin in usr/sbin/mfrd usr/sbin/mfrctl; do
	elf=$tmp/mfrd/$bin
	missing=
	readelf -h "$elf" | grep -q 'Type:.*DYN' || missing+=" PIE"
	readelf -lW "$elf" | grep -q GNU_RELRO || missing+=" RELRO"
	readelf -dW "$elf" | grep -qE 'BIND_NOW|FLAGS_1.*NOW' || missing+=" BIND_NOW"
	syms=$(readelf --dyn-syms -W "$elf")
	grep -q '__stack_chk_fail' <<<"$syms" || missing+=" stack-protector"
	grep -qE '__[a-z_]+_chk(@|$| )' <<<"$syms" || missing+=" FORTIFY"
	[ -z "$missing" ] && ok "/$bin: PIE, RELRO, BIND_NOW, stack protector, FORTIFY" ||
		fail "/$bin lacks:$missing"
done
grep -qx 'ExecStart=/usr/sbin/mfrd' "$tmp/mfrd$unitdir/mfrd.service" &&
	ok "mfrd: unit runs /usr/sbin/mfrd" || fail "mfrd: unit ExecStart"

[ "$failed" = 0 ] && echo "all package checks passed"
[ "$failed" = 0 ]
