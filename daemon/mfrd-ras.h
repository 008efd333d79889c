// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The DIMM of a poisoned page as the memory controller decoded it: EDAC
 * drivers (sb_edac, skx_edac, amd64_edac, ...) report each error with
 * the physical address and the label of the DIMM it came from, and
 * rasdaemon keeps those reports in its SQLite database (table mc_event).
 * That is the DIMM, interleaving or not; SMBIOS (mfrd-dimm.h) is only
 * the fallback where no such report names the page.
 */
#ifndef MFRD_RAS_H
#define MFRD_RAS_H

#include <stdint.h>

#include "mfrd-dimm.h"

#define MFRD_RAS_DB	"/var/lib/rasdaemon/ras-mc_event.db"

struct mfrd_ras;

/* Open rasdaemon's database read-only; NULL (with *why) if it cannot be. */
struct mfrd_ras *mfrd_ras_open(const char *path, const char **why);
void mfrd_ras_close(struct mfrd_ras *r);

/*
 * The DIMM of the newest report of an error in the 4 KiB page at phys
 * that names one: 0, or -1 if none does.
 */
int mfrd_ras_lookup(struct mfrd_ras *r, uint64_t phys, struct mfrd_dimm *out);

#endif /* MFRD_RAS_H */
