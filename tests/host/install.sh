#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# "make install" into a scratch DESTDIR: PREFIX reaches the unit's
# ExecStart and ExecReload, modules-load.d loads mfr at boot, the unit
# passes "systemd-analyze verify" and scores at most 2.0 in
# "systemd-analyze security --offline=true", and it never gives up
# restarting, waits for protection and reloads synchronously.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
ok() { echo "ok - $1"; }
fail() { echo "FAIL: $1"; failed=$((failed + 1)); }

make -s -C "$root" install DESTDIR="$tmp/root" PREFIX=/usr/local >"$tmp/log" 2>&1 ||
	{ cat "$tmp/log"; echo "FAIL: make install"; exit 1; }
unit=$tmp/root/usr/local/lib/systemd/system/mfrd.service

for f in sbin/mfrd sbin/mfrctl lib/modules-load.d/mfr.conf lib/udev/rules.d/60-mfr.rules; do
	if [ -e "$tmp/root/usr/local/$f" ]; then ok "installed \$PREFIX/$f"; else fail "no \$PREFIX/$f"; fi
done
if grep -qx mfr "$tmp/root/usr/local/lib/modules-load.d/mfr.conf"; then
	ok "modules-load.d/mfr.conf loads mfr"
else
	fail "modules-load.d/mfr.conf does not name mfr"
fi
execs=$(grep -E '^Exec' "$unit")
if [ "$(grep -c '=/usr/local/sbin/mfrd' <<<"$execs")" = 2 ] && ! grep -q '=/usr/sbin' <<<"$execs"; then
	ok "PREFIX=/usr/local reaches ExecStart and ExecReload"
else
	fail "unit Exec lines do not follow PREFIX: $execs"
fi
for want in 'ExecReload=/usr/local/sbin/mfrd --reload $MAINPID' StartLimitIntervalSec=0 \
	Restart=always TimeoutStartSec=infinity RuntimeDirectory=mfrd; do
	if grep -qxF "$want" "$unit"; then ok "unit: $want"; else fail "unit lacks $want"; fi
done

# verify needs the binaries it names: point a copy at the DESTDIR.
mkdir "$tmp/verify"
sed "s|/usr/local/sbin/|$tmp/root/usr/local/sbin/|g" "$unit" >"$tmp/verify/mfrd.service"
if out=$(systemd-analyze verify --man=no "$tmp/verify/mfrd.service" 2>&1) && [ -z "$out" ]; then
	ok "systemd-analyze verify: clean"
else
	fail "systemd-analyze verify: $out"
fi
score=$(systemd-analyze security --offline=true "$tmp/verify/mfrd.service" 2>&1 |
	sed -n 's/.*Overall exposure level for mfrd.service: \([0-9.]*\).*/\1/p')
if [ -n "$score" ] && awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }'; then
	ok "systemd-analyze security --offline=true: $score (at most 2.0)"
else
	fail "systemd-analyze security --offline=true: '${score:-no score}', want at most 2.0"
fi
[ "$failed" = 0 ] && echo "all install checks passed"
[ "$failed" = 0 ]
