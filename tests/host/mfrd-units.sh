#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Unit tests of mfrd's pieces (config and rules parsing, SQLite store,
# metrics writer), built with ASan and UBSan: a leak or undefined
# behaviour fails the test even when every check passed.  Also checks
# that mfrd.conf(5) and mfrd(8) render without warnings, mfrd's command
# line (--check, usage errors) and that the journal catalog parses.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
make -s -C "$root/daemon" O="$root/build/daemon" units "$root/build/daemon/asan/mfrd"

export ASAN_OPTIONS=detect_leaks=1:exitcode=99
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

failed=0
for t in config store store-recover store-supervisor metrics log dimm ras grow memfd-cache \
	generations rule-ids atomic-file time; do
	echo "# test-$t"
	if ! "$root/build/daemon/asan/test-$t"; then
		echo "FAIL: test-$t"
		failed=$((failed + 1))
	fi
done
for page in mfrd.conf.5 mfrd.8; do
	err=$(groff -man -ww -z "$root/daemon/$page" 2>&1) || err="groff failed: $err"
	if [ -n "$err" ]; then
		echo "FAIL: daemon/$page does not render cleanly with groff -man -ww"
		echo "$err"
		failed=$((failed + 1))
	else
		echo "ok - $page renders cleanly"
	fi
done

# mfrd's command line, without a module or root: --check and usage errors.
mfrd=$root/build/daemon/asan/mfrd
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/rules"
cp "$root/daemon/examples/10-vms.conf" "$tmp/rules/"
expect() { # DESCRIPTION STATUS COMMAND...
	local what=$1 want=$2 rc=0
	shift 2
	"$@" >"$tmp/out" 2>&1 || rc=$?
	if [ "$rc" = "$want" ]; then
		echo "ok - $what"
	else
		echo "FAIL: $what: exit $rc, want $want"
		sed 's/^/    /' "$tmp/out"
		failed=$((failed + 1))
	fi
}
# The README's install steps: the shipped example rules copied into
# rules.d, then "mfrd --check", on a fresh host (a cgroup root without
# libvirt's machine.slice or any other slice).
mkdir -p "$tmp/cgroup"
export MFRD_CGROUP_ROOT=$tmp/cgroup
if grep -q '^cp /usr/share/doc/mfr/examples/10-vms.conf /etc/mfrd/rules.d/' "$root/README.md"; then
	echo "ok - the README installs examples/10-vms.conf"
else
	echo "FAIL: the README's install steps no longer copy examples/10-vms.conf"; failed=$((failed + 1))
fi
# ... after a reboot into the kernel with the hooks (the module exists only
# there), and with libvirt ordered after mfrd, so that guests start with
# the rules in the module.
readme_install=$(sed -n '/^## Install on a fleet host/,/^## /p' "$root/README.md")
if grep -q '^sudo reboot ' <<<"$readme_install" &&
	[ "$(grep -n -m1 '^sudo reboot ' <<<"$readme_install" | cut -d: -f1)" -lt \
	  "$(grep -n -m1 'modprobe mfr' <<<"$readme_install" | cut -d: -f1)" ]; then
	echo "ok - the README's install steps reboot into the hooks kernel before modprobe mfr"
else
	echo "FAIL: the README's install steps do not reboot into the kernel with the hooks"; failed=$((failed + 1))
fi
if grep -q 'libvirtd.service.d/mfrd.conf' <<<"$readme_install" &&
	grep -q 'After=mfrd.service' <<<"$readme_install"; then
	echo "ok - the README's install steps order libvirtd after mfrd"
else
	echo "FAIL: the README's install steps leave libvirt unordered"; failed=$((failed + 1))
fi
expect "mfrd --check: the shipped examples pass on a fresh host" 0 \
	"$mfrd" --config "$root/daemon/examples/mfrd.conf" --rules-dir "$tmp/rules" --check
# QEMU's guest RAM (memory-backend-memfd, whatever its cgroup or uid) is
# decided by a keep rule: the first rule whose only match is the name.
if python3 - "$root/daemon/examples/10-vms.conf" <<'EOP'; then
import fnmatch, sys
rules, rule = [], None
for line in open(sys.argv[1]):
    line = line.strip()
    if line == "[rule]":
        rule = {}
        rules.append(rule)
    elif rule is not None and "=" in line and not line.startswith("#"):
        key, value = (x.strip() for x in line.split("=", 1))
        rule[key] = value
