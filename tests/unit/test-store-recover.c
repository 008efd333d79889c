// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test of mfrd-store-recover: a store that does not open loses no
 * recorded pfn.  A locked store, one of a newer schema, one whose writes
 * fail (as on a full disk) and one in a read-only directory are left as
 * they are, and their pages read into the store in memory that stands in
 * for them; a damaged one is moved aside and what can still be read of it
 * salvaged into the fresh store.  What the stand-in holds (the store
 * incident first) goes into the file once it can be used, also when a
 * restart came in between.
 */
#include <dirent.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>

#include "mfrd-store-recover.h"
#include "unit-sql.h"

#define BOOT_A	"0b5c8f0e1f6a4e7c9d3b2a1908f7e6d5"
#define BOOT_B	"5d6e7f8091a2b3c4d5e6f708192a3b4c"
#define PAGES	40

/* A store of boot A with PAGES pages (pfn 0x1000 + i) and many events. */
static void make_store(const char *path)
{
	struct mfrd_store *s;
	char *err = NULL;

	if (mfrd_store_open(path, BOOT_A, &s, &err, NULL)) {
		printf("not ok - cannot make %s: %s\n", path, err);
		exit(1);
	}
	for (int i = 0; i < PAGES; i++) {
		struct mfrd_page p = { .pfn = 0x1000 + i };

		if (mfrd_store_put_page(s, &p, 1))
			exit(1);
	}
	for (int i = 0; i < 200; i++) {
		struct mfrd_event e = { .time_usec = i, .kind = "page-poisoned",
					.detail = "padding to fill pages of the log" };

		if (mfrd_store_log_event(s, &e))
			exit(1);
	}
	mfrd_store_close(s);
}



/* The files in dir whose name starts with prefix. */
static int count_files(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	if (d)
		closedir(d);
	return n;
}

/* The earlier pfns s holds for boot B: all PAGES of boot A? */
static bool has_earlier_pages(struct mfrd_store *s)
{
	struct mfrd_earlier *e = NULL;
	size_t n = 0;
	bool ok;

	ok = !mfrd_store_earlier(s, &e, &n) && n == PAGES &&
	     e[0].pfn == 0x1000 && e[PAGES - 1].pfn == 0x1000 + PAGES - 1;
	mfrd_store_earlier_free(e, n);
	return ok;
}

/* A store the file could not be: left alone, its pages read. */
static void check_left_alone(const char *what, const char *dir,
			     const char *path, enum mfrd_store_fault want)
{
	struct mfrd_store_recovery r;
	int used;
	struct mfrd_store *s = NULL;

	CHECK(mfrd_store_open_or_recover(path, NULL, BOOT_B, &s, &used, &r) == 0,
	      "%s: mfrd gets a store", what);
	printf("#   %s\n", r.error ? r.error : "(no error)");
	CHECK(r.fault == want, "%s: fault '%s' (got '%s')", what,
	      mfrd_store_fault_name(want), mfrd_store_fault_name(r.fault));
	CHECK(r.in_memory && !r.moved_to, "%s: in memory, the file not moved",
	      what);
	CHECK(count_files(dir, "mfrd.db.broken") == 0,
	      "%s: no mfrd.db.broken-* file", what);
	CHECK(r.copied == PAGES, "%s: the %d page records read from the file (%lld)",
	      what, PAGES, (long long)r.copied);
	CHECK(s && has_earlier_pages(s),
	      "%s: boot offlining finds the %d pfns of the earlier boot", what,
	      PAGES);
	mfrd_store_recovery_free(&r);
	mfrd_store_close(s);
}

static long long now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

static void test_locked(void)
{
	const char *dir = unit_path("locked");
	struct mfrd_page p = { .pfn = 0x8888 };
	struct mfrd_event e = { .time_usec = 9, .kind = "page-poisoned" };
	struct mfrd_store_merged m;
	struct mfrd_store *s = NULL;
	char path[4096], *err = NULL;
	sqlite3 *lock;
	long long t0;

	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/mfrd.db", dir);
	make_store(path);
	/* An operator's sqlite3 shell holding the write lock. */
	if (sqlite3_open(path, &lock) ||
	    sqlite3_exec(lock, "BEGIN EXCLUSIVE; DELETE FROM events", NULL,
			 NULL, NULL)) {
		printf("not ok - cannot lock %s\n", path);
		exit(1);
	}
	t0 = now_usec();
	check_left_alone("locked store", dir, path, MFRD_STORE_LOCKED);
	/* Each try of a retry is this open: mfrd's loop waits for it. */
	CHECK(now_usec() - t0 < 1000000,
	      "locked store: found out in %lld ms, under 1 s (no 5 s busy wait)",
	      (now_usec() - t0) / 1000);

	/* Records put aside while it is locked wait for the lock to go. */
	CHECK(mfrd_store_open(MFRD_STORE_IN_MEMORY, BOOT_B, &s, &err, NULL) == 0 &&
	      mfrd_store_put_page(s, &p, 9) == 0 &&
	      mfrd_store_log_event(s, &e) == 0,
	      "locked store: a page and an event go to a stand-in");
	t0 = now_usec();
	CHECK(s && mfrd_store_merge_into(s, path, &m) == -1 && mfrd_store_locked(s),
	      "locked store: merging them fails as locked (%s)",
	      s ? mfrd_store_error(s) : "?");
	CHECK(now_usec() - t0 < 1000000, "... in %lld ms, under 1 s",
	      (now_usec() - t0) / 1000);
	sqlite3_exec(lock, "ROLLBACK", NULL, NULL, NULL);
	CHECK(s && mfrd_store_merge_into(s, path, &m) == 0 && m.pages == 1 &&
	      m.events == 1,
	      "locked store: once released, the page and the event are merged");
	CHECK(sql_int(path, "SELECT count(*) FROM poisoned_pages WHERE pfn = 0x8888") == 1,
	      "... and in the file");
	mfrd_store_close(s);
	free(err);
	sqlite3_close(lock);
	CHECK(sql_int(path, "SELECT count(*) FROM poisoned_pages") == PAGES + 1,
	      "locked store: its %d records intact once the lock is gone", PAGES);
}

