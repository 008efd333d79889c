# SPDX-License-Identifier: GPL-2.0-or-later
# Boot 3 started with a rule whose cgroup did not exist (70-late.conf:
# /e2e-late.slice).  mfr.ko matches a cgroup path by name when a memfd
# is made, so the rule is in force from the start: mfrd is READY at once
# with every rule in the module, the workload unit ordered after it
# (guest-vm.service, a VMM stand-in) starts, and once the cgroup appears
# a memfd made in it is kept by that rule, with no push in between.

late_cg=/sys/fs/cgroup/e2e-late.slice
late_file=/etc/mfrd/rules.d/70-late.conf
late_premise() { [ ! -e "$late_cg" ] && grep -q '^cgroup-path = /e2e-late.slice$' "$late_file"; }
check "premise: /e2e-late.slice does not exist; 70-late.conf names it" late_premise
check "mfrd became active (READY) before ready_timeout (30 s) ran out" ready_prompt
late_rule_in() {
	mfrctl -j rules list |
		json "(any(r.get('cgroup_path') == '/e2e-late.slice' and r['action'] == 'keep' for r in d) and
		       any(r.get('name_glob') == 'guest-ram*' for r in d))"
}
check "the module has the rule for the missing cgroup, and guest-ram*, from the start" late_rule_in
vm_after_mfrd() {
	local a v
	a=$(unit_prop mfrd ActiveEnterTimestampMonotonic)
	v=$(unit_prop guest-vm ExecMainStartTimestampMonotonic)
	echo "mfrd active at $a us, guest-vm started at $v us"
	systemctl is-active -q guest-vm && [ "$v" -ge "$a" ]
}
check "guest-vm.service (After=mfrd.service) started, after mfrd's READY" vm_after_mfrd
boot_finished() {
	local s
	s=$(systemctl is-system-running)
	echo "is-system-running: $s; jobs: $(systemctl list-jobs --no-legend | wc -l)"
	systemctl list-jobs --no-legend
	[ "$s" = running ] || [ "$s" = degraded ]
}
check "the boot finished: is-system-running is not 'starting', no job queued" wait_until 60 boot_finished
protected() {
	metric_is mfrd_protected 1 && metric_is mfrd_ready_unprotected 0 &&
		! systemctl show -p StatusText --value mfrd | grep -q DEGRADED
}
check "protected: mfrd_protected 1, mfrd_ready_unprotected 0, STATUS not DEGRADED" wait_until 30 protected

cg_made=$(monotonic_usec)
check "the cgroup appears: mkdir $late_cg" mkdir "$late_cg"
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
no_push_after() {
	journal_json -u mfrd | python3 -c '
import json, sys
es = [e["MESSAGE"] for e in map(json.loads, sys.stdin)
      if "pushed to mfr.ko" in e.get("MESSAGE", "") and int(e["__MONOTONIC_TIMESTAMP"]) > int(sys.argv[1])]
print(es)
sys.exit(1 if es else 0)' "$cg_made"
}
check "... with no push of the rules after the cgroup appeared" no_push_after
touch "$late_dir/stop"
wait "$late_pid"
rm -rf "$late_dir"
