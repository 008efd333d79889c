# SPDX-License-Identifier: GPL-2.0-or-later
# A broken rule file and "systemctl reload mfrd": mfrd logs FILE:LINE
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
same_mfrd() {
	systemctl is-active -q mfrd &&
		[ "$(unit_prop mfrd MainPID)" = "$pid_before" ] &&
		[ "$(unit_prop mfrd NRestarts)" = "$restarts_before" ]
}

check "systemctl reload mfrd (broken rule file)" systemctl reload mfrd
check "journal: config-rejected naming $broken:4" wait_until 60 rejected_with_line
check "mfrd still active, same process, no restart" same_mfrd
check "the module keeps the previous rules" same_rules
rm -f "$broken"
check "reload after the fix" systemctl reload mfrd
sleep 2
check "rules unchanged after the good reload" same_rules
