# SPDX-License-Identifier: GPL-2.0-or-later
# A broken rule file and "systemctl reload mfrd": the reload fails (its
# ExecReload waits for mfrd's answer), mfrd logs FILE:LINE
# (config-rejected), keeps running, and the module keeps the rules it had.

rules_before=$(mfrctl -j rules list)
pid_before=$(unit_prop mfrd MainPID)
restarts_before=$(unit_prop mfrd NRestarts)
since=$(date '+%Y-%m-%d %H:%M:%S')
sleep 1
broken=/etc/mfrd/rules.d/50-broken.conf
printf '# a typo in the action\n[rule]\nname-glob = other-*\naction = maybe\n' >"$broken"

rejected_with_line() {
	journalctl -b --since "$since" MESSAGE_ID=$MSG_CONFIG_REJECTED -o cat |
		tee /dev/stderr | grep -qF "$broken:4"
}
same_rules() { diff <(echo "$rules_before") <(mfrctl -j rules list); }
# A good reload pushes the rules again (new ids): compare what they say.
rule_terms() {
	python3 -c '
import json, sys
for r in json.load(sys.stdin):
    print(sorted((k, v) for k, v in r.items() if k not in ("id", "generation")))'
}
same_rule_terms() { diff <(echo "$rules_before" | rule_terms) <(mfrctl -j rules list | rule_terms); }
same_mfrd() {
	systemctl is-active -q mfrd &&
		[ "$(unit_prop mfrd MainPID)" = "$pid_before" ] &&
		[ "$(unit_prop mfrd NRestarts)" = "$restarts_before" ]
}

check "systemctl reload mfrd (broken rule file) exits non-zero" bash -c '! systemctl reload mfrd'
check "journal: config-rejected naming $broken:4" wait_until 60 rejected_with_line
check "mfrd still active, same process, no restart" same_mfrd
check "the module keeps the previous rules (same ids, not pushed again)" same_rules
rm -f "$broken"
check "reload after the fix" systemctl reload mfrd
check "the same rules after the good reload" wait_until 30 same_rule_terms
