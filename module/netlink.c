// SPDX-License-Identifier: GPL-2.0-only
/*
 * The "mfr" generic netlink family: registration, the status operation
 * and what every operation shares.  Policies and the op table are
 * generated from mfr.yaml into mfr-nl-gen.c; the handlers of each object
 * live with it (rules.c, policy.c, poison.c).
 */
#include <linux/mfr.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>

#include "mfr-nl-gen.h"
#include "netlink.h"
#include "rules.h"
#include "stats.h"
#include "version.h"

/*
 * Beyond admin-perm (CAP_NET_ADMIN): the operations show pfns and touch
 * other processes' memory, which is CAP_SYS_ADMIN's business.
 */
int mfr_nl_pre_doit(const struct genl_split_ops *ops, struct sk_buff *skb,
		    struct genl_info *info)
{
	if (netlink_capable(skb, CAP_SYS_ADMIN))
		return 0;
	NL_SET_ERR_MSG(info->extack, "needs CAP_SYS_ADMIN");
	return -EPERM;
}

/*
 * status-get: the counters and the generation are host-wide and move with
 * every tenant's memfds and errors.  Open to the users of the initial
 * network namespace (the host's); from any other, a container's, only
 * with CAP_NET_ADMIN over the initial user namespace (netlink_capable()
 * checks the sender's credentials there, not in the netns owner's).
 */
int mfr_nl_status_pre_doit(const struct genl_split_ops *ops,
			   struct sk_buff *skb, struct genl_info *info)
{
	if (net_eq(genl_info_net(info), &init_net) ||
	    netlink_capable(skb, CAP_NET_ADMIN))
		return 0;
	NL_SET_ERR_MSG(info->extack,
		       "outside the initial network namespace, status-get needs CAP_NET_ADMIN");
	return -EPERM;
}

int mfr_nl_dump_start(struct netlink_callback *cb)
{
	if (netlink_capable(cb->skb, CAP_SYS_ADMIN))
		return 0;
	NL_SET_ERR_MSG(cb->extack, "needs CAP_SYS_ADMIN");
	return -EPERM;
}

bool mfr_nl_missing(struct genl_info *info, unsigned int attr,
		    const char *name)
{
	if (!GENL_REQ_ATTR_CHECK(info, attr))
		return false;
	NL_SET_ERR_MSG_FMT(info->extack, "%s: missing", name);
	return true;
}

struct sk_buff *mfr_nl_reply_new(struct genl_info *info, void **hdr)
{
	struct sk_buff *msg;

	msg = genlmsg_new(GENLMSG_DEFAULT_SIZE, GFP_KERNEL);
	if (!msg)
		return NULL;
	*hdr = genlmsg_iput(msg, info);
	if (!*hdr) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

int mfr_nl_reply_send(struct sk_buff *msg, void *hdr, struct genl_info *info)
{
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

u64 mfr_nl_dump_seq(struct netlink_callback *cb)
{
	u64 generation = mfr_state_generation();

	/* 0 would disable the check; the generation only rarely wraps to it. */
	cb->seq = lower_32_bits(generation) ?: 1;
	return generation;
}

void *mfr_nl_dump_put(struct sk_buff *skb, struct netlink_callback *cb, u8 cmd)
{
	void *hdr;

	hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid, cb->nlh->nlmsg_seq,
			  &mfr_nl_family, NLM_F_MULTI, cmd);
	if (hdr)
		genl_dump_check_consistent(cb, hdr);
	return hdr;
}

/* A full skb with something in it asks for another pass; else done. */
int mfr_nl_dump_done(struct sk_buff *skb, int err)
{
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err ?: skb->len;
}

bool mfr_nl_has_listeners(void)
{
	return genl_has_listeners(&mfr_nl_family, &init_net, MFR_NLGRP_EVENTS);
}

struct sk_buff *mfr_nl_event_new(u8 cmd, gfp_t gfp, void **hdr)
{
	struct sk_buff *msg;

	msg = genlmsg_new(GENLMSG_DEFAULT_SIZE, gfp);
	if (!msg)
		return NULL;
	*hdr = genlmsg_put(msg, 0, 0, &mfr_nl_family, 0, cmd);
	if (!*hdr) {
		nlmsg_free(msg);
		return NULL;
	}
	return msg;
}

/* Process context: @msg is finished (genlmsg_end()). */
void mfr_nl_event_multicast(struct sk_buff *msg)
{
	genlmsg_multicast(&mfr_nl_family, msg, 0, MFR_NLGRP_EVENTS, GFP_KERNEL);
}

static int mfr_put_counter(struct sk_buff *msg, int attr, atomic_long_t *v)
{
	return nla_put_uint(msg, attr, atomic_long_read(v));
}

static int mfr_fill_status(struct sk_buff *msg)
{
	/* Registration succeeded: the kernel's version is this one. */
	if (nla_put_u32(msg, MFR_A_STATUS_HOOKS_API_VERSION,
			MFR_HOOKS_API_VERSION) ||
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
			    &mfr_stats.healthy_pages_returned) ||
	    mfr_put_counter(msg, MFR_A_STATUS_BUDGET_FALLBACKS,
			    &mfr_stats.budget_fallbacks) ||
	    mfr_put_counter(msg, MFR_A_STATUS_SIGNALS_SENT,
			    &mfr_stats.signals_sent) ||
	    nla_put_uint(msg, MFR_A_STATUS_RULES, mfr_rules_count()) ||
	    nla_put_uint(msg, MFR_A_STATUS_GENERATION, mfr_state_generation()) ||
	    mfr_put_counter(msg, MFR_A_STATUS_EVENTS_SUPPRESSED,
			    &mfr_stats.events_suppressed))
		return -EMSGSIZE;
	return 0;
}

int mfr_nl_status_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = mfr_nl_reply_new(info, &hdr);
	if (!msg)
		return -ENOMEM;
	err = mfr_fill_status(msg);
	if (err) {
		nlmsg_free(msg);
		return err;
	}
	return mfr_nl_reply_send(msg, hdr, info);
}

int mfr_netlink_init(void)
{
	int err = genl_register_family(&mfr_nl_family);

	/* -EEXIST: another module holds the name; insmod alone cannot say. */
	if (err)
		pr_err("cannot register the generic netlink family \"%s\": %d\n",
		       mfr_nl_family.name, err);
	return err;
}

void mfr_netlink_exit(void)
{
	genl_unregister_family(&mfr_nl_family);
}
