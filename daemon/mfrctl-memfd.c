// SPDX-License-Identifier: GPL-2.0-or-later
/* mfrctl memfd list|set: the memfds that keep poisoned pages mapped. */
#include <errno.h>

#include "mfrctl.h"

static const struct column memfd_cols[] = {
	COLUMN("INODE", true, MFR_A_MEMFD_INODE),
	COLUMN("NAME", false, MFR_A_MEMFD_NAME),
	COLUMN("PID", true, MFR_A_MEMFD_PID),
	COLUMN("COMM", false, MFR_A_MEMFD_COMM),
	COLUMN_OR("CGROUP", false, MFR_A_MEMFD_CGROUP_PATH,
		  MFR_A_MEMFD_CGROUP_ID),
	COLUMN("SIZE", true, MFR_A_MEMFD_SIZE),
	COLUMN("HPAGE", true, MFR_A_MEMFD_HUGEPAGE_SIZE),
	COLUMN("POLICY", false, MFR_A_MEMFD_POLICY),
	COLUMN("BUDGET", true, MFR_A_MEMFD_BUDGET),
	COLUMN("POISONED", true, MFR_A_MEMFD_RAW_PAGES_POISONED),
	COLUMN("STATE", false, MFR_A_MEMFD_STATE),
	COLUMN("RULE", true, MFR_A_MEMFD_RULE_ID),
};

int memfd_list_run(struct mfrctl *ctl)
{
	return list_records(ctl, MFR_CMD_MEMFD_GET, memfd_cols,
			    ARRAY_SIZE(memfd_cols));
}

/* The process is the one holding the memfd: pid_max can be 4194304. */
#define PID_MAX		4194304
#define FD_MAX		2147483647

int memfd_set_parse(struct mfrctl *ctl, char **args)
{
	return parse_u32("pid", args[0], 1, PID_MAX, &ctl->pid) ?:
	       parse_u32("fd", args[1], 0, FD_MAX, &ctl->fd) ?:
	       parse_policy("policy", args[2], &ctl->policy);
}

/* The kernel answers with the memfd as it is now: show it like a list. */
int memfd_set_run(struct mfrctl *ctl)
{
	struct listing l;
	struct nl_msg *req;
	int ret;

	req = mfr_genl_request(ctl->genl, MFR_CMD_MEMFD_SET);
	if (!req)
		return mfrctl_fail(ctl, -ENOMEM);
	ret = listing_init(&l, memfd_cols, ARRAY_SIZE(memfd_cols), ctl->json,
			   true);
	if (!ret &&
	    (nla_put_u32(req, MFR_A_MEMFD_PID, ctl->pid) ||
	     nla_put_u32(req, MFR_A_MEMFD_FD, ctl->fd) ||
	     nla_put_u32(req, MFR_A_MEMFD_POLICY, ctl->policy) ||
	     ((ctl->given & OPT_BUDGET) &&
	      nla_put_u32(req, MFR_A_MEMFD_BUDGET, ctl->budget))))
		ret = -ENOMEM;
	if (!ret)
		ret = mfr_genl_do(ctl->genl, req, listing_add, &l);
	if (!ret)
		ret = listing_print(&l);
	listing_free(&l);
	nlmsg_free(req);
	return ret ? mfrctl_fail(ctl, ret) : EXIT_OK;
}
