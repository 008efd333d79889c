// SPDX-License-Identifier: GPL-2.0-only
/* Do not edit directly, auto-generated from: */
/*	module/mfr.yaml */
/* YNL-GEN kernel source */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "mfr-nl-gen.h"

#include <uapi/linux/mfr.h>

/* Integer value ranges */
static const struct netlink_range_validation mfr_a_rule_budget_range = {
	.max	= 1048576ULL,
};

static const struct netlink_range_validation mfr_a_memfd_pid_range = {
	.min	= 1ULL,
	.max	= 4194304ULL,
};

static const struct netlink_range_validation mfr_a_memfd_budget_range = {
	.max	= 1048576ULL,
};

static const struct netlink_range_validation mfr_a_memfd_fd_range = {
	.max	= 2147483647ULL,
};

/* Common nested types */
const struct nla_policy mfr_rule_entry_nl_policy[MFR_A_RULE_BUDGET + 1] = {
	[MFR_A_RULE_ID] = NLA_POLICY_MIN(NLA_U32, 1),
	[MFR_A_RULE_NAME_GLOB] = { .type = NLA_NUL_STRING, .len = 249, },
	[MFR_A_RULE_CGROUP_ID] = NLA_POLICY_MIN(NLA_UINT, 1),
	[MFR_A_RULE_CGROUP_PATH] = { .type = NLA_NUL_STRING, .len = 4095, },
	[MFR_A_RULE_UID] = { .type = NLA_U32, },
	[MFR_A_RULE_ACTION] = NLA_POLICY_MAX(NLA_U32, 1),
	[MFR_A_RULE_BUDGET] = NLA_POLICY_FULL_RANGE(NLA_U32, &mfr_a_rule_budget_range),
};

/* MFR_CMD_RULE_ADD - do */
static const struct nla_policy mfr_rule_add_nl_policy[MFR_A_RULE_BUDGET + 1] = {
	[MFR_A_RULE_NAME_GLOB] = { .type = NLA_NUL_STRING, .len = 249, },
	[MFR_A_RULE_CGROUP_ID] = NLA_POLICY_MIN(NLA_UINT, 1),
	[MFR_A_RULE_CGROUP_PATH] = { .type = NLA_NUL_STRING, .len = 4095, },
	[MFR_A_RULE_UID] = { .type = NLA_U32, },
	[MFR_A_RULE_ACTION] = NLA_POLICY_MAX(NLA_U32, 1),
	[MFR_A_RULE_BUDGET] = NLA_POLICY_FULL_RANGE(NLA_U32, &mfr_a_rule_budget_range),
};

/* MFR_CMD_RULE_DEL - do */
static const struct nla_policy mfr_rule_del_nl_policy[MFR_A_RULE_ID + 1] = {
	[MFR_A_RULE_ID] = NLA_POLICY_MIN(NLA_U32, 1),
};

/* MFR_CMD_MEMFD_SET - do */
static const struct nla_policy mfr_memfd_set_nl_policy[MFR_A_MEMFD_FD + 1] = {
	[MFR_A_MEMFD_PID] = NLA_POLICY_FULL_RANGE(NLA_U32, &mfr_a_memfd_pid_range),
	[MFR_A_MEMFD_FD] = NLA_POLICY_FULL_RANGE(NLA_U32, &mfr_a_memfd_fd_range),
	[MFR_A_MEMFD_POLICY] = NLA_POLICY_MAX(NLA_U32, 1),
	[MFR_A_MEMFD_BUDGET] = NLA_POLICY_FULL_RANGE(NLA_U32, &mfr_a_memfd_budget_range),
};

/* MFR_CMD_RULE_REPLACE - do */
static const struct nla_policy mfr_rule_replace_nl_policy[MFR_A_RULE_SET_RULE + 1] = {
	[MFR_A_RULE_SET_RULE] = NLA_POLICY_NESTED(mfr_rule_entry_nl_policy),
};

/* Ops table for mfr */
static const struct genl_split_ops mfr_nl_ops[] = {
	{
		.cmd		= MFR_CMD_STATUS_GET,
		.pre_doit	= mfr_nl_status_pre_doit,
		.doit		= mfr_nl_status_get_doit,
		.flags		= GENL_CMD_CAP_DO,
	},
	{
		.cmd		= MFR_CMD_RULE_ADD,
		.pre_doit	= mfr_nl_pre_doit,
		.doit		= mfr_nl_rule_add_doit,
		.policy		= mfr_rule_add_nl_policy,
		.maxattr	= MFR_A_RULE_BUDGET,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd		= MFR_CMD_RULE_DEL,
		.pre_doit	= mfr_nl_pre_doit,
		.doit		= mfr_nl_rule_del_doit,
		.policy		= mfr_rule_del_nl_policy,
		.maxattr	= MFR_A_RULE_ID,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd	= MFR_CMD_RULE_GET,
		.start	= mfr_nl_dump_start,
		.dumpit	= mfr_nl_rule_get_dumpit,
		.flags	= GENL_ADMIN_PERM | GENL_CMD_CAP_DUMP,
	},
	{
		.cmd	= MFR_CMD_MEMFD_GET,
		.start	= mfr_nl_dump_start,
		.dumpit	= mfr_nl_memfd_get_dumpit,
		.flags	= GENL_ADMIN_PERM | GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= MFR_CMD_MEMFD_SET,
		.pre_doit	= mfr_nl_pre_doit,
		.doit		= mfr_nl_memfd_set_doit,
		.policy		= mfr_memfd_set_nl_policy,
		.maxattr	= MFR_A_MEMFD_FD,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
	{
		.cmd	= MFR_CMD_POISON_GET,
		.start	= mfr_nl_dump_start,
		.dumpit	= mfr_nl_poison_get_dumpit,
		.flags	= GENL_ADMIN_PERM | GENL_CMD_CAP_DUMP,
	},
	{
		.cmd		= MFR_CMD_RULE_REPLACE,
		.pre_doit	= mfr_nl_pre_doit,
		.doit		= mfr_nl_rule_replace_doit,
		.policy		= mfr_rule_replace_nl_policy,
		.maxattr	= MFR_A_RULE_SET_RULE,
		.flags		= GENL_ADMIN_PERM | GENL_CMD_CAP_DO,
	},
};

static const struct genl_multicast_group mfr_nl_mcgrps[] = {
	[MFR_NLGRP_EVENTS] = { .name = "events", .flags = GENL_MCAST_CAP_SYS_ADMIN, },
};

struct genl_family mfr_nl_family __ro_after_init = {
	.name		= MFR_FAMILY_NAME,
	.version	= MFR_FAMILY_VERSION,
	.netnsok	= true,
	.parallel_ops	= true,
	.module		= THIS_MODULE,
	.split_ops	= mfr_nl_ops,
	.n_split_ops	= ARRAY_SIZE(mfr_nl_ops),
	.mcgrps		= mfr_nl_mcgrps,
	.n_mcgrps	= ARRAY_SIZE(mfr_nl_mcgrps),
};
