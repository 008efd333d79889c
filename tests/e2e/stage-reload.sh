# SPDX-License-Identifier: GPL-2.0-or-later
# "systemctl reload mfrd" is synchronous and honest: a rule the module
# refuses fails the reload and the module keeps its rules (same ids); a
# 300-rule set (more than half of MFR_RULES_MAX) reloads twice; memfds
# created while [scratch-* default][* keep] replaces itself again and
# again get that set's decision every time, never a third one.

rules_file=/etc/mfrd/rules.d/60-reload.conf
rules_before=$(mfrctl -j rules list)
same_rules() { diff <(echo "$rules_before") <(mfrctl -j rules list); }

# A cgroup id that no cgroup has (an id is never used again: a path
# rule would be matched by name, whatever exists now).
printf '[rule]\ncgroup-id = 1099511627776\naction = keep\n' >"$rules_file"
check_refuses_cgroup() {
	local rc=0
	mfrd --check >"$STATE/check.out" 2>&1 || rc=$?
	cat "$STATE/check.out"
	[ "$rc" = 1 ] && grep -q "^$rules_file:2: cgroup-id: 1099511627776: no such cgroup v2" "$STATE/check.out"
}
check "mfrd --check refuses the missing cgroup id before the module is asked" check_refuses_cgroup
check "systemctl reload: a rule the module refuses exits non-zero" bash -c '! systemctl reload mfrd'
check "... and the module has the previous rules, same ids" same_rules
check "... and the journal names the file and line" bash -c \
	"journalctl -b MESSAGE_ID=$MSG_CONFIG_REJECTED -o cat | grep -q '$rules_file:1: rule refused by mfr.ko'"

python3 -c '
for i in range(300):
    print(f"[rule]\nname-glob = big-{i}-*\naction = keep\n")' >"$rules_file"
count_rules() { [ "$(mfrctl -j rules list | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" = "$1" ]; }
check "300 more rules: the first reload succeeds" systemctl reload mfrd
check "... 301 rules in the module" count_rules 301
check "the same set again: the second reload succeeds" systemctl reload mfrd
check "... still 301 rules" count_rules 301

# The switch race, with the rules of the issue.
printf '[rule]\nname-glob = scratch-*\naction = default\n\n[rule]\nname-glob = *\naction = keep\n' \
	>"$rules_file"
mv /etc/mfrd/rules.d/guest-ram.conf /root/guest-ram.conf.saved
check "[scratch-* default][* keep] reloads" systemctl reload mfrd
mfrctl -j monitor >"$STATE/switch-events" &
monitor=$!
sleep 1
( for _ in $(seq 20); do systemctl reload mfrd || echo "reload failed"; done ) >"$STATE/switch-reloads" 2>&1 &
reloads=$!
python3 - <<'PY'
import os, time
for i in range(300):
    name = f"scratch-{i}" if i % 2 == 0 else f"other-{i}"
    os.close(os.memfd_create(name, os.MFD_HUGETLB))
    time.sleep(0.01)
PY
wait "$reloads"
sleep 2
kill "$monitor"
switch_ok() {
	python3 - "$STATE/switch-events" <<'PY'
import json, sys
kept = {e["name"] for e in map(json.loads, open(sys.argv[1])) if e.get("event") == "memfd-kept"}
scratch = sorted(n for n in kept if n.startswith("scratch-"))
others = [f"other-{i}" for i in range(1, 300, 2)]
missing = [n for n in others if n not in kept]
print(f"kept: {len(kept)}, scratch kept: {scratch[:5]}, others not kept: {missing[:5]}")
sys.exit(1 if scratch or missing else 0)
PY
}
check "20 reloads during the creations all succeeded" bash -c "! grep -q failed '$STATE/switch-reloads'"
check "no scratch-* memfd kept, every other-* kept" switch_ok

rm -f "$rules_file"
mv /root/guest-ram.conf.saved /etc/mfrd/rules.d/guest-ram.conf
check "back to the guest-ram* rule" systemctl reload mfrd
check "... only it in the module" count_rules 1
