// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test of mfrd-store: schema creation and versioning (a new file,
 * an empty file, a reopen, a newer schema refused), WAL mode, idempotent
 * upserts keyed on (boot id, pfn), partial updates, folio states,
 * earlier-boot pfns, per-state counts, the events log, and transactions.
 * Rows are checked through a second connection, as another reader of
 * the database would see them.
 */
#include <sqlite3.h>
#include <unistd.h>
#include <linux/mfr.h>

#include "mfrd-store.h"
#include "unit.h"

#define BOOT_A	"0b5c8f0e1f6a4e7c9d3b2a1908f7e6d5"
#define BOOT_B	"5d6e7f8091a2b3c4d5e6f708192a3b4c"

static sqlite3 *reader;

/* The first column of the first row of sql, as text ("" if none). */
static const char *q(const char *sql)
{
	static char out[1024];
	sqlite3_stmt *st;

	out[0] = '\0';
	if (sqlite3_prepare_v2(reader, sql, -1, &st, NULL)) {
		snprintf(out, sizeof(out), "error: %s", sqlite3_errmsg(reader));
		return out;
	}
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(out, sizeof(out), "%s", sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return out;
}

static struct mfrd_store *open_ok(const char *path, const char *boot)
{
	struct mfrd_store *s = NULL;
	char *err = NULL;

	CHECK(mfrd_store_open(path, boot, &s, &err, NULL) == 0, "open %s", path);
	if (err) {
		printf("#   %s\n", err);
		free(err);
		exit(1);
	}
	return s;
}

static const struct mfrd_page page1 = {
	.pfn = 0x12345,
	.has = MFRD_HAS_HEAD_PFN | MFRD_HAS_FOLIO_SIZE | MFRD_HAS_INODE |
	       MFRD_HAS_OFFSET | MFRD_HAS_STATE | MFRD_HAS_TIMES_CONSUMED |
	       MFRD_HAS_PID | MFRD_HAS_CGROUP_ID,
	.head_pfn = 0x12200,
	.folio_size = 2 << 20,
	.inode = 1043,
	.offset = 0x145000,
	.state = MFR_PAGE_STATE_KEPT,
	.times_consumed = 1,
	.pid = 4242,
	.cgroup_id = 42,
	.memfd_name = "guest ram",
	.comm = "qemu-system-x86",
	.cgroup_path = "/machine.slice",
};

#define ROW1 "SELECT boot_id||'|'||pfn||'|'||head_pfn||'|'||folio_size||'|'||" \
	"inode||'|'||memfd_name||'|'||pid||'|'||comm||'|'||cgroup_id||'|'||" \
	"cgroup_path||'|'||\"offset\"||'|'||state||'|'||times_consumed||'|'||" \
	"first_seen_usec||'|'||last_update_usec FROM poisoned_pages " \
	"WHERE pfn = 74565 AND boot_id = '" BOOT_A "'"

static void test_new_db(const char *path)
{
	struct mfrd_store *s = open_ok(path, BOOT_A);
	struct mfrd_page p = page1;
	uint64_t counts[MFRD_PAGE_STATES];

	CHECK(mfrd_store_schema_version(s) == MFRD_STORE_SCHEMA_VERSION,
	      "new database at schema version %d", MFRD_STORE_SCHEMA_VERSION);
	if (sqlite3_open_v2(path, &reader, SQLITE_OPEN_READONLY, NULL)) {
		printf("not ok - reader: %s\n", sqlite3_errmsg(reader));
		exit(1);
	}
	CHECK_STR(q("PRAGMA journal_mode"), "wal", "journal_mode");
	CHECK_STR(q("PRAGMA user_version"), "3", "user_version");

	CHECK(mfrd_store_has_page(s, page1.pfn) == 0, "pfn not known yet");
	CHECK(mfrd_store_put_page(s, &page1, 1000) == 0, "put a page");
	CHECK(mfrd_store_last_changes(s) == 1, "a new page: one row written");
	CHECK(mfrd_store_has_page(s, page1.pfn) == 1, "pfn known now");
	CHECK(mfrd_store_put_page(s, &page1, 2000) == 0, "put it again");
	CHECK(mfrd_store_last_changes(s) == 0, "a replay writes no row");
	CHECK_STR(q("SELECT count(*) FROM poisoned_pages"), "1",
		  "same record twice: one row");
	CHECK_STR(q(ROW1), BOOT_A "|74565|74240|2097152|1043|guest ram|4242|"
		  "qemu-system-x86|42|/machine.slice|1331200|kept|1|1000|1000",
		  "the row, untouched by the replay (last update 1000)");

	/* A notification knows less: what it lacks stays as stored. */
	p = (struct mfrd_page){
		.pfn = page1.pfn,
		.has = MFRD_HAS_TIMES_CONSUMED,
		.times_consumed = 3,
	};
	CHECK(mfrd_store_put_page(s, &p, 3000) == 0, "put a partial record");
	CHECK(mfrd_store_last_changes(s) == 1, "a change: one row written");
	CHECK_STR(q(ROW1), BOOT_A "|74565|74240|2097152|1043|guest ram|4242|"
		  "qemu-system-x86|42|/machine.slice|1331200|kept|3|1000|3000",
		  "times consumed 3, the rest kept, last update 3000");
	p.times_consumed = 2;
	CHECK(mfrd_store_put_page(s, &p, 4000) == 0, "put an older count");
	CHECK_STR(q(ROW1), BOOT_A "|74565|74240|2097152|1043|guest ram|4242|"
		  "qemu-system-x86|42|/machine.slice|1331200|kept|3|1000|3000",
		  "times consumed never decreases, no update");

	/* A pfn first seen without a state (its poisoned event was lost). */
	p = (struct mfrd_page){ .pfn = 0x12346, .has = MFRD_HAS_HEAD_PFN,
				.head_pfn = 0x12200 };
	CHECK(mfrd_store_put_page(s, &p, 5000) == 0, "put a bare pfn");
	CHECK_STR(q("SELECT state||'|'||times_consumed||'|'||"
		    "coalesce(inode, 'null') FROM poisoned_pages "
		    "WHERE pfn = 74566"), "kept|0|null",
		  "a new row without a state is kept, unknowns NULL");

	CHECK(mfrd_store_set_folio_state(s, 0x12200, MFR_PAGE_STATE_PENDING,
					 6000) == 2,
	      "folio pending: its 2 pages change");
	CHECK(mfrd_store_set_folio_state(s, 0x12200, MFR_PAGE_STATE_PENDING,
					 7000) == 0,
	      "folio pending again: no page changes");
	CHECK(mfrd_store_set_folio_state(s, 0x99999, MFR_PAGE_STATE_OFFLINED,
					 7000) == 0, "an unknown folio: none");
	p = (struct mfrd_page){ .pfn = 0x40001, .has = MFRD_HAS_STATE,
				.state = MFR_PAGE_STATE_FALLBACK };
	CHECK(mfrd_store_put_page(s, &p, 8000) == 0, "put a fallback page");
	CHECK(mfrd_store_count_states(s, counts) == 0 &&
	      counts[MFR_PAGE_STATE_KEPT] == 0 &&
	      counts[MFR_PAGE_STATE_PENDING] == 2 &&
	      counts[MFR_PAGE_STATE_OFFLINED] == 0 &&
	      counts[MFR_PAGE_STATE_FALLBACK] == 1,
	      "counts: 2 pending, 1 fallback");

	/* A state newer than this mfrd: the record all the same, not a failure. */
	p.state = 7;
	CHECK(mfrd_store_put_page(s, &p, 9000) == 0 &&
	      mfrd_store_count_states(s, counts) == 0 &&
	      counts[MFR_PAGE_STATE_FALLBACK] == 1,
	      "a state newer than mfrd: the record kept, its state as it was");

	struct mfrd_event ev = {
		.time_usec = 1700000000000000,
		.kind = "page-poisoned",
		.has = MFRD_HAS_PFN | MFRD_HAS_HEAD_PFN | MFRD_HAS_GENERATION,
		.pfn = 0x12345,
		.head_pfn = 0x12200,
		.generation = 12,
		.detail = "page-poisoned pfn=0x12345 head-pfn=0x12200",
	};
	CHECK(mfrd_store_log_event(s, &ev) == 0, "log an event");
	CHECK_STR(q("SELECT time_usec||'|'||boot_id||'|'||kind||'|'||pfn||'|'"
		    "||head_pfn||'|'||coalesce(inode, 'null')||'|'||generation"
		    "||'|'||detail FROM events"),
		  "1700000000000000|" BOOT_A "|page-poisoned|74565|74240|null|"
		  "12|page-poisoned pfn=0x12345 head-pfn=0x12200",
		  "the event row");

	/* A batch is all or nothing. */
	CHECK(mfrd_store_begin(s) == 0, "begin");
	for (uint64_t pfn = 0x50000; pfn < 0x50000 + 100; pfn++) {
		p = (struct mfrd_page){ .pfn = pfn };
		if (mfrd_store_put_page(s, &p, 10000))
			break;
	}
	CHECK(mfrd_store_rollback(s) == 0, "rollback");
	CHECK_STR(q("SELECT count(*) FROM poisoned_pages WHERE pfn >= 327680"),
		  "0", "a rolled back batch leaves nothing");
	CHECK(mfrd_store_begin(s) == 0, "begin");
	for (uint64_t pfn = 0x50000; pfn < 0x50000 + 100; pfn++) {
		p = (struct mfrd_page){ .pfn = pfn };
		if (mfrd_store_put_page(s, &p, 10000))
			break;
	}
	CHECK_STR(q("SELECT count(*) FROM poisoned_pages WHERE pfn >= 327680"),
		  "0", "another reader sees no part of an open batch");
	CHECK(mfrd_store_commit(s) == 0, "commit");
	CHECK_STR(q("SELECT count(*) FROM poisoned_pages WHERE pfn >= 327680"),
		  "100", "a committed batch is all there");
	CHECK(mfrd_store_commit(s) == -1, "commit without begin fails");
	mfrd_store_close(s);
}

static void test_reopen(const char *path)
{
	struct mfrd_store *s = open_ok(path, BOOT_A);
	uint64_t *pfns = NULL;
	size_t n = 99;

	CHECK(mfrd_store_schema_version(s) == MFRD_STORE_SCHEMA_VERSION,
	      "reopened: schema version kept");
	CHECK_STR(q("SELECT count(*) FROM poisoned_pages"), "103",
		  "reopened: rows kept");
	CHECK(mfrd_store_put_page(s, &page1, 20000) == 0,
	      "replay after a restart");
	CHECK_STR(q("SELECT count(*) FROM poisoned_pages"), "103",
		  "replay after a restart: no new row");
	CHECK(mfrd_store_earlier_pfns(s, &pfns, &n) == 0 && n == 0,
	      "same boot: no earlier pfns");
	free(pfns);
	mfrd_store_close(s);

	/* The next boot sees this one's pfns, and records its own apart. */
	s = open_ok(path, BOOT_B);
	CHECK(mfrd_store_has_page(s, page1.pfn) == 0,
	      "a pfn of an earlier boot is not this boot's");
	CHECK(mfrd_store_put_page(s, &page1, 30000) == 0,
	      "the same pfn in another boot");
	CHECK_STR(q("SELECT count(*) FROM poisoned_pages WHERE pfn = 74565"),
		  "2", "one row per boot");
	CHECK(mfrd_store_earlier_pfns(s, &pfns, &n) == 0 && n == 103,
	      "boot B: 103 earlier pfns");
	CHECK(n == 103 && pfns[0] == 0x12345 && pfns[1] == 0x12346 &&
	      pfns[2] == 0x40001 && pfns[3] == 0x50000 &&
	      pfns[102] == 0x50063, "ascending, distinct");
	free(pfns);
	mfrd_store_close(s);
}

static void test_migrations(void)
{
	enum mfrd_store_fault fault = MFRD_STORE_OK;
	struct mfrd_store *s;
	sqlite3 *db;
	char *err = NULL;
	const char *path = unit_path("empty.db");

	/* An empty file is a database at version 0. */
	unit_write(path, "", 0);
	s = open_ok(path, BOOT_A);
	CHECK(mfrd_store_schema_version(s) == MFRD_STORE_SCHEMA_VERSION,
	      "empty file migrated to version %d", MFRD_STORE_SCHEMA_VERSION);
	CHECK(mfrd_store_put_page(s, &page1, 1) == 0,
	      "the migrated schema takes a page");
	mfrd_store_close(s);

	/* Version 1 (before memory identity) keeps its rows, gains columns. */
	path = unit_path("v1.db");
	if (sqlite3_open(path, &db) ||
	    sqlite3_exec(db,
			 "CREATE TABLE poisoned_pages (boot_id TEXT NOT NULL,"
			 " pfn INTEGER NOT NULL, head_pfn INTEGER, folio_size INTEGER,"
			 " inode INTEGER, memfd_name TEXT, pid INTEGER, comm TEXT,"
			 " cgroup_id INTEGER, cgroup_path TEXT, \"offset\" INTEGER,"
			 " state TEXT NOT NULL, times_consumed INTEGER NOT NULL DEFAULT 0,"
			 " first_seen_usec INTEGER NOT NULL, last_update_usec INTEGER NOT NULL,"
			 " PRIMARY KEY (boot_id, pfn)) WITHOUT ROWID;"
			 "CREATE TABLE events (id INTEGER PRIMARY KEY, time_usec INTEGER NOT NULL,"
			 " boot_id TEXT NOT NULL, kind TEXT NOT NULL, pfn INTEGER,"
			 " head_pfn INTEGER, inode INTEGER, generation INTEGER, detail TEXT);"
			 "INSERT INTO poisoned_pages (boot_id, pfn, state, first_seen_usec,"
			 " last_update_usec) VALUES ('" BOOT_B "', 77, 'offlined', 1, 1);"
			 "PRAGMA user_version = 1", NULL, NULL, NULL)) {
		printf("not ok - cannot make v1.db: %s\n", sqlite3_errmsg(db));
		exit(1);
	}
	sqlite3_close(db);
	s = open_ok(path, BOOT_A);
	CHECK(mfrd_store_schema_version(s) == MFRD_STORE_SCHEMA_VERSION,
	      "version 1 migrated to %d", MFRD_STORE_SCHEMA_VERSION);
	struct mfrd_earlier *e = NULL;
	size_t n = 0;
	CHECK(mfrd_store_earlier(s, &e, &n) == 0 && n == 1 && e[0].pfn == 77 &&
	      !e[0].dimm_id, "its record is there, without a DIMM identity");
	mfrd_store_earlier_free(e, n);
	mfrd_store_close(s);

	/* A database from a newer mfrd is left alone. */
	path = unit_path("newer.db");
	if (sqlite3_open(path, &db) ||
	    sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL)) {
		printf("not ok - cannot make newer.db\n");
		exit(1);
	}
	sqlite3_close(db);
	CHECK(mfrd_store_open(path, BOOT_A, &s, &err, &fault) == -1,
	      "a newer schema is refused");
	CHECK(fault == MFRD_STORE_NEWER, "... as a newer schema");
	CHECK_STR(err, "database schema version 99 is newer than this mfrd's (3)",
		  "its error");
	free(err);

	/* Not a database: an error message, not a crash. */
	path = unit_path("garbage.db");
	unit_write(path, "this is not an SQLite database, just some text "
		   "that is long enough to fill the header page............"
		   "..............................................\n", -1);
	err = NULL;
	CHECK(mfrd_store_open(path, BOOT_A, &s, &err, &fault) == -1 && err,
	      "a file that is no database is refused");
	CHECK(fault == MFRD_STORE_CORRUPT, "... as damaged");
	printf("#   %s\n", err ? err : "(no message)");
	free(err);

	path = unit_path("no/such/dir.db");
	err = NULL;
	CHECK(mfrd_store_open(path, BOOT_A, &s, &err, &fault) == -1 && err,
	      "a database in a missing directory is refused");
	CHECK(fault == MFRD_STORE_UNAVAILABLE, "... as unavailable, not damaged");
	printf("#   %s\n", err ? err : "(no message)");
	free(err);
}

