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