static void test_newer(void)
{
	const char *dir = unit_path("newer");
	char path[4096];

	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/mfrd.db", dir);
	make_store(path);
	sql(path, "ALTER TABLE poisoned_pages ADD COLUMN from_the_future TEXT;"
		  "PRAGMA user_version = 99");
	check_left_alone("newer schema", dir, path, MFRD_STORE_NEWER);
	CHECK(sql_int(path, "PRAGMA user_version") == 99 &&
	      sql_int(path, "SELECT count(*) FROM poisoned_pages") == PAGES,
	      "newer schema: the file is as it was (version 99, its records)");
}

/*
 * Writes that fail as on a full disk: a file size limit of one byte
 * (EFBIG, where a full disk gives ENOSPC; SQLite fails both writes).
 */
static void test_full(void)
{
	const char *dir = unit_path("full");
	struct rlimit old, one = { 1, 1 };
	char path[4096];
	off_t size;
	struct stat st;

	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/mfrd.db", dir);
	make_store(path);
	/* An older schema: opening it has to write (the migration). */
	sql(path, "DROP TABLE store_incidents; PRAGMA user_version = 2");
	stat(path, &st);
	size = st.st_size;
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	one.rlim_max = old.rlim_max;
	setrlimit(RLIMIT_FSIZE, &one);
	check_left_alone("writes fail (full disk)", dir, path,
			 MFRD_STORE_UNAVAILABLE);
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK(stat(path, &st) == 0 && st.st_size == size &&
	      sql_int(path, "SELECT count(*) FROM poisoned_pages") == PAGES,
	      "writes fail: the file is as it was (%lld bytes, its records)",
	      (long long)size);
}

/* Root writes anywhere: the directory is read-only to us only without DAC override. */
static void test_read_only_dir(void)
{
	const char *dir = unit_path("ro");
	char path[4096], probe[4096];
	FILE *f;

	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/mfrd.db", dir);
	snprintf(probe, sizeof(probe), "%s/probe", dir);
	make_store(path);
	chmod(dir, 0500);
	unit_dac_override(false);
	f = fopen(probe, "w");
	CHECK(!f, "read-only directory: files cannot be created in it");
	if (f)
		fclose(f);
	check_left_alone("read-only directory", dir, path,
			 MFRD_STORE_UNAVAILABLE);
	unit_dac_override(true);
	chmod(dir, 0700);
}

/*
 * A read-only directory at one start, writable at the next: the stand-in
 * file the first run left (its incident, a page it recorded) is merged
 * into the store at the second, and then deleted.
 */
