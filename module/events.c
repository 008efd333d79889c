// SPDX-License-Identifier: GPL-2.0-only
/*
 * Notifications of poisoned pages and hugepages on the "events" group.
 * Memfd notifications are built by policy.c, which owns the memfd records.
 */
#include <linux/interrupt.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>

#include "events.h"
#include "mfr-nl-gen.h"
#include "netlink.h"

static int mfr_event_put_common(struct sk_buff *msg, const struct mfr_event *ev)
{
	if (nla_put_uint(msg, MFR_A_POISON_HEAD_PFN, ev->head_pfn) ||
	    nla_put_uint(msg, MFR_A_POISON_INODE, ev->ino) ||
	    nla_put_uint(msg, MFR_A_POISON_GENERATION, ev->generation))
		return -EMSGSIZE;
	return 0;
}

int mfr_event_fill(struct sk_buff *msg, const struct mfr_event *ev)
{
	if (mfr_event_put_common(msg, ev))
		return -EMSGSIZE;

	switch (ev->cmd) {
	case MFR_CMD_POISON_GET:
	case MFR_CMD_PAGE_POISONED_NTF:
		if (nla_put_uint(msg, MFR_A_POISON_PFN, ev->pfn) ||
		    nla_put_uint(msg, MFR_A_POISON_FOLIO_SIZE, ev->folio_size) ||
		    nla_put_uint(msg, MFR_A_POISON_OFFSET, ev->offset) ||
		    nla_put_u32(msg, MFR_A_POISON_STATE, ev->state) ||
		    nla_put_u32(msg, MFR_A_POISON_TIMES_CONSUMED,
				ev->times_consumed))
			return -EMSGSIZE;
		break;
	case MFR_CMD_PAGE_CONSUMED_NTF:
		if (nla_put_uint(msg, MFR_A_POISON_PFN, ev->pfn) ||
		    nla_put_uint(msg, MFR_A_POISON_OFFSET, ev->offset) ||
		    nla_put_u32(msg, MFR_A_POISON_TIMES_CONSUMED,
				ev->times_consumed) ||
		    nla_put_u32(msg, MFR_A_POISON_PID, ev->pid) ||
		    nla_put_string(msg, MFR_A_POISON_COMM, ev->comm) ||
		    nla_put_u32(msg, MFR_A_POISON_SIGNAL_CODE, ev->signal_code))
			return -EMSGSIZE;
		break;
	case MFR_CMD_BUDGET_EXCEEDED_NTF:
		if (nla_put_uint(msg, MFR_A_POISON_PFN, ev->pfn) ||
		    nla_put_uint(msg, MFR_A_POISON_FOLIO_SIZE, ev->folio_size) ||
		    nla_put_uint(msg, MFR_A_POISON_OFFSET, ev->offset) ||
		    nla_put_u32(msg, MFR_A_POISON_BUDGET, ev->budget))
			return -EMSGSIZE;
		break;
	case MFR_CMD_FOLIO_PENDING_NTF:
		if (nla_put_uint(msg, MFR_A_POISON_FOLIO_SIZE, ev->folio_size) ||
		    nla_put_uint(msg, MFR_A_POISON_OFFSET, ev->offset))
			return -EMSGSIZE;
		break;
	case MFR_CMD_FOLIO_OFFLINED_NTF:
		if (nla_put_uint(msg, MFR_A_POISON_FOLIO_SIZE, ev->folio_size) ||
		    nla_put_u32(msg, MFR_A_POISON_RAW_PAGES_ISOLATED,
				ev->raw_pages_isolated) ||
		    nla_put_u32(msg, MFR_A_POISON_HEALTHY_PAGES_RETURNED,
				ev->healthy_pages_returned))
			return -EMSGSIZE;
		break;
	default:
		WARN_ON_ONCE(1);
		return -EINVAL;
	}
	return 0;
}

static void mfr_event_emit(const struct mfr_event *ev, gfp_t gfp)
{
	struct sk_buff *msg;
	void *hdr;

	if (!mfr_nl_has_listeners())
		return;
	msg = mfr_nl_event_new(ev->cmd, gfp, &hdr);
	if (!msg)
		return;
	if (mfr_event_fill(msg, ev)) {
		nlmsg_free(msg);
		return;
	}
	mfr_nl_event_send(msg, hdr, gfp);
}

void mfr_event_send(const struct mfr_event *ev)
{
	mfr_event_emit(ev, GFP_KERNEL);
}

/*
 * Hugepages are freed, and so offlined, in any context; netlink multicast
 * must not run in hard interrupt context.  Queue a copy for a work item.
 */
static LLIST_HEAD(mfr_events_deferred);

static void mfr_events_work_fn(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&mfr_events_deferred);
	struct mfr_event *ev, *tmp;

	list = llist_reverse_order(list);
	llist_for_each_entry_safe(ev, tmp, list, node) {
		mfr_event_emit(ev, GFP_KERNEL);
		kfree(ev);
	}
}

static DECLARE_WORK(mfr_events_work, mfr_events_work_fn);

void mfr_event_send_deferred(const struct mfr_event *ev)
{
	struct mfr_event *copy;

	/* Usually a task freed it: send now, in order with the rest. */
	if (!in_hardirq() && !in_nmi() && !irqs_disabled()) {
		mfr_event_emit(ev, GFP_ATOMIC);
		return;
	}
	copy = kmemdup(ev, sizeof(*ev), GFP_ATOMIC);
	if (!copy)
		return;
	llist_add(&copy->node, &mfr_events_deferred);
	schedule_work(&mfr_events_work);
}

void mfr_events_flush(void)
{
	flush_work(&mfr_events_work);
}
