#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A patch that does not apply stops the kernel build with a message naming it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cp "$root"/kernel-hooks/* "$tmp/"
cat >"$tmp/9999-broken.patch" <<'PATCH'
From: Test <test@example.org>
Subject: [PATCH] broken on purpose

---
--- a/mm/Kconfig
+++ b/mm/Kconfig
@@ -1,3 +1,4 @@
 this context line
+is not in mm/Kconfig
 so the patch
 cannot apply
PATCH
echo 9999-broken.patch >>"$tmp/series"

if MFR_SERIES_DIR=$tmp MFR_CACHE=$tmp/cache "$root/scripts/build-kernel.sh" \
	--prepare-only >"$tmp/out" 2>&1; then
	echo "build went on despite a broken patch"
	exit 1
fi
cat "$tmp/out"
grep -q "error: .*9999-broken.patch does not apply" "$tmp/out"
! ls "$tmp"/cache/kernel/*/.patched >/dev/null 2>&1
