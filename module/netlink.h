/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _MFR_NETLINK_H
#define _MFR_NETLINK_H

#include <linux/types.h>

struct genl_info;
struct netlink_callback;
struct sk_buff;

int mfr_netlink_init(void);
void mfr_netlink_exit(void);

/* A required attribute of a do request; names it when missing. */
bool mfr_nl_missing(struct genl_info *info, unsigned int attr,
		    const char *name);

/* Replies to a do request. */
struct sk_buff *mfr_nl_reply_new(struct genl_info *info, void **hdr);
int mfr_nl_reply_send(struct sk_buff *msg, void *hdr, struct genl_info *info);

/*
 * Dumps: take the generation (and mark the dump interrupted if it moved
 * since the previous pass) under the lock that protects what is dumped.
 */
u64 mfr_nl_dump_seq(struct netlink_callback *cb);
void *mfr_nl_dump_put(struct sk_buff *skb, struct netlink_callback *cb,
		      u8 cmd);
int mfr_nl_dump_done(struct sk_buff *skb, int err);

/* Notifications to the "events" group. */
bool mfr_nl_has_listeners(void);
struct sk_buff *mfr_nl_event_new(u8 cmd, gfp_t gfp, void **hdr);
void mfr_nl_event_multicast(struct sk_buff *msg);

#endif /* _MFR_NETLINK_H */
