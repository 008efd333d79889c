# SPDX-License-Identifier: GPL-2.0-or-later
# Boot 3 started with a rule whose cgroup did not exist (70-late.conf:
# /e2e-late.slice), so mfr.ko refused mfrd's rule set.  mfrd did not block
# the boot: it said READY after ready_timeout (30 s), loudly degraded,
# the workload unit ordered after it (guest-vm.service, a VMM stand-in)
# started, and the boot finished.  Once the cgroup appears, mfrd pushes
# the rules by itself (no reload): the module has them and a memfd made
# in that cgroup is kept by the rule.

late_cg=/sys/fs/cgroup/e2e-late.slice
late_file=/etc/mfrd/rules.d/70-late.conf
refused_at_start() {
	journalctl -b MESSAGE_ID=$MSG_CONFIG_REJECTED -o cat | tee /dev/stderr |
		grep -q "$late_file:.*refused by mfr.ko"
}
late_premise() { [ ! -e "$late_cg" ] && refused_at_start; }
check "premise: /e2e-late.slice did not exist; mfr.ko refused the rules at mfrd's start" late_premise
ready_bounded() {
	local s a
	s=$(mfrd_exec_usec)
	a=$(unit_prop mfrd ActiveEnterTimestampMonotonic)
	echo "mfrd started at $s us, active (READY) at $a us: $(((a - s) / 1000)) ms"
	[ "$a" -gt 0 ] && [ $((a - s)) -ge 29000000 ] && [ $((a - s)) -le 60000000 ]
}
check "mfrd became active (READY) after ready_timeout, 30 s, not later than 60 s" ready_bounded
check "... with a warning: host NOT protected after 30 s (journal)" bash -c \
	"journalctl -b MESSAGE_ID=$MSG_READY_UNPROTECTED MFR_READY_TIMEOUT=30 -o cat | grep -q 'host NOT protected after 30 s'"
vm_after_mfrd() {
	local a v
	a=$(unit_prop mfrd ActiveEnterTimestampMonotonic)
	v=$(unit_prop guest-vm ExecMainStartTimestampMonotonic)
	echo "mfrd active at $a us, guest-vm started at $v us"
	systemctl is-active -q guest-vm && [ "$v" -ge "$a" ]
}
check "guest-vm.service (After=mfrd.service) started meanwhile, after mfrd's READY" vm_after_mfrd
boot_finished() {
	local s
	s=$(systemctl is-system-running)
	echo "is-system-running: $s; jobs: $(systemctl list-jobs --no-legend | wc -l)"
	systemctl list-jobs --no-legend
	[ "$s" = running ] || [ "$s" = degraded ]
}
check "the boot finished: is-system-running is not 'starting', no job queued" wait_until 60 boot_finished
degraded() {
	systemctl show -p StatusText --value mfrd | tee /dev/stderr | grep -q '^DEGRADED, host NOT protected' &&
		metric_is mfrd_ready_unprotected 1 && metric_is mfrd_protected 0
}
check "meanwhile STATUS says DEGRADED, metrics mfrd_ready_unprotected 1, mfrd_protected 0" \
	wait_until 30 degraded
late_rule_in() {
	mfrctl -j rules list |
		json "(any(r.get('cgroup_path') == '/e2e-late.slice' and r['action'] == 'keep' for r in d) and
		       any(r.get('name_glob') == 'guest-ram*' for r in d))"
}
# All or nothing: mfr.ko, loaded at boot, has none of the refused set.
no_rules() { mfrctl -j rules list | json "len(d) == 0"; }
check "... and no rule in the module (rule-replace refused whole)" no_rules

cg_made=$(monotonic_usec)
check "the cgroup appears: mkdir $late_cg" mkdir "$late_cg"
# On failure: what mfrd said since the mkdir, and the module's rules.
late_rule_pushed() {
	wait_until 30 late_rule_in && return 0
	echo "cgroup made at $cg_made us, now $(monotonic_usec) us"
	journalctl -b -u mfrd -o short-monotonic --no-pager | tail -n 40
	mfrctl -j rules list
	return 1
}
check "mfrd pushes the rules by itself once it exists (mfrctl -j rules list)" late_rule_pushed
accepted_after_mkdir() {
	journal_json MESSAGE_ID=$MSG_CONFIG_REJECTED | python3 -c '
import json, sys
es = [e for e in map(json.loads, sys.stdin) if "accepted now" in e.get("MESSAGE", "")
      and int(e["__MONOTONIC_TIMESTAMP"]) > int(sys.argv[1])]
print([e["MESSAGE"] for e in es])
sys.exit(0 if es else 1)' "$cg_made"
}
check "... journal: the rules refused earlier are accepted now" accepted_after_mkdir
protected() {
	metric_is mfrd_protected 1 && metric_is mfrd_ready_unprotected 0 &&
		! systemctl show -p StatusText --value mfrd | grep -q DEGRADED
}
check "... protected: mfrd_protected 1, mfrd_ready_unprotected 0, STATUS not DEGRADED" wait_until 30 protected

# A VMM in that cgroup: its memfd (a name no other rule matches) is kept
# by the cgroup rule.
late_dir=$(mktemp -d)
bash -c 'echo $$ >"$1/cgroup.procs" && exec "$2" late-vm 1 "ready:$3/ready" "wait:$3/stop" close' \
	sh "$late_cg" "$BIN/memfd_script" "$late_dir" >"$SHARE/logs/late-vm.out" 2>&1 &
late_pid=$!
late_kept() {
	local id
	id=$(mfrctl -j rules list | python3 -c '
import json, sys
print(next((r["id"] for r in json.load(sys.stdin) if r.get("cgroup_path") == "/e2e-late.slice"), 0))')
	mfrctl -j memfd list | json "any(m['name'] == 'late-vm' and m['pid'] == $late_pid and
		m['policy'] == 'keep' and m.get('rule_id') == $id for m in d)"
}
late_vm_kept() { wait_file "$late_dir/ready" 60 && late_kept; }
check "a memfd made in /e2e-late.slice is kept by that rule" late_vm_kept
touch "$late_dir/stop"
wait "$late_pid"
rm -rf "$late_dir"
