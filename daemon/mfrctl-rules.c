// SPDX-License-Identifier: GPL-2.0-or-later
/* mfrctl rules list|add|del: the rules that opt new memfds in. */
#include <errno.h>
#include <stdio.h>

#include "mfrctl.h"

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
	return ret ? mfrctl_fail(ctl, ret) : EXIT_OK;
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
