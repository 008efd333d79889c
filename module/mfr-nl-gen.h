/* SPDX-License-Identifier: GPL-2.0-only */
/* Do not edit directly, auto-generated from: */
/*	module/mfr.yaml */
/* YNL-GEN kernel header */

#ifndef _LINUX_MFR_GEN_H
#define _LINUX_MFR_GEN_H

#include <net/netlink.h>
#include <net/genetlink.h>

#include <uapi/linux/mfr.h>

/* Common nested types */
extern const struct nla_policy mfr_rule_entry_nl_policy[MFR_A_RULE_BUDGET + 1];

int mfr_nl_status_pre_doit(const struct genl_split_ops *ops,
			   struct sk_buff *skb, struct genl_info *info);
int mfr_nl_pre_doit(const struct genl_split_ops *ops, struct sk_buff *skb,
		    struct genl_info *info);
int mfr_nl_dump_start(struct netlink_callback *cb);

int mfr_nl_status_get_doit(struct sk_buff *skb, struct genl_info *info);
int mfr_nl_rule_add_doit(struct sk_buff *skb, struct genl_info *info);
int mfr_nl_rule_del_doit(struct sk_buff *skb, struct genl_info *info);
int mfr_nl_rule_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int mfr_nl_memfd_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int mfr_nl_memfd_set_doit(struct sk_buff *skb, struct genl_info *info);
int mfr_nl_poison_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb);
int mfr_nl_rule_replace_doit(struct sk_buff *skb, struct genl_info *info);

enum {
	MFR_NLGRP_EVENTS,
};

extern struct genl_family mfr_nl_family;

#endif /* _LINUX_MFR_GEN_H */
