// SPDX-License-Identifier: GPL-2.0-only
/*
 * Bookkeeping of kept folios from release to offline.
 *
 * The kernel does the work: on release it drops the folio's memory-failure
 * reference, and when the last reference goes it dissolves the folio and
 * frees only its healthy base pages.  A folio a pin (io_uring, VFIO) still
 * holds stays pending meanwhile; the module stays loaded until every
 * pending folio is offlined.
 */
#include <linux/mm.h>
#include <linux/module.h>
#include <net/genetlink.h>

#include "events.h"
#include "mfr-nl-gen.h"
#include "offline.h"
#include "poison.h"
#include "stats.h"

void mfr_offline_folio_released(struct folio *folio)
{
	struct mfr_event ev = { .cmd = MFR_CMD_FOLIO_PENDING_NTF };
	unsigned long was_kept = 0;
	struct sk_buff *msg;
	void *hdr;

	__module_get(THIS_MODULE);
	atomic_long_inc(&mfr_stats.folios_pending);
	msg = mfr_ntf_new(ev.cmd, GFP_KERNEL, &hdr);
	mfr_poison_set_folio_state(folio_pfn(folio), folio_nr_pages(folio),
				   MFR_PAGE_STATE_PENDING, &ev, msg, hdr,
				   &was_kept);
	mfr_ntf_kick();
}

/*
 * Any context but NMI: called from the hugetlb free path.  @nr_poisoned is
 * the kernel's count, which also has pages poisoned while the folio was
 * on its way to be freed, when no record could be made.
 */
void mfr_offline_folio_offlined(unsigned long pfn, unsigned int order,
				unsigned long nr_poisoned)
{
	unsigned long nr = 1UL << order;
	struct mfr_event ev = {
		.cmd = MFR_CMD_FOLIO_OFFLINED_NTF,
		.raw_pages_isolated = nr_poisoned,
		.healthy_pages_returned = nr - nr_poisoned,
	};
	unsigned long was_kept = 0;
	struct sk_buff *msg;
	void *hdr;

	msg = mfr_ntf_new(ev.cmd, GFP_ATOMIC, &hdr);
	mfr_poison_set_folio_state(pfn, nr, MFR_PAGE_STATE_OFFLINED, &ev, msg,
				   hdr, &was_kept);
	atomic_long_dec(&mfr_stats.folios_pending);
	atomic_long_inc(&mfr_stats.folios_offlined);
	atomic_long_sub(was_kept, &mfr_stats.raw_pages_kept);
	atomic_long_add(nr_poisoned, &mfr_stats.raw_pages_isolated);
	atomic_long_add(nr - nr_poisoned, &mfr_stats.healthy_pages_returned);
	pr_info_ratelimited("hugepage at pfn %#lx offlined: %lu poisoned 4 KiB pages isolated, %lu returned\n",
			    pfn, nr_poisoned, nr - nr_poisoned);

	mfr_ntf_kick();
	module_put(THIS_MODULE);
}
