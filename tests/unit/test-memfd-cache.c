// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test of mfrd-memfd-cache: owners found by inode, replaced, and
 * forgotten; the bounds in entries and bytes hold however many memfds a
 * tenant makes, the least recently used going first.
 */
#include <inttypes.h>

#include "mfrd-memfd-cache.h"
#include "unit.h"

static void put(struct mfrd_memfd_cache *c, uint64_t inode, const char *name)
{
	struct mfrd_memfd m = { .inode = inode, .name = (char *)name,
				.comm = "qemu", .pid = 42 };

	mfrd_memfd_cache_put(c, &m);
}

int main(void)
{
	struct mfrd_memfd_cache c;
	const struct mfrd_memfd *m;
	size_t peak = 0;

	unit_init();
	mfrd_memfd_cache_init(&c, 4, 1 << 20);
	put(&c, 10, "a");
	put(&c, 11, "b");
	m = mfrd_memfd_cache_find(&c, 10);
	CHECK(m && !strcmp(m->name, "a") && !strcmp(m->comm, "qemu") &&
	      m->pid == 42, "found by inode, with its owner");
	put(&c, 10, "a2");
	m = mfrd_memfd_cache_find(&c, 10);
	CHECK(m && !strcmp(m->name, "a2") && mfrd_memfd_cache_count(&c) == 2,
	      "put again: replaced, not added");
	/* 10 used last: 11 is the least recently used when 3 more come. */
	put(&c, 12, "c");
	put(&c, 13, "d");
	mfrd_memfd_cache_find(&c, 11);
	mfrd_memfd_cache_find(&c, 10);
	put(&c, 14, "e");
	CHECK(mfrd_memfd_cache_count(&c) == 4 && c.dropped == 1 &&
	      !mfrd_memfd_cache_find(&c, 12) && mfrd_memfd_cache_find(&c, 11) &&
	      mfrd_memfd_cache_find(&c, 10) && mfrd_memfd_cache_find(&c, 14),
	      "past 4 entries: the least recently used (12) goes");
	mfrd_memfd_cache_forget(&c, 10);
	CHECK(!mfrd_memfd_cache_find(&c, 10) && mfrd_memfd_cache_count(&c) == 3,
	      "forgotten");
	mfrd_memfd_cache_clear(&c);
	CHECK(mfrd_memfd_cache_count(&c) == 0 && c.bytes == 0,
	      "cleared: nothing left, no byte counted");

	/* A tenant's 100 000 memfds with long names: bounded in bytes. */
	char name[250];

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	mfrd_memfd_cache_init(&c, 100000, 64 << 10);
	for (uint64_t i = 0; i < 100000; i++) {
		put(&c, i, name);
		if (c.bytes > peak)
			peak = c.bytes;
	}
	CHECK(peak <= 64 << 10 && mfrd_memfd_cache_count(&c) > 100 &&
	      mfrd_memfd_cache_find(&c, 99999),
	      "100 000 memfds: at most 64 KiB kept (%zu bytes, %zu entries), the newest in",
	      peak, mfrd_memfd_cache_count(&c));
	mfrd_memfd_cache_clear(&c);
	return check_exit_status();
}
