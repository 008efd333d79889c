// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Prometheus metrics of mfrd, as a node_exporter textfile-collector file:
 * the module's status-get counters and the pages the store holds per
 * state.  The file is replaced atomically, so a scrape never sees half
 * of it.
 */
#ifndef MFRD_METRICS_H
#define MFRD_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/mfr.h>

#include "mfrd-store.h"

struct mfrd_metrics {
	bool module_loaded;
	/* status-get, indexed by MFR_A_STATUS_*; only when module_loaded. */
	bool has[MFR_A_STATUS_MAX + 1];
	uint64_t status[MFR_A_STATUS_MAX + 1];
	const char *module_version;		/* NULL if not known */
	/*
	 * From the store: pages of this boot, and pfns of earlier ones.
	 * Left out of the file when the store could not be read: an
	 * unknown count is not a zero.
	 */
	bool has_pages;
	uint64_t pages[MFRD_PAGE_STATES];	/* by enum mfr_page_state */
	bool has_earlier_boot_pfns;
	uint64_t earlier_boot_pfns;
	unsigned int offline_dimm_changed;	/* ... on another DIMM now */
	unsigned int offline_failed;	/* ... that boot offlining could not offline */
	uint64_t pages_recorded;	/* page records mfrd created since it started */

	/* mfrd's own health. */
	const char *daemon_version;
	double start_time;		/* when this mfrd started (epoch s) */
	bool protected;			/* module loaded, every rule in force */
	uint64_t rules_configured;	/* rules that parsed, to be in force */
	uint64_t rules_refused;		/* ... the module refused: not in force */
	uint64_t rules_file_errors;	/* errors in rules.d at start */
	uint64_t memfd_cache_entries;	/* memfd owners mfrd keeps */
	uint64_t memfd_cache_bytes;
	bool waiting_for_module;
	bool ready_unprotected;		/* READY=1 sent, rules not in the module */
	uint64_t store_errors;		/* failed store reads and writes */
	bool store_recovered;		/* a store incident is not acknowledged */
	bool store_in_memory;		/* the store file is not usable now */
	bool store_locked;		/* ... another program holds its lock */
	double rules_pushed_time;	/* seconds since the epoch, 0: never */
	double reload_ok_time;		/* last successful reload (or start) */
	uint64_t reloads_failed;
	unsigned int rules_outside;	/* rules changed behind mfrd's back */
	uint64_t events_lost;		/* overruns and generation gaps */
	uint64_t redumps;		/* reconciling dumps */
	uint64_t journal_suppressed;	/* entries the rate limit dropped */
	uint64_t events_pruned;		/* events log rows deleted */
	bool has_events_rows;
	uint64_t events_rows;		/* events log size */
	double write_time;		/* when this file was written */
};

/*
 * Write m to PATH.tmp, fsync it, rename it over path and fsync the
 * directory.  Returns 0 or a negative errno; on failure path is left as
 * it was and PATH.tmp is removed.
 */
int mfrd_metrics_write(const char *path, const struct mfrd_metrics *m);

#endif /* MFRD_METRICS_H */
