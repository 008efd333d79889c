// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrd's record of poisoned pages and events: one SQLite database in WAL
 * mode under the StateDirectory, its schema versioned by PRAGMA
 * user_version and migrated forward on open.  Pages are keyed on (boot
 * id, pfn), so replaying a dump or an event after a restart updates the
 * row instead of adding one.
 */
#ifndef MFRD_STORE_H
#define MFRD_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/mfr.h>

/* The schema this mfrd writes; older databases are migrated to it. */
#define MFRD_STORE_SCHEMA_VERSION	3

#define MFRD_PAGE_STATES	(MFR_PAGE_STATE_FALLBACK + 1)

/* Bits of mfrd_page.has and mfrd_event.has: which fields are known. */
enum {
	MFRD_HAS_HEAD_PFN	= 1 << 0,
	MFRD_HAS_FOLIO_SIZE	= 1 << 1,
	MFRD_HAS_INODE		= 1 << 2,
	MFRD_HAS_OFFSET		= 1 << 3,
	MFRD_HAS_STATE		= 1 << 4,
	MFRD_HAS_TIMES_CONSUMED	= 1 << 5,
	MFRD_HAS_PID		= 1 << 6,
	MFRD_HAS_CGROUP_ID	= 1 << 7,
	MFRD_HAS_PFN		= 1 << 8,	/* events only */
	MFRD_HAS_GENERATION	= 1 << 9,	/* events only */
};

/*
 * What is known of one poisoned 4 KiB page: from a poison-get dump or a
 * notification, joined with the memfd-get record of its inode.  A field
 * not in has (a string that is NULL) leaves the stored value as it is.
 */
struct mfrd_page {
	uint64_t pfn;
	unsigned int has;
	uint64_t head_pfn;
	uint64_t folio_size;
	uint64_t inode;
	uint64_t offset;
	uint32_t state;			/* enum mfr_page_state */
	uint32_t times_consumed;	/* only ever grows in the store */
	uint32_t pid;			/* the memfd's creator */
	uint64_t cgroup_id;
	const char *memfd_name;
	const char *comm;
	const char *cgroup_path;
};

/* One line of the events log. */
struct mfrd_event {
	int64_t time_usec;		/* CLOCK_REALTIME */
	const char *kind;		/* "page-poisoned", ... (mfrctl's names) */
	unsigned int has;		/* MFRD_HAS_PFN, _HEAD_PFN, _INODE, _GENERATION */
	uint64_t pfn;
	uint64_t head_pfn;
	uint64_t inode;
	uint64_t generation;
	const char *detail;		/* the whole event as key=value, or NULL */
};

struct mfrd_store;

/* The path of a store kept in memory only, lost when mfrd exits. */
#define MFRD_STORE_IN_MEMORY	":memory:"

/*
 * Why a store did not open.  Only a damaged file may be replaced; every
 * other fault leaves it as it is, its records intact.
 */
enum mfrd_store_fault {
	MFRD_STORE_OK,
	MFRD_STORE_CORRUPT,	/* SQLITE_CORRUPT, SQLITE_NOTADB, quick_check */
	MFRD_STORE_NEWER,	/* written by a newer mfrd: a downgrade */
	MFRD_STORE_UNAVAILABLE,	/* full, I/O error, read-only, ... */
	/*
	 * Another program holds the write lock (SQLITE_BUSY after a short
	 * wait: mfrd's loop must not stop for it).  One way of being
	 * unavailable: its name for operators is that one.
	 */
	MFRD_STORE_LOCKED,
};

/* How long a write waits for another program's lock before it fails. */
#define MFRD_STORE_BUSY_TIMEOUT_MS	200

/*
 * Open (creating it if need be) the database at path, migrate it to
 * MFRD_STORE_SCHEMA_VERSION, and stamp every record written through the
 * handle with boot_id (the kernel's random/boot_id).  Returns 0, or -1
 * with a message in *errmsg (free() it) and, if fault is not NULL, the
 * kind of failure in *fault.
 */
