// SPDX-License-Identifier: GPL-2.0-only
/* Do not edit directly, auto-generated from: */
/*	module/mfr.yaml */
/* YNL-GEN kernel source */

#include <net/netlink.h>
#include <net/genetlink.h>

#include "mfr-nl-gen.h"

#include <uapi/linux/mfr.h>

/* Ops table for mfr */
static const struct genl_split_ops mfr_nl_ops[] = {
	{
		.cmd	= MFR_CMD_STATUS_GET,
		.doit	= mfr_nl_status_get_doit,
		.flags	= GENL_CMD_CAP_DO,
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
