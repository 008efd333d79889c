// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What mfrd does with a store that does not open: a damaged file is
 * moved aside after its pages are salvaged into a fresh one; any other
 * failure (locked, full disk, I/O error, read-only, a newer schema) leaves
 * the file alone, and a store in memory holds its pages, read read-only,
 * until the file can be used again.  No recorded pfn is lost either way.
 */
#ifndef MFRD_STORE_RECOVER_H
#define MFRD_STORE_RECOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "mfrd-store.h"

struct mfrd_store_recovery {
	enum mfrd_store_fault fault;	/* MFRD_STORE_OK: the file opened */
	char *error;			/* why the file did not open */
	char *moved_to;			/* a damaged file went there */
	char *move_error;		/* ... or could not be moved: why */
	int64_t copied;			/* pages read from the file; -1: none
					   could be (unknown, not zero) */
	bool in_memory;			/* the file is left alone for now */
};

/*
 * Open the store at path, or what stands in for it (see above), into
 * *sp.  Returns 0, or -1 when not even a store in memory opens (r->error
 * says why).  Free r with mfrd_store_recovery_free().
 */
int mfrd_store_open_or_recover(const char *path, const char *boot_id,
			       struct mfrd_store **sp,
			       struct mfrd_store_recovery *r);
void mfrd_store_recovery_free(struct mfrd_store_recovery *r);

/* "corrupt", "newer schema", "unavailable" */
const char *mfrd_store_fault_name(enum mfrd_store_fault fault);

#endif /* MFRD_STORE_RECOVER_H */