for rule in rules:
    if set(rule) - {"name-glob", "action", "budget"}:
        continue    # depends on the cgroup or uid
    if fnmatch.fnmatchcase("memory-backend-memfd", rule.get("name-glob", "*")):
        sys.exit(rule.get("action") != "keep")
sys.exit(1)
EOP
	echo "ok - the shipped example keeps QEMU's guest RAM (memfd memory-backend-memfd)"
else
	echo "FAIL: no keep rule of examples/10-vms.conf matches QEMU's memory-backend-memfd"
	failed=$((failed + 1))
fi
# A cgroup-path need not exist (mfr.ko matches it by name when a memfd is
# made: libvirt's machine.slice appears with the first guest): --check
# passes, and says so.
printf '[rule]\ncgroup-path = /machine.slice\naction = keep\n' >"$tmp/rules/12-libvirt.conf"
expect "mfrd --check: a cgroup-path that does not exist yet passes" 0 \
	"$mfrd" --config "$root/daemon/examples/mfrd.conf" --rules-dir "$tmp/rules" --check
if grep -q "^$tmp/rules/12-libvirt.conf:2: note: cgroup-path /machine.slice: no such cgroup yet .*matches it by name once it exists" "$tmp/out"; then
	echo "ok - mfrd --check notes the rule whose cgroup does not exist yet"
else
	echo "FAIL: mfrd --check output for a missing cgroup"; cat "$tmp/out"; failed=$((failed + 1))
fi
mkdir "$tmp/cgroup/machine.slice"
expect "mfrd --check: ... and passes once the cgroup exists" 0 \
	"$mfrd" --config "$root/daemon/examples/mfrd.conf" --rules-dir "$tmp/rules" --check
! grep -q note "$tmp/out" && echo "ok - ... without the note" ||
	{ echo "FAIL: a note for an existing cgroup"; cat "$tmp/out"; failed=$((failed + 1)); }
# A cgroup-id must exist: an id is never used again.
printf '[rule]\ncgroup-id = 1\naction = keep\n' >"$tmp/rules/16-id.conf"
expect "mfrd --check: a cgroup-id that does not exist exits 1" 1 \
	"$mfrd" --config "$root/daemon/examples/mfrd.conf" --rules-dir "$tmp/rules" --check
rm "$tmp/rules/16-id.conf"
rm "$tmp/rules/12-libvirt.conf"
printf '[rule]\nname-glob = scratch-*\naction = default\nbudget = 4\n' >"$tmp/rules/15-budget.conf"
expect "mfrd --check: a budget on a default rule exits 1" 1 \
	"$mfrd" --config "$root/daemon/examples/mfrd.conf" --rules-dir "$tmp/rules" --check
rm "$tmp/rules/15-budget.conf"
printf '[rule]\nname-glob = x\n' >"$tmp/rules/20-bad.conf"
expect "mfrd --check: a rule without action exits 1" 1 \
	"$mfrd" --config "$root/daemon/examples/mfrd.conf" --rules-dir "$tmp/rules" --check
if grep -qx "$tmp/rules/20-bad.conf:1: rule has no action (keep or default)" "$tmp/out"; then
	echo "ok - mfrd --check prints FILE:LINE: message"
else
	echo "FAIL: mfrd --check output"; cat "$tmp/out"; failed=$((failed + 1))
fi
# One --check run reports every file: a bad mfrd.conf, a typo in one
# rules file and a malformed cgroup path in another.
printf 'watchdog = maybe\n' >"$tmp/bad-mfrd.conf"
printf '[rule]\nacton = keep\n' >"$tmp/rules/13-typo.conf"
printf '[rule]\naction = keep\ncgroup-path = /gone.slice/\n' >"$tmp/rules/14-gone.conf"
expect "mfrd --check: errors in three files exit 1" 1 \
	"$mfrd" --config "$tmp/bad-mfrd.conf" --rules-dir "$tmp/rules" --check
if grep -q "^$tmp/bad-mfrd.conf:1: watchdog:" "$tmp/out" &&
	grep -q "^$tmp/rules/13-typo.conf:2: unknown key \"acton\"" "$tmp/out" &&
	grep -q "^$tmp/rules/14-gone.conf:3: cgroup-path: \"/gone.slice/\": not a path of cgroup names" "$tmp/out"; then
	echo "ok - mfrd --check reports every file in one run, each at the key's own line"
