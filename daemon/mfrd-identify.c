// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The memory identity of recorded pages: physical address, and the DIMM
 * where the host tells, from rasdaemon's decoded reports first (the
 * memory controller's own answer) and SMBIOS where it is unambiguous
 * (mfrd-dimm.h).  Written in slices from the event loop, each one
 * transaction: a storm's thousand pages (or a restart's leftovers) took
 * one fsync each, in one go, and starved the watchdog.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "mfrd.h"
#include "mfrd-dimm.h"
#include "mfrd-log.h"
#include "mfrd-ras.h"

/* Pages given their memory identity per turn of the event loop. */
#define IDENTIFY_SLICE	256

void mfrd_identify_load(struct mfrd *d)
{
	const char *why = "";

	d->dimms = mfrd_dimms_load(d->cfg.dmi_table, &why);
	if (!d->dimms)
		mfrd_logf(LOG_INFO, NULL,
			  "no DIMM identity from SMBIOS (%s: %s)",
			  d->cfg.dmi_table, why);
	d->ras = d->cfg.ras_db ? mfrd_ras_open(d->cfg.ras_db, &why) : NULL;
	if (!d->ras && d->cfg.ras_db)
		mfrd_logf(LOG_INFO, NULL,
			  "no DIMM identity from rasdaemon (%s: %s)",
			  d->cfg.ras_db, why);
	if (!d->dimms && !d->ras)
		mfrd_logf(LOG_INFO, NULL,
			  "records carry the physical address of poisoned pages, not their DIMM");
}

static void identify(uint64_t pfn, uint64_t *phys, const char **dimm,
		     const char **dimm_id, void *arg)
{
	static struct mfrd_dimm found;
	struct mfrd *d = arg;

	(void)pfn;
	if (!mfrd_ras_lookup(d->ras, *phys, &found) ||
	    !mfrd_dimm_lookup(d->dimms, *phys, &found)) {
		*dimm = found.label;
		*dimm_id = found.id;
	}
}

struct slice {
	struct mfrd *d;
	int n;
};

static int identify_slice(struct mfrd_store *s, void *arg)
{
	struct slice *sl = arg;

	sl->n = mfrd_store_identify_pages(s, identify, sl->d, IDENTIFY_SLICE);
	return sl->n < 0 ? -1 : 0;
}

static int on_identify(sd_event_source *s, void *arg)
{
	struct mfrd *d = arg;
	struct slice sl = { .d = d };
	int n;

	n = mfrd_sup_write(d->sup, identify_slice, &sl, "memory identity") ?
	    -1 : sl.n;
	if (n > 0) {
		d->identified += (uint64_t)n;
		d->identify_slices++;
	}
	if (n == IDENTIFY_SLICE)	/* more may be left: next turn */
		return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	if (d->identify_slices > 1)
		mfrd_logf(LOG_INFO, NULL,
			  "memory identity of %" PRIu64 " pages recorded, in %" PRIu64 " slices",
			  d->identified, d->identify_slices);
	d->identified = d->identify_slices = 0;
	return sd_event_source_set_enabled(s, SD_EVENT_OFF);
}

void mfrd_identify_pages(struct mfrd *d)
{
	int ret = 0;

	if (!d->identify_src)
		ret = sd_event_add_defer(d->event, &d->identify_src, on_identify, d);
	if (ret >= 0)
		ret = sd_event_source_set_enabled(d->identify_src, SD_EVENT_ONESHOT);
	if (ret < 0)
		mfrd_logf(LOG_ERR, NULL,
			  "cannot schedule the memory identity of pages: %s",
			  strerror(-ret));
}

void mfrd_identify_stop(struct mfrd *d)
{
	d->identify_src = sd_event_source_disable_unref(d->identify_src);
	mfrd_dimms_free(d->dimms);
	mfrd_ras_close(d->ras);
	d->dimms = NULL;
	d->ras = NULL;
}