/*
 * Retention of the events log: by age, then by count, newest kept; the
 * page records are never touched.  A corrupt file fails to open.
 */
static void test_events_retention(void)
{
	enum mfrd_store_fault fault = MFRD_STORE_OK;
	char path[4096];
	struct mfrd_store *s;
	char *err = NULL;
	int64_t pages_before;

	snprintf(path, sizeof(path), "%s", unit_path("retention.db"));
	CHECK(mfrd_store_open(path, BOOT_A, &s, &err, NULL) == 0, "open %s", path);
	free(err);
	struct mfrd_page p = { .pfn = 0x777 };
	CHECK(mfrd_store_put_page(s, &p, 1) == 0, "a page record");
	for (int i = 0; i < 1000; i++) {
		struct mfrd_event ev = {
			.time_usec = 1000000LL * i,	/* second i */
			.kind = "page-poisoned",
		};
		if (mfrd_store_log_event(s, &ev))
			break;
	}
	CHECK(mfrd_store_count_events(s) == 1000, "1000 events");
	pages_before = 1;
	CHECK(mfrd_store_prune_events(s, 0, 0) == 0, "no limits: nothing pruned");
	CHECK(mfrd_store_prune_events(s, 100 * 1000000LL, 0) == 100,
	      "events before second 100 pruned (100)");
	CHECK(mfrd_store_prune_events(s, 0, 250) == 650,
	      "then all but the newest 250 (650)");
	CHECK(mfrd_store_count_events(s) == 250, "250 events left");
	CHECK(mfrd_store_prune_events(s, 0, 250) == 0, "pruning again: nothing");
	mfrd_store_close(s);
	sqlite3 *db;
	sqlite3_stmt *st;
	CHECK(sqlite3_open(path, &db) == SQLITE_OK, "reopen with sqlite3");
	CHECK(sqlite3_prepare_v2(db, "SELECT min(time_usec), (SELECT count(*) FROM poisoned_pages)"
				 " FROM events", -1, &st, NULL) == SQLITE_OK &&
	      sqlite3_step(st) == SQLITE_ROW &&
	      sqlite3_column_int64(st, 0) == 750 * 1000000LL &&
	      sqlite3_column_int64(st, 1) == pages_before,
	      "the newest 250 events kept (from second 750), the page record too");
	sqlite3_finalize(st);
	sqlite3_close(db);

	/* A truncated database does not open: mfrd moves it aside. */
	CHECK(truncate(path, 1000) == 0, "truncate the file");
	s = NULL;
	CHECK(mfrd_store_open(path, BOOT_A, &s, &err, &fault) == -1 && err,
	      "a truncated store fails to open (%s)", err ? err : "");
	CHECK(fault == MFRD_STORE_CORRUPT, "... as damaged");
	free(err);
}

