// SPDX-License-Identifier: GPL-2.0-or-later
/* mfrctl rules list|add|del: the rules that opt new memfds in. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "mfrctl.h"
#include "mfrd-config.h"

const struct column rule_cols[] = {
	COLUMN("ID", true, MFR_A_RULE_ID, "rule id, in the order tried"),
	COLUMN("NAME", false, MFR_A_RULE_NAME_GLOB, "memfd name glob"),
	COLUMN_OR("CGROUP", false, MFR_A_RULE_CGROUP_PATH,
		  MFR_A_RULE_CGROUP_ID, "cgroup v2 (path, or id)"),
	COLUMN("UID", true, MFR_A_RULE_UID, "uid of the creating task"),
	COLUMN("ACTION", false, MFR_A_RULE_ACTION, "keep or default"),
	COLUMN("BUDGET", true, MFR_A_RULE_BUDGET, "poisoned pages a memfd may keep"),
};
const size_t rule_ncols = ARRAY_SIZE(rule_cols);

int rules_list_run(struct mfrctl *ctl)
{
	return list_records(ctl, MFR_CMD_RULE_GET, rule_cols,
			    ARRAY_SIZE(rule_cols));
}

int rules_add_parse(struct mfrctl *ctl, char **args)
{
	(void)args;
	if (!(ctl->given & OPT_ACTION))
		return usage_error("rules add: --action keep|default is required");
	if ((ctl->given & OPT_CGROUP) && (ctl->given & OPT_CGROUP_ID))
		return usage_error("give --cgroup or --cgroup-id, not both");
	return 0;
}

/* The new rule's id, bare for scripts that capture it. */
static int print_added(uint8_t cmd, const struct mfr_attr_set *set,
		       struct nlattr **tb, void *arg)
{
	struct mfrctl *ctl = arg;

	(void)cmd;
	if (ctl->json)
		return json_print_attrs(set, tb);
	if (!tb[MFR_A_RULE_ID])
		return -EBADMSG;
	printf("%u\n", nla_get_u32(tb[MFR_A_RULE_ID]));
	return 0;
}

/*
 * A rule added or deleted here lives in mfr.ko only: mfrd's next reload
 * or restart replaces the module's rules with those of rules.d.  Said on
 * stderr (stdout is the id, for scripts), with the lines that keep it.
 */
static void runtime_rule_note(const struct mfrctl *ctl, bool added)
{
	fprintf(stderr, "mfrctl: note: this changes the rules in mfr.ko only; if mfrd runs, its next reload or restart puts back the rules of %s%s\n",
		MFRD_RULES_DIR, added ? ". To keep this rule, add to a file there:" :
		" (delete the rule there too, then: systemctl reload mfrd)");
	if (!added)
		return;
	fputs("  [rule]\n", stderr);
	if (ctl->name_glob)
		fprintf(stderr, "  name-glob = %s\n", ctl->name_glob);
	if (ctl->cgroup_path)
		fprintf(stderr, "  cgroup-path = %s\n", ctl->cgroup_path);
	if (ctl->given & OPT_CGROUP_ID)
		fprintf(stderr, "  cgroup-id = %" PRIu64 "\n", ctl->cgroup_id);
	if (ctl->given & OPT_UID)
		fprintf(stderr, "  uid = %u\n", ctl->uid);
	fprintf(stderr, "  action = %s\n",
		ctl->action == MFR_POLICY_KEEP ? "keep" : "default");
	if (ctl->given & OPT_BUDGET)
		fprintf(stderr, "  budget = %u\n", ctl->budget);
	fputs("and run: systemctl reload mfrd\n", stderr);
}

int rules_add_run(struct mfrctl *ctl)
{
	struct nl_msg *req;
	int ret = -ENOMEM;

	req = mfr_genl_request(ctl->genl, MFR_CMD_RULE_ADD);
	if (!req)
		return mfrctl_fail(ctl, ret);
	if ((ctl->name_glob &&
	     nla_put_string(req, MFR_A_RULE_NAME_GLOB, ctl->name_glob)) ||
	    (ctl->cgroup_path &&
	     nla_put_string(req, MFR_A_RULE_CGROUP_PATH, ctl->cgroup_path)) ||
	    ((ctl->given & OPT_CGROUP_ID) &&
	     nla_put_u64(req, MFR_A_RULE_CGROUP_ID, ctl->cgroup_id)) ||
	    ((ctl->given & OPT_UID) &&
	     nla_put_u32(req, MFR_A_RULE_UID, ctl->uid)) ||
	    nla_put_u32(req, MFR_A_RULE_ACTION, ctl->action) ||
	    ((ctl->given & OPT_BUDGET) &&
	     nla_put_u32(req, MFR_A_RULE_BUDGET, ctl->budget)))
		goto out;
	ret = mfr_genl_do(ctl->genl, req, print_added, ctl);
out:
	nlmsg_free(req);
	if (ret)
		return mfrctl_fail(ctl, ret);
	runtime_rule_note(ctl, true);
	return EXIT_OK;
}

int rules_del_parse(struct mfrctl *ctl, char **args)
{
	return parse_u32("rule id", args[0], 1, UINT32_MAX, &ctl->rule_id);
}

int rules_del_run(struct mfrctl *ctl)
{
	struct nl_msg *req;
	json_object *doc;
	int ret = -ENOMEM;

	req = mfr_genl_request(ctl->genl, MFR_CMD_RULE_DEL);
	if (!req)
		return mfrctl_fail(ctl, ret);
	if (!nla_put_u32(req, MFR_A_RULE_ID, ctl->rule_id))
		ret = mfr_genl_do(ctl->genl, req, NULL, NULL);
	nlmsg_free(req);
	if (ret)
		return mfrctl_fail(ctl, ret);
	runtime_rule_note(ctl, false);
	if (!ctl->json)
		return EXIT_OK;

	/* One document per command, even when the kernel says nothing. */
	doc = json_object_new_object();
	ret = doc ? json_add(doc, "id", json_object_new_uint64(ctl->rule_id)) :
		    -ENOMEM;
	if (!ret)
		ret = json_print(doc);
	json_object_put(doc);
	return ret ? mfrctl_fail(ctl, ret) : EXIT_OK;
}
