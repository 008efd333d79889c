// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Which memory device holds a physical address, from the SMBIOS table
 * the kernel exposes (/sys/firmware/dmi/tables/DMI): type 20 (memory
 * device mapped address) ranges lead to type 17 (memory device) entries,
 * whose locator, serial and part number say which DIMM it is, but only
 * where one device holds the range alone: an interleaved range (its
 * interleave position 1, 2, ... or unknown) spreads each address over
 * several DIMMs, and is "unknown"; so is one that says "not interleaved"
 * in an array (type 19) whose rows are more than one device wide, or of
 * no named array, as channel-interleaved boards fill it.  A table without
 * type 20 but with one populated memory device maps everything to it.
 * The memory controller's own decoding (rasdaemon, mfrd-ras.h) comes
 * first where it names the page.
 */
#ifndef MFRD_DIMM_H
#define MFRD_DIMM_H

#include <stddef.h>
#include <stdint.h>

#define MFRD_DMI_TABLE	"/sys/firmware/dmi/tables/DMI"

struct mfrd_dimm {
	char label[160];	/* "BANK 0/DIMM_A1": bank and device locator */
	char id[384];		/* what makes it this DIMM: locator, serial, part */
};

struct mfrd_dimms;

/*
 * Parse an SMBIOS table.  Returns the map (free with mfrd_dimms_free()),
 * or NULL if the file cannot be read or maps nothing; *why then says so.
 */
struct mfrd_dimms *mfrd_dimms_load(const char *path, const char **why);
struct mfrd_dimms *mfrd_dimms_parse(const uint8_t *table, size_t len);
void mfrd_dimms_free(struct mfrd_dimms *m);

/* The device holding phys: 0, or -1 if the table does not say. */
int mfrd_dimm_lookup(const struct mfrd_dimms *m, uint64_t phys,
		     struct mfrd_dimm *out);

#endif /* MFRD_DIMM_H */