static void test_standin_outlives_restart(void)
{
	struct mfrd_store_recovery r;
	int used;
	struct mfrd_store_merged m;
	struct mfrd_store *s = NULL;
	struct mfrd_page p = { .pfn = 0x7777 };
	char dir[2048], sdir[2048], path[4096], standin[4096], *err = NULL;

	/* unit_path() answers in one static buffer. */
	snprintf(dir, sizeof(dir), "%s", unit_path("ro-then-rw"));
	snprintf(sdir, sizeof(sdir), "%s", unit_path("run"));
	mkdir(dir, 0700);
	mkdir(sdir, 0700);
	snprintf(path, sizeof(path), "%s/mfrd.db", dir);
	snprintf(standin, sizeof(standin), "%s/standin.db", sdir);
	const char *standins[] = { standin, NULL };
	make_store(path);
	chmod(dir, 0500);
	unit_dac_override(false);
	CHECK(mfrd_store_open_or_recover(path, standins, BOOT_B, &s, &used,
					 &r) == 0 && used == 0 &&
	      r.in_memory && !r.standin_error && !access(standin, F_OK),
	      "read-only directory: the stand-in is a file (%s)",
	      r.standin_error ? r.standin_error : "ok");
	CHECK(s && mfrd_store_add_incident(s, 5, "unavailable", r.error, NULL,
					   r.copied) == 0 &&
	      mfrd_store_put_page(s, &p, 6) == 0,
	      "read-only directory: the incident and a page into the stand-in");
	mfrd_store_recovery_free(&r);
	mfrd_store_close(s);
	unit_dac_override(true);
	chmod(dir, 0700);
	CHECK(sql_int(path, "SELECT count(*) FROM store_incidents") == 0,
	      "the store file itself got nothing while read-only");

	/* The next start: the file opens. */
	CHECK(mfrd_store_take_leftover(standin, path, BOOT_B, &m, &err) == 1,
	      "next start: the stand-in left is merged (%s)", err ? err : "ok");
	CHECK(m.incidents == 1 && m.pages == 1,
	      "... 1 incident, 1 page record (%lld, %lld; the file's own pages are not copied back)",
	      (long long)m.incidents, (long long)m.pages);
	CHECK(sql_int(path, "SELECT count(*) FROM store_incidents WHERE acked_usec IS NULL AND kind = 'unavailable'") == 1,
	      "... the incident is in the file, unacknowledged");
	CHECK(sql_int(path, "SELECT count(*) FROM poisoned_pages WHERE pfn = 0x7777") == 1 &&
	      sql_int(path, "SELECT count(*) FROM poisoned_pages") == PAGES + 1,
	      "... the page recorded meanwhile too, the file's %d intact", PAGES);
	CHECK(access(standin, F_OK) && count_files(sdir, "standin.db") == 0,
	      "... and the stand-in is deleted");
	free(err);
	CHECK(mfrd_store_take_leftover(standin, path, BOOT_B, &m, &err) == 0 &&
	      sql_int(path, "SELECT count(*) FROM store_incidents") == 1,
	      "a start without a stand-in merges nothing");
	free(err);
}

/*
 * A damaged store: its events log overwritten with garbage, its page
 * records still readable.  Moved aside, and its pages salvaged.
 */
static void test_damaged(void)
{
	const char *dir = unit_path("damaged");
	struct mfrd_store_recovery r;
	int used;
	struct mfrd_store *s = NULL;
	long long page_size, root;
	char path[4096], junk[65536];
	FILE *f;

	mkdir(dir, 0700);
	snprintf(path, sizeof(path), "%s/mfrd.db", dir);
	make_store(path);
	page_size = sql_int(path, "PRAGMA page_size");
	root = sql_int(path, "SELECT rootpage FROM sqlite_schema WHERE name = 'events'");
	memset(junk, 0x5a, sizeof(junk));
	f = fopen(path, "r+");
	if (!f || page_size <= 0 || root <= 0 ||
	    fseek(f, (root - 1) * page_size, SEEK_SET) ||
	    fwrite(junk, 1, page_size, f) != (size_t)page_size || fclose(f)) {
		printf("not ok - cannot damage %s\n", path);
		exit(1);
	}
	CHECK(mfrd_store_open_or_recover(path, NULL, BOOT_B, &s, &used, &r) == 0,
	      "damaged store: mfrd gets a store");
	printf("#   %s\n", r.error ? r.error : "(no error)");
	CHECK(r.fault == MFRD_STORE_CORRUPT, "damaged store: fault 'corrupt'");
	/* quick_check's first line alone ("*** in database main ***") says nothing. */
	CHECK(r.error && strstr(r.error, "*** in database main ***") &&
	      strstr(r.error, "Page ") && !strchr(r.error, '\n'),
	      "damaged store: the error has quick_check's findings, on one line");
	CHECK(!r.in_memory && r.moved_to && !access(r.moved_to, F_OK) &&
	      !access(path, F_OK),
	      "damaged store: moved aside, a fresh file started");
	CHECK(r.copied == PAGES, "damaged store: %d page records salvaged (%lld)",
	      PAGES, (long long)r.copied);
	CHECK(s && has_earlier_pages(s),
	      "damaged store: boot offlining finds the salvaged pfns");
	mfrd_store_recovery_free(&r);
	mfrd_store_close(s);
	CHECK(sql_int(path, "SELECT count(DISTINCT pfn) FROM poisoned_pages") == PAGES,
	      "damaged store: the fresh file holds them");

	/* Not a database at all: moved aside, nothing to salvage. */
	unit_write(path, "not a database, and more than a header of it: "
		   "................................................................"
		   "................................................................\n", -1);
	CHECK(mfrd_store_open_or_recover(path, NULL, BOOT_B, &s, &used, &r) == 0 &&
	      r.fault == MFRD_STORE_CORRUPT && !r.in_memory && r.copied == -1,
	      "not a database: moved aside, a fresh store, nothing readable (-1: unknown)");
	mfrd_store_recovery_free(&r);
	mfrd_store_close(s);
}

int main(void)
{
	unit_init();
	test_newer();
	test_full();
	test_read_only_dir();
	test_standin_outlives_restart();
	test_damaged();
	test_locked();
	return check_exit_status();
}
