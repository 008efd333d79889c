# SPDX-License-Identifier: GPL-2.0-or-later
# The packages: mfr-dkms built mfr.ko for the hooked kernel in its postinst
# (the image was made with "dpkg -i mfr-dkms mfrd"), modules-load.d loaded
# it at boot, mfrd (enabled by its package) came up READY once the rules
# were in; the stock Debian kernel (no hooks) is skipped cleanly, by
# "dkms install" (exit 77, its skip status, nothing built) and by the
# kernel packages' hook (exit 0).

check "running the hooked kernel ($KVER_MFR), systemd as PID 1" \
	bash -c "[[ $KVER_MFR == *-mfr ]] && [ \"\$(cat /proc/1/comm)\" = systemd ]"
check "no failed units at boot" bash -c \
	'systemctl --failed --no-legend --plain | tee /dev/stderr | { ! grep -q .; }'
check "mfr-dkms and mfrd are installed packages" \
	bash -c "dpkg -s mfr-dkms mfrd | grep -c '^Status: install ok installed' | grep -qx 2"

ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' /root/mfr/dkms.conf)
check "the package's postinst built and installed mfr/$ver for $KVER_MFR" \
	bash -c "dkms status mfr/$ver -k $KVER_MFR | grep -q installed &&
		modinfo -k $KVER_MFR -F version mfr | grep -qx '$ver'"
check "modules-load.d/mfr.conf loaded mfr at boot" bash -c \
	"[ -e /usr/lib/modules-load.d/mfr.conf ] && [ -d /sys/module/mfr ] &&
	 systemctl is-active -q systemd-modules-load"
check "mfrd (enabled by its package) is active at boot" systemctl is-active -q mfrd
check "the unit runs the packaged binary" bash -c \
	"systemctl show -p ExecStart --value mfrd | grep -q 'path=/usr/sbin/mfrd'"

stock=$(cd /lib/modules && ls -d *-amd64 | head -n 1)
dkms install "mfr/$ver" -k "$stock" >"$SHARE/logs/dkms-stock.out" 2>&1
rc=$?
diag <"$SHARE/logs/dkms-stock.out"
check "dkms install -k $stock (no hooks): exit 77, dkms' skip status" [ "$rc" = 77 ]
# dkms 3.2 (Debian 13) breaks the sentence over lines, 3.0 (12) does not.
check "... with a message naming BUILD_EXCLUSIVE" bash -c \
	"tr -s ' \n' '  ' <'$SHARE/logs/dkms-stock.out' | grep -q 'BUILD_EXCLUSIVE directive which does not match'"
check "... and no build started, nothing installed" bash -c \
	"! grep -q 'Building module\\|Bad return status\\|make.log' '$SHARE/logs/dkms-stock.out' &&
	 [ ! -e /var/lib/dkms/mfr/$ver/$stock/x86_64/log/make.log ] &&
	 ! find /lib/modules/$stock -name 'mfr.ko*' | grep -q ."
check "the stock kernel's postinst hook (dkms autoinstall) exits 0" \
	/etc/kernel/postinst.d/dkms "$stock"
check "dkms status: installed for $KVER_MFR only" bash -c \
	"dkms status mfr/$ver | tee /dev/stderr | grep -q '$KVER_MFR.*installed' &&
	 ! dkms status mfr/$ver | grep -q '$stock'"
