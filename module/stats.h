/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _MFR_STATS_H
#define _MFR_STATS_H

#include <linux/atomic.h>
#include <linux/types.h>

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
	atomic_long_t budget_fallbacks;
	atomic_long_t signals_sent;
	atomic_long_t events_suppressed;
};

extern struct mfr_stats mfr_stats;

/*
 * The state generation: bumped once for every change a dump could see
 * (rules, memfds, poisoned pages) and once for every successful write
 * request, so that a listener can tell it missed something.  Never 0.
 */
u64 mfr_state_changed(void);
u64 mfr_state_generation(void);

#endif /* _MFR_STATS_H */
