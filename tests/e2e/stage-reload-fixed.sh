# SPDX-License-Identifier: GPL-2.0-or-later
# A rule file that mfr.ko refuses (a stale cgroup id) is in place when
# mfrd starts: the start ends at once, the other rules in force (the
# refused one left out, said in STATUS).  The operator fixes the file
# and runs "systemctl reload mfrd": it returns promptly, and the fixed
# rules are in the module.  Then the test's rule files go, for the boots
# after this one.

fix_file=/etc/mfrd/rules.d/71-fixed.conf
rule_terms() {
	python3 -c '
import json, sys
for r in json.load(sys.stdin):
    print(sorted((k, v) for k, v in r.items() if k not in ("id", "generation")))'
}
fix_before=$(mfrctl -j rules list | rule_terms)
printf '[rule]\nname-glob = fixed-*\ncgroup-id = 1099511627776\naction = keep\n' >"$fix_file"
fix_since=$(date '+%Y-%m-%d %H:%M:%S')
sleep 1
timed() { # SECONDS_MAX COMMAND...: run it, say how long it took
	local max=$1 t0 t1 rc=0
	shift
	t0=$(monotonic_usec)
	timeout 300 "$@" || rc=$?
	t1=$(monotonic_usec)
	echo "$* exited $rc after $(((t1 - t0) / 1000)) ms (at most ${max} s wanted)"
	[ "$rc" = 0 ] && [ $((t1 - t0)) -le $((max * 1000000)) ]
}
check "systemctl restart mfrd with the stale id: the start ends, within 20 s" timed 20 systemctl restart mfrd
check "... mfr.ko refused the rule, the journal names $fix_file:1 (its [rule] line)" bash -c \
	"journalctl -b --since '$fix_since' MESSAGE_ID=$MSG_CONFIG_REJECTED -o cat | tee /dev/stderr | grep -q '$fix_file:1: rule refused by mfr.ko'"
check "... STATUS: DEGRADED, not every rule in force, 1 of 3 refused" bash -c \
	"systemctl show -p StatusText --value mfrd | tee /dev/stderr | grep -q '^DEGRADED, not every rule in force: .*1 of 3 rules NOT in force'"
same_rules_as_before() { diff <(echo "$fix_before") <(mfrctl -j rules list | rule_terms); }
check "... and the module has the other rules, as before" same_rules_as_before

sed -i 's|^cgroup-id = 1099511627776$|cgroup-path = /e2e-late.slice|' "$fix_file"
# 15.5 s once with make test's two VMs beside this one on 2 cores; a
# reload queued behind mfrd's start would wait its ready_timeout, 30 s.
check "fix the typo; systemctl reload mfrd returns within 20 s, exit 0" timed 20 systemctl reload mfrd
fixed_in() {
	mfrctl -j rules list | json "any(r.get('name_glob') == 'fixed-*' and
		r.get('cgroup_path') == '/e2e-late.slice' and r['action'] == 'keep' for r in d) and len(d) == 3"
}
check "... the fixed rule is in the module (with guest-ram* and the cgroup rule)" fixed_in
check "... protected: mfrd_protected 1, STATUS not DEGRADED" wait_until 30 protected

rm -f "$fix_file" "$late_file"
check "without the test's rule files: systemctl reload mfrd" systemctl reload mfrd
only_guest_ram() { mfrctl -j rules list | json "[r.get('name_glob') for r in d] == ['guest-ram*']"; }
check "... only guest-ram* in the module" only_guest_ram
check "rmdir /e2e-late.slice" rmdir "$late_cg"