int mfrd_store_open(const char *path, const char *boot_id,
		    struct mfrd_store **sp, char **errmsg,
		    enum mfrd_store_fault *fault);
void mfrd_store_close(struct mfrd_store *s);

/* Why the last failing call failed. */
const char *mfrd_store_error(const struct mfrd_store *s);

/* The last failing call failed because another program holds the lock. */
bool mfrd_store_locked(const struct mfrd_store *s);

/* What kind of failure the last failing call was. */
enum mfrd_store_fault mfrd_store_fault(const struct mfrd_store *s);
/* ... a full disk (SQLITE_FULL), one way of being unavailable. */
bool mfrd_store_full(const struct mfrd_store *s);

/* The database's schema version (PRAGMA user_version), or -1. */
int mfrd_store_schema_version(struct mfrd_store *s);

/*
 * Group writes (a reconciling dump) into one transaction: one fsync, and
 * all or nothing.  Outside begin/commit every write is its own.
 */
int mfrd_store_begin(struct mfrd_store *s);
int mfrd_store_commit(struct mfrd_store *s);
int mfrd_store_rollback(struct mfrd_store *s);
/* ROLLBACK, keeping the error of the statement that failed before it. */
void mfrd_store_rollback_quietly(struct mfrd_store *s);

/*
 * Insert or update the page (this boot, p->pfn).  Known fields replace
 * stored ones, times_consumed never decreases, and a record that changes
 * nothing leaves the row as it was, last update time included.  A new
 * row without a state is "kept".  Returns 0 or -1.
 */
int mfrd_store_put_page(struct mfrd_store *s, const struct mfrd_page *p,
			int64_t now_usec);

/*
 * Set the state of every page of this boot in the hugepage at head_pfn
 * (folio-pending and folio-offlined carry no raw pfn).  Returns the number
 * of pages changed, or -1.
 */
int mfrd_store_set_folio_state(struct mfrd_store *s, uint64_t head_pfn,
			       uint32_t state, int64_t now_usec);

/* 1 if this boot's record has pfn, 0 if not, -1 on error. */
int mfrd_store_has_page(struct mfrd_store *s, uint64_t pfn);

/*
 * Rows the last put_page or log_event wrote: 0 after a put_page that
 * brought nothing new.
 */
int mfrd_store_last_changes(struct mfrd_store *s);

/*
 * Retention of the events log (never of the page records): delete the
 * events older than before_usec (0: none by age), then the oldest beyond
 * max_rows (0: no limit).  Returns the number deleted, or -1.
 */
int64_t mfrd_store_prune_events(struct mfrd_store *s, int64_t before_usec,
				uint64_t max_rows);

/*
 * A number that changes when another connection committed to the store
 * (an operator's "mfrctl forget"), or -1.
 */
int64_t mfrd_store_data_version(struct mfrd_store *s);

/* Rows in the events log, or -1. */
int64_t mfrd_store_count_events(struct mfrd_store *s);

/* Append an event to the log.  Returns 0 or -1. */
int mfrd_store_log_event(struct mfrd_store *s, const struct mfrd_event *e);

/*
 * The pfns recorded in earlier boots (not this one), ascending and
 * distinct, in a malloc()ed array.  Returns 0 or -1.
 */
int mfrd_store_earlier_pfns(struct mfrd_store *s, uint64_t **pfns,
			    size_t *n);

/*
 * Memory identity of this boot's pages that have none yet: for each, in
 * pfn order, identify() gives the physical address and, if the host
 * tells, the DIMM (label and identity).  At most max pages, within the
 * caller's transaction (one fsync, not one per page): a caller with many
 * pages calls again, from its event loop, until it gets fewer than max.
 * Returns rows set, or -1.
 */
typedef void (*mfrd_identify_fn)(uint64_t pfn, uint64_t *phys,
				 const char **dimm, const char **dimm_id,
				 void *arg);
