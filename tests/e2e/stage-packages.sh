# SPDX-License-Identifier: GPL-2.0-or-later
# The package's life on a running host, last: "apt-get remove mfrd" stops
# the daemon (no process left, the unit inactive); installed again it is
# enabled, and started by hand.  An upgrade to a newer mfrd whose unit
# changed runs the new unit: a copy of the package with a higher version
# and one more line in the unit (Environment=MFRD_E2E_UNIT=upgraded) is
# installed with dpkg -i, and the mfrd then running has that line's
# variable in its environment.  Then the original package again.

pkg_deb=$(ls /root/debs/mfrd_*.deb)
pkg_ver=$(dpkg-deb -f "$pkg_deb" Version)
pkg_pid=$(unit_prop mfrd MainPID)
check "premise: mfrd $pkg_ver installed and running (pid $pkg_pid)" bash -c \
	"dpkg -s mfrd | grep -qx 'Version: $pkg_ver' && systemctl is-active -q mfrd && [ $pkg_pid -gt 0 ]"
DEBIAN_FRONTEND=noninteractive apt-get remove -y mfrd >"$SHARE/logs/apt-remove.out" 2>&1
pkg_rc=$?
diag <"$SHARE/logs/apt-remove.out"
check "apt-get remove -y mfrd" [ "$pkg_rc" = 0 ]
removed_stopped() {
	dpkg -s mfrd 2>/dev/null | grep '^Status'
	echo "mfrd processes: $(pgrep -x mfrd | tr '\n' ' '); unit: $(systemctl is-active mfrd)"
	! dpkg -s mfrd 2>/dev/null | grep -q '^Status: install ok installed' &&
		! kill -0 "$pkg_pid" 2>/dev/null && ! pgrep -x mfrd &&
		! systemctl is-active -q mfrd && [ ! -e /usr/sbin/mfrd ]
}
check "... the daemon stopped: pid $pkg_pid gone, no mfrd process, the unit inactive" removed_stopped
check "... mfr.ko still loaded (mfr-dkms stays)" test -d /sys/module/mfr

check "dpkg -i $pkg_deb again" bash -c "dpkg -i --force-confold $pkg_deb >$SHARE/logs/dpkg-reinstall.out 2>&1"
check "... the unit enabled again, not started by the postinst" bash -c \
	"systemctl is-enabled -q mfrd && ! systemctl is-active -q mfrd"
check "systemctl start mfrd" systemctl start mfrd
check "... mfrd pushed the rules" wait_until 60 bash -c \
	"mfrctl -j rules list | grep -q '\"guest-ram\\*\"'"

# The upgrade: the same package with a higher version and a changed unit.
up_dir=$(mktemp -d)
up_ver=$pkg_ver+e2e1
# /lib/systemd/system on Debian 12, /usr/lib/systemd/system on 13.
up_unit=$up_dir/pkg$(dpkg-deb -c "$pkg_deb" | awk '{ print $6 }' |
	sed -n 's|^\.\(.*/systemd/system/mfrd\.service\)$|\1|p')
make_upgrade() {
	dpkg-deb -R "$pkg_deb" "$up_dir/pkg" &&
		sed -i "s/^Version: .*/Version: $up_ver/" "$up_dir/pkg/DEBIAN/control" &&
		sed -i 's/^\[Service\]$/[Service]\nEnvironment=MFRD_E2E_UNIT=upgraded/' "$up_unit" &&
		grep -qx 'Environment=MFRD_E2E_UNIT=upgraded' "$up_unit" &&
		(cd "$up_dir/pkg" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' |
			xargs -0 md5sum >DEBIAN/md5sums) &&
		dpkg-deb -b "$up_dir/pkg" "$up_dir/mfrd_${up_ver}_amd64.deb"
}
check "build mfrd $up_ver: the unit gets Environment=MFRD_E2E_UNIT=upgraded" make_upgrade
pkg_pid=$(unit_prop mfrd MainPID)
check "dpkg -i mfrd_${up_ver}_amd64.deb (an upgrade)" bash -c \
	"dpkg -i --force-confold $up_dir/mfrd_${up_ver}_amd64.deb >$SHARE/logs/dpkg-upgrade.out 2>&1"
runs_unit() { # upgraded|original
	local pid env
	pid=$(unit_prop mfrd MainPID)
	env=$(tr '\0' '\n' <"/proc/$pid/environ" | grep MFRD_E2E_UNIT)
	echo "version $(dpkg-query -W -f '${Version}' mfrd), pid $pid (was $pkg_pid), NeedDaemonReload $(unit_prop mfrd NeedDaemonReload), environment: $env"
	systemctl is-active -q mfrd && [ "$pid" != "$pkg_pid" ] &&
		[ "$(unit_prop mfrd NeedDaemonReload)" = no ] &&
		if [ "$1" = upgraded ]; then [ "$env" = MFRD_E2E_UNIT=upgraded ]; else [ -z "$env" ]; fi
}
check "... the new unit runs: daemon-reload done, a new mfrd with the unit's new Environment=" runs_unit upgraded
pkg_pid=$(unit_prop mfrd MainPID)
check "dpkg -i $pkg_deb (back to $pkg_ver)" bash -c \
	"dpkg -i --force-confold $pkg_deb >$SHARE/logs/dpkg-downgrade.out 2>&1"
check "... the original unit runs again" runs_unit original
check "... mfrd pushed the rules" wait_until 60 bash -c \
	"mfrctl -j rules list | grep -q '\"guest-ram\\*\"'"
rm -rf "$up_dir"
