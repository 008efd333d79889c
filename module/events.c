// SPDX-License-Identifier: GPL-2.0-only
/*
 * Notifications of poisoned pages and hugepages on the "events" group.
 * Memfd notifications are built by policy.c, which owns the memfd records.
 */
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/genetlink.h>

#include "events.h"
#include "mfr-nl-gen.h"
#include "netlink.h"
#include "stats.h"

static int mfr_event_put_common(struct sk_buff *msg, const struct mfr_event *ev)
{
	if (nla_put_uint(msg, MFR_A_POISON_HEAD_PFN, ev->head_pfn) ||
	    nla_put_uint(msg, MFR_A_POISON_INODE, ev->ino))
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
	case MFR_CMD_PAGE_UNTRACKED_NTF:
		if (nla_put_uint(msg, MFR_A_POISON_PFN, ev->pfn) ||
		    nla_put_uint(msg, MFR_A_POISON_FOLIO_SIZE, ev->folio_size) ||
		    nla_put_uint(msg, MFR_A_POISON_OFFSET, ev->offset) ||
		    nla_put_u32(msg, MFR_A_POISON_STATE, ev->state))
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

/*
 * Notifications leave in generation order, whatever context raised them:
 * a notification gets its generation and its place in the queue in one
 * critical section, and one sender at a time sends from the head of the
 * queue.  Consumers may rely on that order (mfr.yaml says so).
 */
static struct sk_buff_head mfr_ntf_pending;
static DEFINE_MUTEX(mfr_ntf_send_lock);

static void mfr_ntf_send_queued(void)
{
	struct sk_buff *msg;

	mutex_lock(&mfr_ntf_send_lock);
	while ((msg = skb_dequeue(&mfr_ntf_pending)))
		mfr_nl_event_multicast(msg);
	mutex_unlock(&mfr_ntf_send_lock);
}

static void mfr_ntf_work_fn(struct work_struct *work)
{
	mfr_ntf_send_queued();
}

static DECLARE_WORK(mfr_ntf_work, mfr_ntf_work_fn);

void mfr_events_init(void)
{
	skb_queue_head_init(&mfr_ntf_pending);
}

struct sk_buff *mfr_ntf_new(u8 cmd, gfp_t gfp, void **hdr)
{
	*hdr = NULL;
	if (!mfr_nl_has_listeners())
		return NULL;
	return mfr_nl_event_new(cmd, gfp, hdr);
}

u64 mfr_ntf_queue(struct sk_buff *msg, void *hdr, int generation_attr)
{
	unsigned long flags;
	u64 generation;

	spin_lock_irqsave(&mfr_ntf_pending.lock, flags);
	generation = mfr_state_changed();
	if (msg && !nla_put_uint(msg, generation_attr, generation)) {
		genlmsg_end(msg, hdr);
		__skb_queue_tail(&mfr_ntf_pending, msg);
		msg = NULL;
	}
	spin_unlock_irqrestore(&mfr_ntf_pending.lock, flags);
	nlmsg_free(msg);
	return generation;
}

void mfr_ntf_kick(void)
{
	/* Whoever may sleep sends; the free path of hugepages may not. */
	if (preemptible() && !rcu_preempt_depth())
		mfr_ntf_send_queued();
	else
		schedule_work(&mfr_ntf_work);
}

u64 mfr_event_queue(struct sk_buff *msg, void *hdr, const struct mfr_event *ev)
{
	if (msg && mfr_event_fill(msg, ev)) {
		nlmsg_free(msg);
		msg = NULL;
	}
	return mfr_ntf_queue(msg, hdr, MFR_A_POISON_GENERATION);
}

u64 mfr_event_send(const struct mfr_event *ev)
{
	struct sk_buff *msg;
	u64 generation;
	void *hdr;

	msg = mfr_ntf_new(ev->cmd, GFP_KERNEL, &hdr);
	generation = mfr_event_queue(msg, hdr, ev);
	mfr_ntf_kick();
	return generation;
}

void mfr_events_flush(void)
{
	flush_work(&mfr_ntf_work);
	mfr_ntf_send_queued();
}
