# SPDX-License-Identifier: GPL-2.0-or-later
# Boot 6 started with a typo in a rule file (80-typo.conf).  It holds
# nothing back: the pfns of earlier boots are offlined before READY,
# READY comes promptly, every other rule is in the module, and the typo
# is said once in the journal and, until fixed, in STATUS and the
# metrics.

typo_file=/etc/mfrd/rules.d/80-typo.conf
check "premise: $typo_file has the typo, mfrd active, never restarted" bash -c \
	"grep -q '^acton = keep' $typo_file && systemctl is-active -q mfrd && [ \"\$(systemctl show -p NRestarts --value mfrd)\" = 0 ]"
check "boot offlining offlined every pfn of earlier boots, none failed" offlined_all "$STATE/before-boot6.pfns"
check "... the kernel has them poisoned (KPF_HWPOISON)" pfns_hwpoisoned "$STATE/before-boot6.pfns"
check "READY promptly, not after ready_timeout (30 s)" ready_prompt
typo_logged() {
	journalctl -b MESSAGE_ID=$MSG_CONFIG_REJECTED -o cat | tee /dev/stderr |
		grep -c "$typo_file:4: unknown key \"acton\"" | grep -qx 1
}
check "the journal names the typo, once" typo_logged
other_rules_in() {
	mfrctl -j rules list | json "(any(r.get('cgroup_path') == '/machine.slice' for r in d) and
		any(r.get('name_glob') == 'guest-ram*' for r in d) and
		not any(r.get('name_glob') == 'typo-*' for r in d))"
}
check "the other rules are in the module (the typo's rule is not)" other_rules_in
typo_said() {
	systemctl show -p StatusText --value mfrd | tee /dev/stderr |
		grep -q 'rules.d has 2 errors' && metric_is mfrd_rules_file_errors 2
}
check "STATUS and mfrd_rules_file_errors 2 say so" wait_until 30 typo_said
