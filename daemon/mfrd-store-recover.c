// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Opening mfrd's store, and recovering when it does not open.  The file
 * holds the only record of the pages that failed in earlier boots, which
 * boot offlining keeps out of service: it is never replaced unless SQLite
 * says it is damaged, and even then its readable pages are kept.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mfr-time.h"
#include "mfrd-store-recover.h"

const char *mfrd_store_fault_name(enum mfrd_store_fault fault)
{
	switch (fault) {
	case MFRD_STORE_OK:
		return "ok";
	case MFRD_STORE_CORRUPT:
		return "corrupt";
	case MFRD_STORE_NEWER:
		return "newer schema";
	case MFRD_STORE_UNAVAILABLE:
	case MFRD_STORE_LOCKED:	/* the error text says "locked" */
		break;
	}
	return "unavailable";
}

/* Move path (and its WAL and shared-memory files) to path.broken-TIME. */
static int move_aside(const char *path, char **to)
{
	static const char *const suffixes[] = { "", "-wal", "-shm" };
	char stamp[MFR_TIME_MAX], *from, *dest;
	int ret = 0;

	mfr_time_text((int64_t)time(NULL) * 1000000, MFR_TIME_BASIC, stamp,
		      sizeof(stamp));
	if (asprintf(to, "%s.broken-%s", path, stamp) < 0)
		abort();
	for (size_t i = 0; i < 3; i++) {
		if (asprintf(&from, "%s%s", path, suffixes[i]) < 0 ||
		    asprintf(&dest, "%s%s", *to, suffixes[i]) < 0)
			abort();
		/* The database first: without it the others are nothing. */
		if (rename(from, dest) && errno != ENOENT && !ret)
			ret = -errno;
		free(from);
		free(dest);
		if (ret && i == 0)
			break;
	}
	return ret;
}

/* A damaged file: aside, a fresh store, its readable pages salvaged. */
static int replace_damaged(const char *path, const char *boot_id,
			   struct mfrd_store **sp,
			   struct mfrd_store_recovery *r)
{
	char *moved, *err = NULL;
	int ret;

	ret = move_aside(path, &moved);
	if (ret) {
		if (asprintf(&r->move_error, "cannot move it to %s: %s", moved,
			     strerror(-ret)) < 0)
			abort();
		free(moved);
		return -1;
	}
	r->moved_to = moved;
	if (mfrd_store_open(path, boot_id, sp, &err, NULL)) {
		/* The damaged file stays aside; the pages are read from it. */
		r->move_error = err;
		return -1;
	}
	r->copied = mfrd_store_copy_pages(*sp, moved);
	if (r->copied == -2)
		r->copied = -1;	/* the fresh store failed: read, not known */
	return 0;
}

/* Open candidate file c and read path's pages into it; -1: it fails. */
static int open_candidate(const char *path, const char *c,
			  const char *boot_id, struct mfrd_store **sp,
			  struct mfrd_store_recovery *r)
{
	bool reused = !access(c, F_OK);
	uint64_t *pfns;
	size_t n;
	char *err;

	free(r->standin_error);
	r->standin_error = NULL;
	if (mfrd_store_open(c, boot_id, sp, &r->standin_error, NULL)) {
		/* Not left for a later start to take as an earlier run's. */
		if (!reused)
			mfrd_store_remove_standin(c);
		return -1;
	}
	r->copied = mfrd_store_copy_pages(*sp, path);
	if (r->copied == -2) {
		/* The stand-in takes no write (a full disk): the next one. */
		if (asprintf(&err, "%s: %s", c, mfrd_store_error(*sp)) < 0)
			abort();
		r->standin_error = err;
		mfrd_store_close(*sp);
		*sp = NULL;
		if (!reused)
			mfrd_store_remove_standin(c);
		return -1;
	}
	/*
	 * A stand-in an earlier run left has the file's records already
	 * (none is added twice): what boot offlining knows is what it holds.
	 */
	if (reused && r->copied >= 0 &&
	    !mfrd_store_earlier_pfns(*sp, &pfns, &n)) {
		r->copied = (int64_t)n;
		free(pfns);
	}
	return 0;
}

int mfrd_store_open_standin(const char *path, const char *const *candidates,
			    const char *boot_id, struct mfrd_store **sp,
			    int *used, struct mfrd_store_recovery *r)
{
	char *err = NULL;

	r->in_memory = true;
	for (*used = 0; candidates && candidates[*used]; (*used)++)
		if (!open_candidate(path, candidates[*used], boot_id, sp, r))
			return 0;
	*used = -1;
	if (mfrd_store_open(MFRD_STORE_IN_MEMORY, boot_id, sp, &err, NULL)) {
		free(r->error);
		r->error = err;
		return -1;
	}
	r->copied = mfrd_store_copy_pages(*sp, path);
	if (r->copied == -2) {
		free(r->error);
		r->error = strdup(mfrd_store_error(*sp));
		mfrd_store_close(*sp);
		return -1;
	}
	return 0;
}

int mfrd_store_open_or_recover(const char *path, const char *const *candidates,
			       const char *boot_id, struct mfrd_store **sp,
			       int *used, struct mfrd_store_recovery *r)
{
	memset(r, 0, sizeof(*r));
	*used = -1;
	if (!mfrd_store_open(path, boot_id, sp, &r->error, &r->fault))
		return 0;
	if (r->fault == MFRD_STORE_CORRUPT &&
	    !replace_damaged(path, boot_id, sp, r))
		return 0;
	return mfrd_store_open_standin(r->moved_to ?: path, candidates, boot_id,
				       sp, used, r);
}

void mfrd_store_remove_standin(const char *standin)
{
	mfrd_store_remove_files(standin);
}

int mfrd_store_leave_standin(struct mfrd_store *s, const char *standin,
			     const char *path, struct mfrd_store_merged *m,
			     char **err)
{
	if (mfrd_store_merge_into(s, path, m)) {
		*err = strdup(mfrd_store_error(s));
		return -1;
	}
	mfrd_store_close(s);
	if (standin)
		mfrd_store_remove_standin(standin);
	return 0;
}

int mfrd_store_take_leftover(const char *standin, const char *path,
			     const char *boot_id, struct mfrd_store_merged *m,
			     char **err)
{
	struct mfrd_store *s;

	memset(m, 0, sizeof(*m));
	*err = NULL;
	if (!standin || access(standin, F_OK))
		return 0;
	if (mfrd_store_open(standin, boot_id, &s, err, NULL))
		return -1;
	if (mfrd_store_leave_standin(s, standin, path, m, err)) {
		mfrd_store_close(s);
		return -1;
	}
	return 1;
}

void mfrd_store_recovery_free(struct mfrd_store_recovery *r)
{
	free(r->error);
	free(r->moved_to);
	free(r->move_error);
	free(r->standin_error);
	memset(r, 0, sizeof(*r));
}
