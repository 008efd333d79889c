// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test of mfrd-store-supervisor: whatever fails, no record is lost
 * and the writer never sees it.
 *  - a newer schema (a downgrade): the stand-in lives beside the store,
 *    on its disk, and the next boot (another boot id) finds this boot's
 *    records in it for boot offlining; the file is left as it is;
 *  - a read-only state directory: the stand-in goes to the runtime one;
 *  - writes failing at run time (a full disk, made with RLIMIT_FSIZE):
 *    the write is redone on a stand-in, mfrd goes on, and once the file
 *    takes writes again the records are merged into it, with the
 *    incident.
 */
#include <signal.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <systemd/sd-event.h>

#include "mfrd-store-supervisor.h"
#include "unit-sql.h"

#define BOOT_A	"aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
#define BOOT_B	"bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb"



static int put_pfn(struct mfrd_store *s, void *arg)
{
	struct mfrd_page p = { .pfn = *(uint64_t *)arg };

	return mfrd_store_put_page(s, &p, 42);
}

static int changes;

static void changed(void *arg, bool back_on_file)
{
	(void)arg;
	(void)back_on_file;
	changes++;
}

static const struct mfrd_sup_ops ops = { .changed = changed };

/* A state directory with a store of one page of boot A. */
static void make_state(const char *dir)
{
	struct mfrd_store_sup *sup;
	uint64_t pfn = 0x1000;

	mkdir(dir, 0700);
	CHECK(mfrd_sup_open(&sup, dir, BOOT_A, &ops) == 0 &&
	      mfrd_sup_where(sup) == MFRD_SUP_FILE &&
	      mfrd_sup_write(sup, put_pfn, &pfn, "put") == 0,
	      "%s: a store with one page", dir);
	mfrd_sup_close(sup);
}

static bool has_earlier(struct mfrd_store_sup *sup, uint64_t pfn)
{
	uint64_t *pfns = NULL;
	size_t n = 0;
	bool found = false;

	if (!mfrd_store_earlier_pfns(mfrd_sup_store(sup), &pfns, &n))
		for (size_t i = 0; i < n; i++)
			found |= pfns[i] == pfn;
	free(pfns);
	return found;
}

static void test_newer_schema(void)
{
	char dir[2048], path[4096], beside[4096];
	struct mfrd_store_sup *sup;
	uint64_t pfn = 0x2000;

	snprintf(dir, sizeof(dir), "%s", unit_path("newer"));
	snprintf(path, sizeof(path), "%s/mfrd.db", dir);
	snprintf(beside, sizeof(beside), "%s/mfrd-standin.db", dir);
	make_state(dir);
	sql(path, "PRAGMA user_version = 99");
	CHECK(mfrd_sup_open(&sup, dir, BOOT_A, &ops) == 0 &&
	      mfrd_sup_where(sup) == MFRD_SUP_BESIDE &&
	      mfrd_sup_standin_path(sup) &&
	      !strcmp(mfrd_sup_standin_path(sup), beside),
	      "newer schema: the stand-in is beside the store, on its disk (%s)",
	      mfrd_sup_standin_path(sup) ?: "none");
	CHECK(mfrd_sup_write(sup, put_pfn, &pfn, "put") == 0,
	      "a page of this boot recorded");
	mfrd_sup_close(sup);
	/* A reboot: the same store, still newer (no upgrade yet). */
	CHECK(mfrd_sup_open(&sup, dir, BOOT_B, &ops) == 0 &&
	      mfrd_sup_where(sup) == MFRD_SUP_BESIDE &&
	      has_earlier(sup, 0x2000) && has_earlier(sup, 0x1000),
	      "the next boot: the page of the boot before is an earlier boot's pfn, for boot offlining");
	mfrd_sup_close(sup);
	CHECK(sql_int(path, "PRAGMA user_version") == 99 &&
	      sql_int(path, "SELECT count(*) FROM poisoned_pages") == 1,
	      "the newer file is as it was");
	/* The upgrade: the file opens, the stand-in goes into it. */
	sql(path, "PRAGMA user_version = 3");
	CHECK(mfrd_sup_open(&sup, dir, BOOT_B, &ops) == 0 &&
	      mfrd_sup_where(sup) == MFRD_SUP_FILE && access(beside, F_OK),
	      "upgraded: on the file, the stand-in merged and deleted");
	mfrd_sup_close(sup);
	CHECK(sql_int(path, "SELECT count(*) FROM poisoned_pages WHERE pfn = 0x2000") == 1 &&
	      sql_int(path, "SELECT count(*) FROM store_incidents WHERE kind = 'newer schema'") >= 1,
	      "... with the page and the incident");
}

