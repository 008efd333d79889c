// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The store as the rest of mfrd uses it: the file STATE_DIR/mfrd.db when
 * it can be used, else a stand-in, and every failure of either handled
 * here, never by the caller (systemd's journal is the model: the failure
 * handling of a resource lives with the resource).
 *
 * A failure at start or at run time, whatever it is (locked by another
 * program, a full disk, an I/O error, a read-only file system, a schema
 * newer than this mfrd, damage), never stops mfrd and never loses a
 * record: the records go to a stand-in store, tried in this order,
 *
 *   1. STATE_DIR/mfrd-standin.db, beside the store: on the same disk, so
 *      that what it holds outlives a reboot (a downgrade's newer schema);
 *   2. RUNTIME_DIR/store-standin-HASH.db, in /run: outlives a restart of
 *      mfrd (RuntimeDirectoryPreserve=restart), not a reboot;
 *   3. memory,
 *
 * a stand-in that fails in turn handing its records to the next.  The
 * file is retried on a timer (1 s doubling to 30 s), and once it can be
 * written the stand-in's records, the store incident first, are merged
 * into it; so is a stand-in an earlier run left, at the next start.  A
 * leftover that cannot be merged is run on, not left behind.  Only a
 * damaged file is replaced (mfrd-store-recover.c: moved aside after its
 * pages are salvaged); every other is left as it is.
 */
#ifndef MFRD_STORE_SUPERVISOR_H
#define MFRD_STORE_SUPERVISOR_H

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "mfrd-store.h"

/* Where the records go now. */
enum mfrd_sup_where {
	MFRD_SUP_FILE,		/* the store file */
	MFRD_SUP_BESIDE,	/* stand-in 1: beside the store */
	MFRD_SUP_RUNTIME,	/* stand-in 2: in the runtime directory */
	MFRD_SUP_MEMORY,	/* stand-in 3: in memory */
};

struct mfrd_store_sup;

/*
 * What the supervisor tells mfrd: the store in use changed (another
 * stand-in, or the file again; back_on_file: the module's dumps should
 * be read into the file again), so that counts and reports follow.
 */
struct mfrd_sup_ops {
	void (*changed)(void *arg, bool back_on_file);
	void *arg;
};

/*
 * Open the store of state_dir, or what stands in for it, at start:
 * never fails for the file's sake (only when not even a store in memory
 * opens: -1).
 */
int mfrd_sup_open(struct mfrd_store_sup **supp, const char *state_dir,
		  const char *boot_id, const struct mfrd_sup_ops *ops);

/* The loop exists: retry the file on its timers from now on. */
void mfrd_sup_attach(struct mfrd_store_sup *sup, sd_event *event);

/*
 * Stopping: one last try to put a stand-in's records into the file (a
 * disk freed meanwhile), then close.
 */
void mfrd_sup_close(struct mfrd_store_sup *sup);

/* The store in use, for reads and for writes through the functions below. */
struct mfrd_store *mfrd_sup_store(struct mfrd_store_sup *sup);

/*
 * Write: fn's statements in one transaction on the store in use.  If it
 * fails, it is rolled back (held journal entries dropped), the records
 * are put aside as above and fn runs again on the stand-in; fn must
 * therefore do nothing but write to the store it is given (and hold its
 * journal entries with mfrd_log_defer()).  Returns 0, or -1 when even
 * the last stand-in failed (said and counted).
 */
typedef int (*mfrd_sup_write_fn)(struct mfrd_store *s, void *arg);
int mfrd_sup_write(struct mfrd_store_sup *sup, mfrd_sup_write_fn fn,
		   void *arg, const char *what);

/*
 * A read failed, or a write that may wait for the next turn (retention):
 * counted in the errors, logged when the error is new.
 */
void mfrd_sup_failed(struct mfrd_store_sup *sup, const char *what);

enum mfrd_sup_where mfrd_sup_where(const struct mfrd_store_sup *sup);
/* The file failed because another program holds its lock. */
bool mfrd_sup_locked(const struct mfrd_store_sup *sup);
/* The stand-in's file, or NULL (on the file, or in memory). */
const char *mfrd_sup_standin_path(const struct mfrd_store_sup *sup);
const char *mfrd_sup_path(const struct mfrd_store_sup *sup);
/* Failed reads and writes of the store since mfrd started. */
uint64_t mfrd_sup_errors(const struct mfrd_store_sup *sup);
/*
 * Pages read from a failed file for boot offlining; -1: none could be
 * (unknown, not zero); 0 on the file.
 */
int64_t mfrd_sup_copied(const struct mfrd_store_sup *sup);

#endif /* MFRD_STORE_SUPERVISOR_H */
