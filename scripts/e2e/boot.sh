#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Boot the end-to-end guest under QEMU (TCG) until it powers off: every
# reboot the guest asks for happens inside the same QEMU.  The serial
# console goes to OUT/serial.log; SHARE is the guest's /mnt/e2e (9p), where
# it writes its results and each boot's kernel log.  Exits 124 on timeout.
#
#   boot.sh OUT_DIR SHARE_DIR
# Environment: E2E_TIMEOUT seconds (9000: with a second e2e run beside
#   it on 2 cores, bookworm's seven boots passed the 90 minutes this once
#   was), E2E_MEM (2G), E2E_CPUS (2),
#   E2E_CPU (max,vendor=GenuineIntel; "max" is AMD, with SVM for KVM
#   guests), E2E_APPEND extra kernel command line.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

out=${1:?usage: boot.sh OUT_DIR SHARE_DIR}
share=${2:?}
E2E_TIMEOUT=${E2E_TIMEOUT:-9000}

# hugepages: 2 MiB pages for the workloads; loglevel=5 keeps the console
# to warnings and worse (the guest saves the whole log of every boot).
append="console=ttyS0 root=/dev/vda rw rootfstype=ext4 panic=-1 loglevel=5"
append+=" hugepages=64 ${E2E_APPEND:-}"
exec timeout -k 10 "$E2E_TIMEOUT" qemu-system-x86_64 \
	-machine q35 -accel tcg -cpu "${E2E_CPU:-max,vendor=GenuineIntel}" \
	-smp "${E2E_CPUS:-2}" -m "${E2E_MEM:-2G}" \
	-nodefaults -no-user-config -display none -monitor none \
	-serial "file:$out/serial.log" \
	-kernel "$out/vmlinuz" -append "$append" \
	-drive "file=$out/disk.img,format=raw,if=virtio,cache=unsafe" \
	-virtfs "local,path=$share,mount_tag=mfr-e2e,security_model=none,id=e2e" \
	-nic none </dev/null