static void fake_identify(uint64_t pfn, uint64_t *phys, const char **dimm,
			  const char **dimm_id, void *arg)
{
	(void)arg;
	if (pfn == 0x100) {	/* the host knows this one's DIMM */
		*dimm = "BANK 0/DIMM_A1";
		*dimm_id = "locator=BANK 0/DIMM_A1 serial=SN-A1";
	}
	(void)phys;
}

/* Memory identity: set once per page, read back by the next boot. */
static void test_identity(void)
{
	struct mfrd_earlier *e = NULL;
	struct mfrd_store *s;
	char path[4096], *err = NULL;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s", unit_path("identity.db"));
	CHECK(mfrd_store_open(path, BOOT_A, &s, &err, NULL) == 0, "open");
	for (uint64_t pfn = 0x100; pfn <= 0x101; pfn++) {
		struct mfrd_page p = { .pfn = pfn };

		CHECK(mfrd_store_put_page(s, &p, 5) == 0, "page 0x%llx",
		      (unsigned long long)pfn);
	}
	/* In slices, so that a daemon's event loop gets control between. */
	CHECK(mfrd_store_identify_pages(s, fake_identify, NULL, 1) == 1,
	      "a slice of one page gets its identity");
	CHECK(mfrd_store_identify_pages(s, fake_identify, NULL, 1) == 1,
	      "the next slice: the one left");
	CHECK(mfrd_store_identify_pages(s, fake_identify, NULL, 1) == 0,
	      "... once: nothing left to identify");
	mfrd_store_close(s);
	CHECK(mfrd_store_open(path, BOOT_B, &s, &err, NULL) == 0, "open in the next boot");
	CHECK(mfrd_store_earlier(s, &e, &n) == 0 && n == 2, "two earlier pfns");
	CHECK(n == 2 && e[0].pfn == 0x100 && e[0].dimm && !strcmp(e[0].dimm, "BANK 0/DIMM_A1") &&
	      e[0].dimm_id && !strcmp(e[0].dimm_id, "locator=BANK 0/DIMM_A1 serial=SN-A1"),
	      "the first with its DIMM and identity");
	CHECK(n == 2 && e[1].pfn == 0x101 && !e[1].dimm && !e[1].dimm_id,
	      "the second without (the host did not tell)");
	mfrd_store_earlier_free(e, n);
	sqlite3 *db;
	sqlite3_stmt *st;
	CHECK(sqlite3_open(path, &db) == SQLITE_OK &&
	      sqlite3_prepare_v2(db, "SELECT group_concat(phys_addr) FROM poisoned_pages",
				 -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
	      !strcmp((const char *)sqlite3_column_text(st, 0), "1048576,1052672"),
	      "physical addresses are pfn << 12");
	sqlite3_finalize(st);
	sqlite3_close(db);
	mfrd_store_close(s);
}

/* Store incidents stay until acknowledged. */
static void test_incidents(void)
{
	struct mfrd_store *s = open_ok(unit_path("incidents.db"), BOOT_A);

	CHECK(mfrd_store_unacked_incidents(s) == 0, "no incident in a new store");
	CHECK(mfrd_store_add_incident(s, 5, "corrupt", "malformed",
				      "/x/mfrd.db.broken-1", 3) == 0 &&
	      mfrd_store_add_incident(s, 6, "unavailable", "locked", NULL, -1) == 0,
	      "two incidents recorded");
	CHECK(mfrd_store_unacked_incidents(s) == 2, "both unacknowledged");
	mfrd_store_close(s);
	s = open_ok(unit_path("incidents.db"), BOOT_B);
	CHECK(mfrd_store_unacked_incidents(s) == 2, "... after a restart too");
	sqlite3 *db;
	CHECK(sqlite3_open(unit_path("incidents.db"), &db) == SQLITE_OK &&
	      sqlite3_exec(db, "UPDATE store_incidents SET acked_usec = 7", NULL,
			   NULL, NULL) == SQLITE_OK, "acknowledged (as mfrctl store ack)");
	sqlite3_close(db);
	CHECK(mfrd_store_unacked_incidents(s) == 0, "none left once acknowledged");
	mfrd_store_close(s);
}

int main(void)
{
	char path[4096];

	unit_init();
	snprintf(path, sizeof(path), "%s", unit_path("mfrd.db"));
	test_new_db(path);
	test_reopen(path);
	sqlite3_close(reader);
	test_migrations();
	test_events_retention();
	test_identity();
	test_incidents();
	return check_exit_status();
}
