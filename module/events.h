/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _MFR_EVENTS_H
#define _MFR_EVENTS_H

#include <linux/llist.h>
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
	struct llist_node node;
};

int mfr_event_fill(struct sk_buff *msg, const struct mfr_event *ev);
/* Process context. */
void mfr_event_send(const struct mfr_event *ev);
/* Any context but NMI: from hard interrupts, sent by a work item. */
void mfr_event_send_deferred(const struct mfr_event *ev);
/* Waits for deferred events; called at module exit. */
void mfr_events_flush(void);

#endif /* _MFR_EVENTS_H */
