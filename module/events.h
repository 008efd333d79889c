/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _MFR_EVENTS_H
#define _MFR_EVENTS_H

#include <linux/gfp_types.h>
#include <linux/sched.h>
#include <linux/types.h>

struct sk_buff;

/*
 * One poisoned-page or hugepage transition, as notified on the "events"
 * group and (for MFR_CMD_POISON_GET) as dumped: @cmd picks the attributes.
 */
struct mfr_event {
	u8 cmd;
	u64 pfn;
	u64 head_pfn;
	u64 folio_size;
	u64 ino;
	u64 offset;
	u32 state;
	u32 times_consumed;
	u32 pid;
	char comm[TASK_COMM_LEN];
	u32 signal_code;
	u32 budget;
	u32 raw_pages_isolated;
	u32 healthy_pages_returned;
	u64 generation;
};

/* The attributes of @ev but its generation. */
int mfr_event_fill(struct sk_buff *msg, const struct mfr_event *ev);

/*
 * Ordered notifications.  mfr_ntf_new() returns a message to fill, or NULL
 * if nobody listens; mfr_ntf_queue() (any context but NMI, under the lock
 * that orders the change it reports) moves the generation, gives it to
 * @msg as @generation_attr and queues it, or only moves the generation if
 * @msg is NULL; mfr_ntf_kick() sends what is queued, at once if the caller
 * may sleep, else from a work item.
 */
void mfr_events_init(void);
struct sk_buff *mfr_ntf_new(u8 cmd, gfp_t gfp, void **hdr);
u64 mfr_ntf_queue(struct sk_buff *msg, void *hdr, int generation_attr);
void mfr_ntf_kick(void);
/* mfr_ntf_queue() of @ev filled into @msg (which may be NULL). */
u64 mfr_event_queue(struct sk_buff *msg, void *hdr, const struct mfr_event *ev);
/* Process context: new, fill, queue and kick; returns the generation. */
u64 mfr_event_send(const struct mfr_event *ev);
/* Sends what is queued; called at module exit, family still registered. */
void mfr_events_flush(void);

#endif /* _MFR_EVENTS_H */
