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

#include "offline.h"
#include "stats.h"

void mfr_offline_folio_released(struct folio *folio)
{
	__module_get(THIS_MODULE);
	atomic_long_inc(&mfr_stats.folios_pending);
}

/* Any context: called from the hugetlb free path. */
void mfr_offline_folio_offlined(unsigned long pfn, unsigned int order,
				unsigned long nr_poisoned)
{
	unsigned long nr = 1UL << order;

	atomic_long_dec(&mfr_stats.folios_pending);
	atomic_long_inc(&mfr_stats.folios_offlined);
	atomic_long_sub(nr_poisoned, &mfr_stats.raw_pages_kept);
	atomic_long_add(nr_poisoned, &mfr_stats.raw_pages_isolated);
	atomic_long_add(nr - nr_poisoned, &mfr_stats.healthy_pages_returned);
	pr_info_ratelimited("hugepage at pfn %#lx offlined: %lu poisoned 4 KiB pages isolated, %lu returned\n",
			    pfn, nr_poisoned, nr - nr_poisoned);
	module_put(THIS_MODULE);
}
