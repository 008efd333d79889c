// SPDX-License-Identifier: GPL-2.0-only
/*
 * Records of the poisoned base pages of kept hugepages, by pfn, from the
 * error until module unload: what poison-get dumps and what a listener
 * that lost events reconciles from.  Updated from the free path of
 * hugepages too, hence an xarray with an IRQ-safe lock.
 */
#include <linux/cred.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <net/genetlink.h>

#include "events.h"
#include "mfr-nl-gen.h"
#include "netlink.h"
#include "poison.h"
#include "ratelimit.h"
#include "stats.h"

struct mfr_poison {
	unsigned long head_pfn;
	unsigned long folio_size;
	unsigned long ino;
	u64 offset;
	u32 state;
	u32 times_consumed;
};

static DEFINE_XARRAY_FLAGS(mfr_poison, XA_FLAGS_LOCK_IRQ);

static void mfr_poison_to_event(unsigned long pfn, const struct mfr_poison *p,
				struct mfr_event *ev)
{
	ev->pfn = pfn;
	ev->head_pfn = p->head_pfn;
	ev->folio_size = p->folio_size;
	ev->ino = p->ino;
	ev->offset = p->offset;
	ev->state = p->state;
	ev->times_consumed = p->times_consumed;
}

/*
 * Base page @page of @folio, in memfd inode @ino, is poisoned: a record in
 * @state (kept, pending for a released folio, fallback past the budget).
 */
int mfr_poison_add(struct folio *folio, struct page *page, unsigned long ino,
		   u32 state)
{
	unsigned long pfn = page_to_pfn(page);
	struct mfr_event ev = { .cmd = MFR_CMD_PAGE_POISONED_NTF };
	struct mfr_poison *p, *old;
	struct sk_buff *msg;
	void *hdr;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	p->head_pfn = folio_pfn(folio);
	p->folio_size = folio_size(folio);
	p->ino = ino;
	p->offset = ((u64)folio->index + folio_page_idx(folio, page)) << PAGE_SHIFT;
	p->state = state;

	msg = mfr_ntf_new(ev.cmd, GFP_KERNEL, &hdr);
	xa_lock_irq(&mfr_poison);
	/* A pfn unpoisoned (hwpoison-inject) and poisoned again: replace. */
	old = __xa_store(&mfr_poison, pfn, p, GFP_KERNEL);
	if (xa_is_err(old)) {
		xa_unlock_irq(&mfr_poison);
		nlmsg_free(msg);
		kfree(p);
		return xa_err(old);
	}
	mfr_poison_to_event(pfn, p, &ev);
	mfr_event_queue(msg, hdr, &ev);
	xa_unlock_irq(&mfr_poison);
	kfree(old);
	mfr_ntf_kick();
	return 0;
}

/* The memfd inode recorded for the hugepage at @head_pfn, or 0. */
unsigned long mfr_poison_folio_ino(unsigned long head_pfn, unsigned long nr)
{
	unsigned long pfn, ino = 0;
	struct mfr_poison *p;

	xa_lock_irq(&mfr_poison);
	xa_for_each_range(&mfr_poison, pfn, p, head_pfn, head_pfn + nr - 1) {
		ino = p->ino;
		break;
	}
	xa_unlock_irq(&mfr_poison);
	return ino;
}

/*
 * The kept hugepage at @head_pfn falls back to the default handling: its
 * pages are no longer kept.  Returns how many were.
 */
unsigned long mfr_poison_fall_back(unsigned long head_pfn, unsigned long nr)
{
	XA_STATE(xas, &mfr_poison, head_pfn);
	unsigned long count = 0;
	struct mfr_poison *p;

	xa_lock_irq(&mfr_poison);
	xas_for_each(&xas, p, head_pfn + nr - 1) {
		if (p->state != MFR_PAGE_STATE_KEPT)
			continue;
		p->state = MFR_PAGE_STATE_FALLBACK;
		count++;
	}
	if (count)
		mfr_state_changed();
	xa_unlock_irq(&mfr_poison);
	return count;
}

