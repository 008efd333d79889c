// SPDX-License-Identifier: GPL-2.0-only
/*
 * Handlers of the "mfr" generic netlink family.  Policies and the op table
 * are generated from mfr.yaml into mfr-nl-gen.c.
 */
#include <linux/mfr.h>
#include <net/genetlink.h>

#include "mfr-nl-gen.h"
#include "netlink.h"
#include "stats.h"
#include "version.h"

static int mfr_put_counter(struct sk_buff *msg, int attr, atomic_long_t *v)
{
	return nla_put_uint(msg, attr, atomic_long_read(v));
}

static int mfr_fill_status(struct sk_buff *msg)
{
	if (nla_put_u32(msg, MFR_A_STATUS_HOOKS_API_VERSION,
			mfr_hooks_api_version()) ||
	    nla_put_string(msg, MFR_A_STATUS_MODULE_VERSION, MFR_VERSION) ||
	    mfr_put_counter(msg, MFR_A_STATUS_MEMFDS_KEPT,
			    &mfr_stats.memfds_kept) ||
	    mfr_put_counter(msg, MFR_A_STATUS_RAW_PAGES_KEPT,
			    &mfr_stats.raw_pages_kept) ||
	    mfr_put_counter(msg, MFR_A_STATUS_FOLIOS_PENDING,
			    &mfr_stats.folios_pending) ||
	    mfr_put_counter(msg, MFR_A_STATUS_FOLIOS_OFFLINED,
			    &mfr_stats.folios_offlined) ||
	    mfr_put_counter(msg, MFR_A_STATUS_RAW_PAGES_ISOLATED,
			    &mfr_stats.raw_pages_isolated) ||
	    mfr_put_counter(msg, MFR_A_STATUS_HEALTHY_PAGES_RETURNED,
			    &mfr_stats.healthy_pages_returned))
		return -EMSGSIZE;
	return 0;
}

int mfr_nl_status_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;

	hdr = genlmsg_iput(msg, info);
	if (!hdr) {
		err = -EMSGSIZE;
		goto err_free;
	}
	err = mfr_fill_status(msg);
	if (err)
		goto err_free;

	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free:
	nlmsg_free(msg);
	return err;
}

int mfr_netlink_init(void)
{
	return genl_register_family(&mfr_nl_family);
}

void mfr_netlink_exit(void)
{
	genl_unregister_family(&mfr_nl_family);
}
