#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The demo, run inside the VM by "make demo" (mfr.ko already loaded).
set -euo pipefail

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "Patched kernel"
cat /proc/version
grep -o 'CONFIG_MFR_HOOKS=y' "$MFR_KDIR/.config"

step "mfr.ko is loaded"
grep '^mfr ' /proc/modules
dmesg | grep 'mfr: ' | tail -n 3

step "Status over generic netlink (kernel's YNL CLI with module/mfr.yaml)"
/usr/bin/python3 "$MFR_KSRC/tools/net/ynl/cli.py" --spec "$MFR_ROOT/module/mfr.yaml" \
	--schema "$MFR_KSRC/Documentation/netlink/genetlink.yaml" --do status-get

step "A guest-RAM memfd keeps its hugepage through an uncorrected error"
echo "memfd_create(MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED), 2 x 2 MiB, MADV_HWPOISON of 1 page, then close:"
"$MFR_ROOT/build/helpers/keep_hwpoison" 2M 1 madvise close | sed 's/^/  /'
dmesg | grep 'mfr: ' | tail -n 2

step "Counters after the release"
/usr/bin/python3 "$MFR_KSRC/tools/net/ynl/cli.py" --spec "$MFR_ROOT/module/mfr.yaml" \
	--schema "$MFR_KSRC/Documentation/netlink/genetlink.yaml" --do status-get
