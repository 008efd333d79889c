# SPDX-License-Identifier: GPL-2.0-or-later
# The last of boot 5: how boot 6 starts.
#  - a typo in a rule file (80-typo.conf, "acton"): boot offlining, READY
#    and the other rules must not wait for it;
#  - a rule for libvirt's /machine.slice, which no guest has made yet
#    (there is no libvirt here), and a libvirt-style guest started at
#    boot right after mfrd: e2e-guest-scope.service runs a VMM stand-in
#    in a transient scope made by "systemd-run --scope
#    --slice=machine.slice", as libvirt (machined) does;
#  - /var/lib/mfrd on a file system of its own (a 64 MiB ext4 image,
#    mounted before mfrd), for boot 6 to fill.
# mfrd is stopped while its directory moves; the store's rows are kept
# for boot 6's checks.

check "systemctl stop mfrd" systemctl stop mfrd
check "the store read for the next boot (snapshot before-boot6)" store_snapshot before-boot6
check "premise: pfns recorded before boot 6 ($(wc -l <"$STATE/before-boot6.pfns"))" \
	test -s "$STATE/before-boot6.pfns"
cat >/etc/mfrd/rules.d/80-typo.conf <<'CONF'
# e2e (boot 6): a typo an operator made.
[rule]
name-glob = typo-*
acton = keep
CONF
cat >/etc/mfrd/rules.d/70-libvirt.conf <<'CONF'
# e2e (boot 6): libvirt's guests, whose slice appears with the first one.
[rule]
cgroup-path = /machine.slice
action = keep
CONF
cat >/etc/systemd/system/e2e-guest-scope.service <<UNIT
# e2e (boot 6): a guest started at boot as libvirt starts one: its QEMU
# in a transient scope of machine.slice, right after mfrd is ready.
[Unit]
Wants=mfrd.service
After=mfrd.service
[Service]
Type=exec
ExecStart=/usr/bin/systemd-run --scope --slice=machine.slice --unit=e2e-vm1 $BIN/memfd_script e2e-vm1-ram 1 ready:/run/e2e-vm1.ready wait:/run/e2e-vm1.stop close
[Install]
WantedBy=multi-user.target
UNIT
check "enable e2e-guest-scope.service" systemctl enable e2e-guest-scope.service

img=$STATE/mfrd-fs.img
move_state() {
	rm -f "$img"
	truncate -s 64M "$img" && mkfs.ext4 -q -m 0 "$img" &&
		mkdir -p /mnt/mfrd-fs && mount -o loop "$img" /mnt/mfrd-fs &&
		cp -a /var/lib/mfrd/. /mnt/mfrd-fs/ && umount /mnt/mfrd-fs
}
check "a 64 MiB ext4 image with mfrd's state directory" move_state
cat >/etc/systemd/system/var-lib-mfrd.mount <<UNIT
# e2e (boot 6): mfrd's state directory on a small file system of its own.
[Mount]
What=$img
Where=/var/lib/mfrd
Type=ext4
Options=loop
[Install]
WantedBy=local-fs.target
UNIT
mkdir -p /etc/systemd/system/mfrd.service.d
cat >/etc/systemd/system/mfrd.service.d/e2e-state-fs.conf <<'UNIT'
[Unit]
RequiresMountsFor=/var/lib/mfrd
UNIT
check "enable var-lib-mfrd.mount (mfrd requires it)" bash -c \
	"systemctl daemon-reload && systemctl enable var-lib-mfrd.mount"