void mfr_poison_signalled(unsigned long pfn, struct task_struct *tsk,
			  bool action_required)
{
	struct mfr_event ev = {
		.cmd = MFR_CMD_PAGE_CONSUMED_NTF,
		.pid = task_tgid_nr(tsk),
		.signal_code = action_required ?
			MFR_SIGNAL_CODE_ACTION_REQUIRED :
			MFR_SIGNAL_CODE_ACTION_OPTIONAL,
	};
	struct sk_buff *msg = NULL;
	struct mfr_poison *p;
	void *hdr = NULL;

	atomic_long_inc(&mfr_stats.signals_sent);
	get_task_comm(ev.comm, tsk);

	/* Touching the page again is up to the task: its user's limit. */
	if (mfr_nl_has_listeners() && mfr_ratelimit_allow(task_uid(tsk)))
		msg = mfr_ntf_new(ev.cmd, GFP_KERNEL, &hdr);

	xa_lock_irq(&mfr_poison);
	p = xa_load(&mfr_poison, pfn);
	if (!p) {
		/* Signalled before the decision was recorded: a first error. */
		xa_unlock_irq(&mfr_poison);
		nlmsg_free(msg);
		return;
	}
	if (action_required)
		p->times_consumed++;
	mfr_poison_to_event(pfn, p, &ev);
	mfr_event_queue(msg, hdr, &ev);
	xa_unlock_irq(&mfr_poison);
	mfr_ntf_kick();
}

/*
 * Move the records of the hugepage of @nr pages at @head_pfn to @state:
 * pending (only kept ones: a record past the budget stays fallback until
 * the hugepage is offlined) or offlined (all).  Any context but NMI.
 * Completes @ev from one of them and queues it in @msg (see
 * mfr_ntf_queue(); @msg may be NULL), adds to @*was_kept how many were
 * kept or pending, and returns false if the hugepage has no record to
 * move (nothing queued, @msg freed).
 */
bool mfr_poison_set_folio_state(unsigned long head_pfn, unsigned long nr,
				u32 state, struct mfr_event *ev,
				struct sk_buff *msg, void *hdr,
				unsigned long *was_kept)
{
	XA_STATE(xas, &mfr_poison, head_pfn);
	struct mfr_poison *p;
	unsigned long flags;
	bool found = false;

	/*
	 * One walk of the tree: xa_for_each_range() would restart from the
	 * root for each of up to 512 records of a 1 GiB hugepage.
	 */
	xa_lock_irqsave(&mfr_poison, flags);
	xas_for_each(&xas, p, head_pfn + nr - 1) {
		if (state == MFR_PAGE_STATE_PENDING ?
		    p->state != MFR_PAGE_STATE_KEPT :
		    p->state == MFR_PAGE_STATE_OFFLINED)
			continue;
		if (!found)
			mfr_poison_to_event(xas.xa_index, p, ev);
		if (p->state == MFR_PAGE_STATE_KEPT ||
		    p->state == MFR_PAGE_STATE_PENDING)
			(*was_kept)++;
		p->state = state;
		found = true;
	}
	if (found) {
		/* The event names the hugepage, not one of its pages. */
		ev->offset = round_down(ev->offset, ev->folio_size);
		mfr_event_queue(msg, hdr, ev);
	}
	xa_unlock_irqrestore(&mfr_poison, flags);
	if (!found)
		nlmsg_free(msg);
	return found;
}

void mfr_poison_flush(void)
{
	struct mfr_poison *p;
	unsigned long pfn;

	xa_for_each(&mfr_poison, pfn, p)
		kfree(p);
	xa_destroy(&mfr_poison);
}

/* Resumes at the pfn after the last one sent. */
int mfr_nl_poison_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	unsigned long *next_pfn = (unsigned long *)cb->ctx;
	struct mfr_event ev = { .cmd = MFR_CMD_POISON_GET };
	struct mfr_poison *p;
	unsigned long pfn;
	void *hdr;
	int err = 0;

	xa_lock_irq(&mfr_poison);
	ev.generation = mfr_nl_dump_seq(cb);
	xa_for_each_start(&mfr_poison, pfn, p, *next_pfn) {
		hdr = mfr_nl_dump_put(skb, cb, MFR_CMD_POISON_GET);
		if (!hdr) {
			err = -EMSGSIZE;
			break;
		}
		mfr_poison_to_event(pfn, p, &ev);
		err = mfr_event_fill(skb, &ev);
		if (!err && nla_put_uint(skb, MFR_A_POISON_GENERATION,
					 ev.generation))
			err = -EMSGSIZE;
		if (err) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		*next_pfn = pfn + 1;
	}
	xa_unlock_irq(&mfr_poison);
	return mfr_nl_dump_done(skb, err);
}
