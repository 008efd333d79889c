// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Who made each memfd mfr.ko keeps (name, creator, cgroup): a poison
 * event names only the memfd's inode, and the record and journal entry
 * of a page want its owner.  Filled from memfd-kept events and memfd-get
 * dumps, keyed by the inode, as the module's poison and memfd records
 * link a page to its memfd.
 *
 * Any user can create kept memfds, and the module rate-limits their
 * notifications per user, so the evictions a tenant causes are not all
 * seen: the cache is bounded in entries and bytes, the least recently
 * used going first.  An owner that fell out is read again from the
 * module when a page of it is poisoned.
 */
#ifndef MFRD_MEMFD_CACHE_H
#define MFRD_MEMFD_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uthash.h>

/* What the module told about a memfd: owner data joined to its pages. */
struct mfrd_memfd {
	uint64_t inode;
	char *name;
	char *comm;
	char *cgroup_path;
	uint32_t pid;		/* 0: unknown */
	bool has_cgroup_id;
	uint64_t cgroup_id;
	size_t bytes;		/* what the entry costs, for the bound */
	UT_hash_handle hh;
};

/* The default bounds: a few MiB however many memfds a tenant makes. */
#define MFRD_MEMFD_CACHE_ENTRIES	8192
#define MFRD_MEMFD_CACHE_BYTES		(4u << 20)

struct mfrd_memfd_cache {
	struct mfrd_memfd *head;	/* oldest first (uthash's order) */
	size_t bytes;
	size_t max_entries, max_bytes;
	uint64_t dropped;		/* entries evicted by the bounds */
};

void mfrd_memfd_cache_init(struct mfrd_memfd_cache *c, size_t max_entries,
			   size_t max_bytes);

/*
 * Add or replace the owner of inode (strings copied; NULL: unknown), as
 * the most recently used; the least recently used go past the bounds.
 */
void mfrd_memfd_cache_put(struct mfrd_memfd_cache *c,
			  const struct mfrd_memfd *m);

/*
 * The owner of inode, or NULL; now the most recently used.  Valid until
 * the next put, forget or clear.
 */
const struct mfrd_memfd *mfrd_memfd_cache_find(struct mfrd_memfd_cache *c,
					       uint64_t inode);

void mfrd_memfd_cache_forget(struct mfrd_memfd_cache *c, uint64_t inode);
void mfrd_memfd_cache_clear(struct mfrd_memfd_cache *c);
size_t mfrd_memfd_cache_count(const struct mfrd_memfd_cache *c);

#endif /* MFRD_MEMFD_CACHE_H */
