/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _MFR_STATS_H
#define _MFR_STATS_H

#include <linux/atomic.h>

/*
 * Counters reported by the status operation.  Gauges (memfds_kept,
 * raw_pages_kept, folios_pending) go up and down; the rest only grow.
 */
struct mfr_stats {
	atomic_long_t memfds_kept;
	atomic_long_t raw_pages_kept;
	atomic_long_t folios_pending;
	atomic_long_t folios_offlined;
	atomic_long_t raw_pages_isolated;
	atomic_long_t healthy_pages_returned;
};

extern struct mfr_stats mfr_stats;

#endif /* _MFR_STATS_H */