static void test_read_only_dir(void)
{
	char dir[2048], run[2048];
	struct mfrd_store_sup *sup;
	const char *standin;

	snprintf(dir, sizeof(dir), "%s", unit_path("ro"));
	snprintf(run, sizeof(run), "%s", unit_path("run"));
	make_state(dir);
	chmod(dir, 0500);
	unit_dac_override(false);
	CHECK(mfrd_sup_open(&sup, dir, BOOT_B, &ops) == 0 &&
	      mfrd_sup_where(sup) == MFRD_SUP_RUNTIME &&
	      (standin = mfrd_sup_standin_path(sup)) &&
	      !strncmp(standin, run, strlen(run)),
	      "read-only directory: the stand-in is in the runtime directory");
	CHECK(has_earlier(sup, 0x1000), "... with the file's pages");
	mfrd_sup_close(sup);
	unit_dac_override(true);
	chmod(dir, 0700);
}

/* Run the loop until the records are back on the file, 20 s at most. */
static bool wait_back_on_file(struct mfrd_store_sup *sup, sd_event *e)
{
	for (int i = 0; i < 200 && mfrd_sup_where(sup) != MFRD_SUP_FILE; i++)
		sd_event_run(e, 100000);
	return mfrd_sup_where(sup) == MFRD_SUP_FILE;
}

static void test_full_at_run_time(void)
{
	struct rlimit old, none;
	char dir[2048], path[4096];
	struct mfrd_store_sup *sup;
	uint64_t pfn = 0x3000;
	sd_event *e = NULL;

	snprintf(dir, sizeof(dir), "%s", unit_path("full"));
	snprintf(path, sizeof(path), "%s/mfrd.db", dir);
	make_state(dir);
	CHECK(mfrd_sup_open(&sup, dir, BOOT_B, &ops) == 0 &&
	      mfrd_sup_where(sup) == MFRD_SUP_FILE && sd_event_new(&e) >= 0,
	      "full disk: on the file at first");
	mfrd_sup_attach(sup, e);
	/*
	 * No file may grow any more: the store's, nor a stand-in's (nor
	 * stdout, if it is a file: checked once the limit is gone).
	 */
	signal(SIGXFSZ, SIG_IGN);
	getrlimit(RLIMIT_FSIZE, &old);
	none = (struct rlimit){ .rlim_cur = 1, .rlim_max = old.rlim_max };
	fflush(stdout);
	setrlimit(RLIMIT_FSIZE, &none);
	changes = 0;
	bool written = mfrd_sup_write(sup, put_pfn, &pfn, "put") == 0;
	enum mfrd_sup_where where = mfrd_sup_where(sup);
	int changed_once = changes;
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK(written && where == MFRD_SUP_MEMORY && changed_once == 1,
	      "writes fail at run time: the write succeeds all the same, in memory (no file takes it: %d)",
	      (int)where);
	CHECK(mfrd_sup_errors(sup) > 0, "... counted as a store error");
	CHECK(wait_back_on_file(sup, e) && changes == 2,
	      "space again: back on the file by the retry");
	mfrd_sup_close(sup);
	sd_event_unref(e);
	CHECK(sql_int(path, "SELECT count(*) FROM poisoned_pages WHERE pfn = 0x3000") == 1 &&
	      sql_int(path, "SELECT count(*) FROM store_incidents WHERE acked_usec IS NULL") == 1,
	      "... the page recorded meanwhile and the incident are in the file");
}

int main(void)
{
	char run[2048];

	unit_init();
	snprintf(run, sizeof(run), "%s", unit_path("run"));
	mkdir(run, 0700);
	setenv("RUNTIME_DIRECTORY", run, 1);
	test_newer_schema();
	test_read_only_dir();
	test_full_at_run_time();
	return check_exit_status();
}
