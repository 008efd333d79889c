// SPDX-License-Identifier: GPL-2.0-or-later
/* The memfd owner cache (mfrd-memfd-cache.h), a uthash table. */
#include <stdlib.h>
#include <string.h>

/* As everywhere in mfrd: out of memory aborts, systemd restarts. */
#define uthash_fatal(msg)	abort()
#include "mfrd-memfd-cache.h"

void mfrd_memfd_cache_init(struct mfrd_memfd_cache *c, size_t max_entries,
			   size_t max_bytes)
{
	*c = (struct mfrd_memfd_cache){
		.max_entries = max_entries,
		.max_bytes = max_bytes,
	};
}

static char *dup_or_null(const char *s, size_t *bytes)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		abort();
	*bytes += strlen(s) + 1;
	return d;
}

static void entry_free(struct mfrd_memfd_cache *c, struct mfrd_memfd *m)
{
	HASH_DEL(c->head, m);
	c->bytes -= m->bytes;
	free(m->name);
	free(m->comm);
	free(m->cgroup_path);
	free(m);
}

void mfrd_memfd_cache_put(struct mfrd_memfd_cache *c,
			  const struct mfrd_memfd *src)
{
	struct mfrd_memfd *m;

	HASH_FIND(hh, c->head, &src->inode, sizeof(src->inode), m);
	if (m)
		entry_free(c, m);
	m = calloc(1, sizeof(*m));
	if (!m)
		abort();
	*m = (struct mfrd_memfd){
		.inode = src->inode,
		.pid = src->pid,
		.has_cgroup_id = src->has_cgroup_id,
		.cgroup_id = src->cgroup_id,
		.bytes = sizeof(*m),
	};
	m->name = dup_or_null(src->name, &m->bytes);
	m->comm = dup_or_null(src->comm, &m->bytes);
	m->cgroup_path = dup_or_null(src->cgroup_path, &m->bytes);
	HASH_ADD(hh, c->head, inode, sizeof(m->inode), m);
	c->bytes += m->bytes;
	/* The newest stays, whatever it costs: a bound, not a refusal. */
	while (c->head != m && (HASH_COUNT(c->head) > c->max_entries ||
				c->bytes > c->max_bytes)) {
		entry_free(c, c->head);
		c->dropped++;
	}
}

const struct mfrd_memfd *mfrd_memfd_cache_find(struct mfrd_memfd_cache *c,
					       uint64_t inode)
{
	struct mfrd_memfd *m;

	HASH_FIND(hh, c->head, &inode, sizeof(inode), m);
	if (m) {
		/* To the end of the order: the most recently used. */
		HASH_DEL(c->head, m);
		HASH_ADD(hh, c->head, inode, sizeof(m->inode), m);
	}
	return m;
}

void mfrd_memfd_cache_forget(struct mfrd_memfd_cache *c, uint64_t inode)
{
	struct mfrd_memfd *m;

	HASH_FIND(hh, c->head, &inode, sizeof(inode), m);
	if (m)
		entry_free(c, m);
}

void mfrd_memfd_cache_clear(struct mfrd_memfd_cache *c)
{
	while (c->head)
		entry_free(c, c->head);
}

size_t mfrd_memfd_cache_count(const struct mfrd_memfd_cache *c)
{
	return HASH_COUNT(c->head);
}