int mfrd_store_identify_pages(struct mfrd_store *s, mfrd_identify_fn identify,
			      void *arg, size_t max);

/* A pfn recorded in an earlier boot, and the DIMM identity it had. */
struct mfrd_earlier {
	uint64_t pfn;
	char *dimm;		/* NULL: not known then */
	char *dimm_id;
};

/*
 * The pfns recorded in earlier boots, ascending and distinct (the newest
 * record's identity), in a malloc()ed array; free with
 * mfrd_store_earlier_free().  Returns 0 or -1.
 */
int mfrd_store_earlier(struct mfrd_store *s, struct mfrd_earlier **v,
		       size_t *n);
void mfrd_store_earlier_free(struct mfrd_earlier *v, size_t n);

/*
 * Copy the page records that can be read from the store file at path
 * into s, keeping their boot ids, without writing to that file: a
 * damaged store's (the table, then its pfn index) into the fresh one, or
 * a store that cannot be opened for writing (locked, read-only, full, a
 * newer schema) into the in-memory one, so that boot offlining still
 * finds the pfns of earlier boots.  Returns the number of records copied,
 * -1 if nothing of the file could be read (not a database: how many pages
 * it had is unknown), or -2 if s could not be written.
 */
int64_t mfrd_store_copy_pages(struct mfrd_store *s, const char *path);

/*
 * Store incidents: a damaged store moved aside, or a store mfrd could
 * not use.  Each stays unacknowledged (and mfrd's metrics say so) until
 * an operator acknowledges it ("mfrctl store ack").
 */
int mfrd_store_add_incident(struct mfrd_store *s, int64_t time_usec,
			    const char *kind, const char *error,
			    const char *moved_to, int64_t salvaged);
/* The unacknowledged incidents, or -1. */
int64_t mfrd_store_unacked_incidents(struct mfrd_store *s);

/*
 * A plain read-only SQLite handle on the store at path, for readers
 * (mfrctl too); immutable: the file alone, no locks, no WAL, no -shm,
 * for a store that cannot be opened otherwise (a read-only directory
 * without its -shm).  An SQLite code; close *db with sqlite3_close().
 */
struct sqlite3;
int mfrd_store_open_readonly(const char *path, bool immutable,
			     struct sqlite3 **db);

/*
 * A private copy of the store at path and of its WAL, in a directory of
 * its own in mfrd's runtime directory (a tmpfs): readable where the
 * store's disk has no room for the WAL index a reader needs, the records
 * still in the WAL included (the file "immutable" misses them).  The WAL
 * is copied first: a checkpoint between the two copies leaves the file
 * with the pages the copied WAL holds anyway.  The copy's path, or NULL;
 * mfrd_store_private_copy_remove() removes it and frees the path.
 */
char *mfrd_store_private_copy(const char *path);
/* A store's files (path, its -wal and -shm), removed. */
void mfrd_store_remove_files(const char *path);
void mfrd_store_private_copy_remove(char *copy);

/* What mfrd_store_merge_into() wrote. */
struct mfrd_store_merged {
	int64_t pages, events, incidents;
};

/*
 * Write what a stand-in store s holds into the store file at path (open
 * and migrated already, e.g. by mfrd_store_open()), in one transaction:
 * page records (a newer record of a page wins; earlier boots' copies read
 * from that file change nothing), the events log and the store incidents.
 * Returns 0, or -1 with nothing written (mfrd_store_error() says why).
 */
int mfrd_store_merge_into(struct mfrd_store *s, const char *path,
			  struct mfrd_store_merged *m);

/* The other way: what the store at path holds into s, the same way. */
int mfrd_store_merge_from(struct mfrd_store *s, const char *path,
			  struct mfrd_store_merged *m);

/* The pages of this boot in each state, indexed by enum mfr_page_state. */
int mfrd_store_count_states(struct mfrd_store *s,
			    uint64_t counts[MFRD_PAGE_STATES]);

#endif /* MFRD_STORE_H */