else
	echo "FAIL: mfrd --check did not report every file"; cat "$tmp/out"; failed=$((failed + 1))
fi
rm "$tmp/rules/13-typo.conf" "$tmp/rules/14-gone.conf"
# A FIFO as mfrd.conf: refused at once, no hang.
mkfifo "$tmp/fifo.conf"
expect "mfrd --check: a FIFO as mfrd.conf exits 1 at once" 1 \
	timeout 20 "$mfrd" --config "$tmp/fifo.conf" --rules-dir "$tmp/rules" --check
grep -q "fifo.conf: a FIFO: only a regular file is read" "$tmp/out" &&
	echo "ok - ... saying it is a FIFO" || { echo "FAIL: FIFO message"; cat "$tmp/out"; failed=$((failed + 1)); }
# The result must reach stdout: a write error is a failure.
if [ -w /dev/full ]; then
	rc=0
	mkdir "$tmp/good-rules"
	cp "$root/daemon/examples/10-vms.conf" "$tmp/good-rules/"
	"$mfrd" --config "$root/daemon/examples/mfrd.conf" --rules-dir "$tmp/good-rules" --check \
		>/dev/full 2>"$tmp/out" || rc=$?
	if [ "$rc" = 1 ] && grep -q "cannot write the result" "$tmp/out"; then
		echo "ok - mfrd --check > /dev/full exits 1"
	else
		echo "FAIL: mfrd --check > /dev/full: exit $rc"; cat "$tmp/out"; failed=$((failed + 1))
	fi
else
	echo "FAIL: no /dev/full to test a write error with"; failed=$((failed + 1))
fi
# What --check says must be true: a missing mfrd.conf is the defaults
# (not "ok"), and no rule at all keeps no memfd (an error, not "0 rules").
mkdir -p "$tmp/vm-rules"
cp "$root/daemon/examples/10-vms.conf" "$tmp/vm-rules/"
expect "mfrd --check: a missing mfrd.conf passes (the defaults)" 0 \
	"$mfrd" --config "$tmp/no-such.conf" --rules-dir "$tmp/vm-rules" --check
grep -q "^$tmp/no-such.conf: not found, the defaults apply; " "$tmp/out" &&
	echo "ok - ... and says the defaults apply, not ok" ||
	{ echo "FAIL: --check of a missing mfrd.conf: $(cat "$tmp/out")"; failed=$((failed + 1)); }
mkdir "$tmp/no-rules"
expect "mfrd --check: no rule at all exits 1" 1 \
	"$mfrd" --config "$root/daemon/examples/mfrd.conf" --rules-dir "$tmp/no-rules" --check
grep -q "^$tmp/no-rules: no rule: mfrd would opt no memfd in" "$tmp/out" &&
	echo "ok - ... saying that no memfd would be opted in" ||
	{ echo "FAIL: --check with no rule: $(cat "$tmp/out")"; failed=$((failed + 1)); }
expect "mfrd: an unknown option exits 2" 2 "$mfrd" --frobnicate
expect "mfrd: a stray argument exits 2" 2 "$mfrd" extra
expect "mfrd: a relative --state-dir exits 2" 2 "$mfrd" --state-dir var/lib --check

# The journal catalog parses, one entry per MESSAGE_ID of mfrd-log.h.
if command -v journalctl >/dev/null; then
	mkdir -p "$tmp/root/usr/lib/systemd/catalog" "$tmp/root/var/lib/systemd/catalog"
	cp "$root/daemon/mfrd.catalog" "$tmp/root/usr/lib/systemd/catalog/"
	want=$(sed -n 's/^#define MFRD_MSGID_[A-Z_]*\t*"\([0-9a-f]*\)"$/\1/p' \
		"$root/daemon/mfrd-log.h" | sort)
	got=$(journalctl --root="$tmp/root" --update-catalog 2>&1 &&
		journalctl --root="$tmp/root" --list-catalog 2>&1 | awk '$2 == "mfr:" { print $1 }' | sort)
	if [ -n "$want" ] && [ "$want" = "$got" ]; then
		echo "ok - mfrd.catalog: one entry per MESSAGE_ID ($(echo "$want" | wc -l))"
	else
		echo "FAIL: mfrd.catalog entries differ from mfrd-log.h"
		diff <(echo "$want") <(echo "$got")
		failed=$((failed + 1))
	fi
fi
[ "$failed" = 0 ] || { echo "$failed unit test(s) failed"; exit 1; }
echo "all unit tests passed"
