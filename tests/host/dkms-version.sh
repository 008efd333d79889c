#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dkms.conf's PACKAGE_VERSION is the version mfr.ko reports.
set -euo pipefail
cd "$(dirname "$0")/../.."
mod=$(sed -n 's/^#define MFR_VERSION "\(.*\)"/\1/p' module/version.h)
pkg=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
echo "module/version.h: $mod, dkms.conf: $pkg"
[ -n "$mod" ] && [ "$mod" = "$pkg" ]
