# SPDX-License-Identifier: GPL-2.0-or-later
# DKMS: the project's source registered with "make dkms-install" and built
# for the hooked kernel; the stock Debian kernel (no hooks) skipped cleanly,
# by "dkms install" (exit 77, its skip status, with a message, nothing
# built) and by the kernel packages' hook (exit 0).

check "running the hooked kernel ($KVER_MFR), systemd as PID 1" \
	bash -c "[[ $KVER_MFR == *-mfr ]] && [ \"\$(cat /proc/1/comm)\" = systemd ]"
check "no failed units at boot" bash -c \
	'systemctl --failed --no-legend --plain | tee /dev/stderr | { ! grep -q .; }'
check "mfrd installed but not started (nothing loaded mfr yet)" \
	bash -c '[ -x /usr/sbin/mfrd ] && ! systemctl is-active -q mfrd'

ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' /root/mfr/dkms.conf)
check "make dkms-install registers mfr/$ver" \
	bash -c "make -C /root/mfr dkms-install && dkms status mfr/$ver | grep -q added"
check "make dkms-install again is a no-op that succeeds" make -C /root/mfr dkms-install
check "dkms install mfr/$ver -k $KVER_MFR builds and installs" \
	bash -c "dkms install mfr/$ver -k $KVER_MFR &&
		test -f /lib/modules/$KVER_MFR/updates/dkms/mfr.ko &&
		modinfo -k $KVER_MFR -F version mfr | grep -qx '$ver'"

stock=$(cd /lib/modules && ls -d *-amd64 | head -n 1)
dkms install "mfr/$ver" -k "$stock" >"$SHARE/logs/dkms-stock.out" 2>&1
rc=$?
diag <"$SHARE/logs/dkms-stock.out"
check "dkms install -k $stock (no hooks): exit 77, dkms' skip status" [ "$rc" = 77 ]
check "... with a message naming BUILD_EXCLUSIVE" \
	grep -q "BUILD_EXCLUSIVE directive which does not match" "$SHARE/logs/dkms-stock.out"
check "... and no build started, nothing installed" bash -c \
	"! grep -q 'Building module\\|Bad return status\\|make.log' '$SHARE/logs/dkms-stock.out' &&
	 [ ! -e /var/lib/dkms/mfr/$ver/$stock/x86_64/log/make.log ] &&
	 ! find /lib/modules/$stock -name 'mfr.ko*' | grep -q ."
check "the stock kernel's postinst hook (dkms autoinstall) exits 0" \
	/etc/kernel/postinst.d/dkms "$stock"
check "dkms status: installed for $KVER_MFR only" bash -c \
	"dkms status mfr/$ver | tee /dev/stderr | grep -q '$KVER_MFR.*installed' &&
	 ! dkms status mfr/$ver | grep -q '$stock'"
