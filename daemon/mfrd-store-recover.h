// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What mfrd does with a store that does not open: a damaged file is
 * moved aside after its pages are salvaged into a fresh one; any other
 * failure (locked, full disk, I/O error, read-only, a newer schema) leaves
 * the file alone, and a stand-in store holds its pages, read read-only,
 * and this run's records until the file can be used again, when they are
 * merged into it.  No recorded pfn is lost either way.
 *
 * The stand-in is a file of its own where one can be written (the
 * caller's candidates, best first: see mfrd-store-supervisor.h), so that
 * what it holds, the store incident first, outlives a restart of mfrd
 * before the store file is usable again; else it is in memory.
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
	char *standin_error;		/* the last stand-in file that did
					   not open or take a write: why */
};

/*
 * Open the store at path, or what stands in for it (see above) into *sp:
 * the first of the stand-in files candidates (NULL-terminated; NULL: none)
 * that opens and takes the file's records, reused if an earlier run left
 * it, else one in memory; *used is its index, or -1 for the file itself
 * or memory.  Returns 0, or -1 when not even a store in memory opens
 * (r->error says why).  Free r with mfrd_store_recovery_free().
 */
int mfrd_store_open_or_recover(const char *path, const char *const *candidates,
			       const char *boot_id, struct mfrd_store **sp,
			       int *used, struct mfrd_store_recovery *r);

/*
 * The stand-in alone, for a store file that was in use and no longer is
 * (at run time): chosen as above, the page records of path read into it.
 * Returns 0 (r->copied, r->standin_error set) or -1 (r->error says why).
 */
int mfrd_store_open_standin(const char *path, const char *const *candidates,
			    const char *boot_id, struct mfrd_store **sp,
			    int *used, struct mfrd_store_recovery *r);

/* Delete a stand-in's file and its WAL and shared-memory files. */
void mfrd_store_remove_standin(const char *standin);

/*
 * The store file at path is usable again: merge what the stand-in s
 * (file standin, or NULL for one in memory) holds into it, then close s
 * and delete the stand-in file.  Returns 0, or -1 with s left open and
 * its file kept (*err says why; free() it).
 */
int mfrd_store_leave_standin(struct mfrd_store *s, const char *standin,
			     const char *path, struct mfrd_store_merged *m,
			     char **err);

/*
 * At start, with the store file usable: a stand-in file an earlier run
 * left (it stopped before the file was usable again) is merged into it
 * and deleted.  Returns 1 if one was merged, 0 if there was none, -1 if
 * it could not be (it is kept for the next start; *err says why).
 */
int mfrd_store_take_leftover(const char *standin, const char *path,
			     const char *boot_id, struct mfrd_store_merged *m,
			     char **err);
void mfrd_store_recovery_free(struct mfrd_store_recovery *r);

/* "corrupt", "newer schema", "unavailable" */
const char *mfrd_store_fault_name(enum mfrd_store_fault fault);

#endif /* MFRD_STORE_RECOVER_H */
