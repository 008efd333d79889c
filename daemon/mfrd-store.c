// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The SQLite store.  Numbers are stored as SQLite's signed 64-bit
 * integers (a u64 round-trips through the cast), enums by their spec
 * names so the database reads well in the sqlite3 shell and does not
 * depend on uAPI numbering.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/sendfile.h>
#include <sqlite3.h>

#include "mfr-spec.h"
#include "mfrd-grow.h"
#include "mfrd-runtime-dir.h"
#include "mfrd-store.h"
#include "mfrd-store-vfs.h"

/*
 * migrations[v] takes a database from schema v to v + 1, in the same
 * transaction as the user_version bump.  Append only: never edit one
 * that has shipped.
 */
static const char *const migrations[MFRD_STORE_SCHEMA_VERSION] = {
	/* 0 -> 1 */
	"CREATE TABLE poisoned_pages ("
	"  boot_id TEXT NOT NULL,"
	"  pfn INTEGER NOT NULL,"
	"  head_pfn INTEGER,"
	"  folio_size INTEGER,"
	"  inode INTEGER,"
	"  memfd_name TEXT,"
	"  pid INTEGER,"
	"  comm TEXT,"
	"  cgroup_id INTEGER,"
	"  cgroup_path TEXT,"
	"  \"offset\" INTEGER,"
	"  state TEXT NOT NULL"
	"    CHECK (state IN ('kept', 'pending', 'offlined', 'fallback')),"
	"  times_consumed INTEGER NOT NULL DEFAULT 0,"
	"  first_seen_usec INTEGER NOT NULL,"
	"  last_update_usec INTEGER NOT NULL,"
	"  PRIMARY KEY (boot_id, pfn)"
	") WITHOUT ROWID;"
	"CREATE INDEX poisoned_pages_pfn ON poisoned_pages (pfn);"
	"CREATE INDEX poisoned_pages_head ON poisoned_pages (boot_id, head_pfn);"
	"CREATE TABLE events ("
	"  id INTEGER PRIMARY KEY,"
	"  time_usec INTEGER NOT NULL,"
	"  boot_id TEXT NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  pfn INTEGER,"
	"  head_pfn INTEGER,"
	"  inode INTEGER,"
	"  generation INTEGER,"
	"  detail TEXT"
	");"
	"CREATE INDEX events_time ON events (time_usec);",
	/* 1 -> 2: memory identity (physical address, DIMM) */
	"ALTER TABLE poisoned_pages ADD COLUMN phys_addr INTEGER;"
	"ALTER TABLE poisoned_pages ADD COLUMN dimm TEXT;"
	"ALTER TABLE poisoned_pages ADD COLUMN dimm_id TEXT;",
	/* 2 -> 3: store incidents, kept until an operator acknowledges them */
	"CREATE TABLE store_incidents ("
	"  id INTEGER PRIMARY KEY,"
	"  time_usec INTEGER NOT NULL,"
	"  boot_id TEXT NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  error TEXT,"
	"  moved_to TEXT,"
	"  salvaged INTEGER,"
	"  acked_usec INTEGER"
	");",
};

/*
 * ?1 boot id, ?2 pfn, ?3..?13 the fields (NULL when unknown), ?14 now.
 * The WHERE makes a replay that brings nothing new a no-op.
 */
#define UPSERT_SQL							\
	"INSERT INTO poisoned_pages (boot_id, pfn, head_pfn, folio_size,"\
	" inode, memfd_name, pid, comm, cgroup_id, cgroup_path, \"offset\","\
	" state, times_consumed, first_seen_usec, last_update_usec)"	\
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11,"	\
	" coalesce(?12, 'kept'), coalesce(?13, 0), ?14, ?14)"		\
	" ON CONFLICT (boot_id, pfn) DO UPDATE SET"			\
	" head_pfn = coalesce(?3, head_pfn),"				\
	" folio_size = coalesce(?4, folio_size),"			\
	" inode = coalesce(?5, inode),"					\
	" memfd_name = coalesce(?6, memfd_name),"			\
	" pid = coalesce(?7, pid),"					\
	" comm = coalesce(?8, comm),"					\
	" cgroup_id = coalesce(?9, cgroup_id),"				\
	" cgroup_path = coalesce(?10, cgroup_path),"			\
	" \"offset\" = coalesce(?11, \"offset\"),"			\
	" state = coalesce(?12, state),"				\
	" times_consumed = max(times_consumed, coalesce(?13, 0)),"	\
	" last_update_usec = ?14"					\
	" WHERE coalesce(?3, head_pfn) IS NOT head_pfn"			\
	" OR coalesce(?4, folio_size) IS NOT folio_size"		\
	" OR coalesce(?5, inode) IS NOT inode"				\
	" OR coalesce(?6, memfd_name) IS NOT memfd_name"		\
	" OR coalesce(?7, pid) IS NOT pid"				\
	" OR coalesce(?8, comm) IS NOT comm"				\
	" OR coalesce(?9, cgroup_id) IS NOT cgroup_id"			\
	" OR coalesce(?10, cgroup_path) IS NOT cgroup_path"		\
	" OR coalesce(?11, \"offset\") IS NOT \"offset\""		\
	" OR coalesce(?12, state) IS NOT state"				\
	" OR coalesce(?13, 0) > times_consumed"

enum stmt {
	ST_BEGIN, ST_COMMIT, ST_ROLLBACK, ST_UPSERT, ST_FOLIO_STATE, ST_EVENT,
	ST_EARLIER, ST_COUNT, ST_HAS_PAGE, ST_PRUNE_AGE, ST_PRUNE_ROWS,
	ST_COUNT_EVENTS, ST_UNIDENTIFIED, ST_SET_IDENTITY, ST_EARLIER_ID,
	ST_INCIDENT, ST_UNACKED, ST_DATA_VERSION, ST_NR
};

static const char *const stmt_sql[ST_NR] = {
	[ST_BEGIN] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_UPSERT] = UPSERT_SQL,
	[ST_FOLIO_STATE] =
		"UPDATE poisoned_pages SET state = ?3, last_update_usec = ?4"
		" WHERE boot_id = ?1 AND head_pfn = ?2 AND state IS NOT ?3"
		/* As the module: a page past the budget stays so until offlined. */
		" AND NOT (state = 'fallback' AND ?3 = 'pending')",
	[ST_EVENT] =
		"INSERT INTO events (time_usec, boot_id, kind, pfn, head_pfn,"
		" inode, generation, detail)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[ST_EARLIER] =
		"SELECT DISTINCT pfn FROM poisoned_pages WHERE boot_id != ?1"
		" ORDER BY pfn",
	[ST_COUNT] =
		"SELECT state, count(*) FROM poisoned_pages WHERE boot_id = ?1"
		" GROUP BY state",
	[ST_HAS_PAGE] =
		"SELECT 1 FROM poisoned_pages WHERE boot_id = ?1 AND pfn = ?2",
	[ST_PRUNE_AGE] = "DELETE FROM events WHERE time_usec < ?1",
	/* ids only grow: the newest max_rows have the highest ids */
	[ST_PRUNE_ROWS] =
		"DELETE FROM events WHERE id <= (SELECT id FROM events"
		" ORDER BY id DESC LIMIT 1 OFFSET ?1)",
	[ST_COUNT_EVENTS] = "SELECT count(*) FROM events",
	/* Moves when another connection (mfrctl forget) commits. */
	[ST_DATA_VERSION] = "PRAGMA data_version",
	[ST_UNIDENTIFIED] =
		"SELECT pfn FROM poisoned_pages WHERE boot_id = ?1"
		" AND phys_addr IS NULL ORDER BY pfn LIMIT ?2",
	[ST_SET_IDENTITY] =
		"UPDATE poisoned_pages SET phys_addr = ?3, dimm = ?4, dimm_id = ?5"
		" WHERE boot_id = ?1 AND pfn = ?2",
	/* per pfn, the identity of its newest record */
	[ST_EARLIER_ID] =
		"SELECT pfn, dimm, dimm_id FROM poisoned_pages p"
		" WHERE boot_id != ?1 AND last_update_usec = (SELECT"
		" max(last_update_usec) FROM poisoned_pages q"
		" WHERE q.pfn = p.pfn AND q.boot_id != ?1)"
		" GROUP BY pfn ORDER BY pfn",
	[ST_INCIDENT] =
		"INSERT INTO store_incidents (time_usec, boot_id, kind, error,"
		" moved_to, salvaged) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
	[ST_UNACKED] =
		"SELECT count(*) FROM store_incidents WHERE acked_usec IS NULL",
};

struct mfrd_store {
	sqlite3 *db;
	char *boot_id;
	sqlite3_stmt *st[ST_NR];
	char err[512];
	enum mfrd_store_fault fault;	/* of the last failure */
	bool full;			/* ... was SQLITE_FULL */
};

/* Only a damaged file is CORRUPT; anything else may pass or be fixed. */
static enum mfrd_store_fault fault_of(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		return MFRD_STORE_CORRUPT;
	case SQLITE_BUSY:
		return MFRD_STORE_LOCKED;
	default:
		return MFRD_STORE_UNAVAILABLE;
	}
}

static int fail(struct mfrd_store *s, const char *what)
{
	snprintf(s->err, sizeof(s->err), "%s: %s", what, sqlite3_errmsg(s->db));
	s->fault = fault_of(sqlite3_extended_errcode(s->db));
	s->full = (sqlite3_extended_errcode(s->db) & 0xff) == SQLITE_FULL;
	return -1;
}

const char *mfrd_store_error(const struct mfrd_store *s)
{
	return s->err;
}

bool mfrd_store_locked(const struct mfrd_store *s)
{
	return s->fault == MFRD_STORE_LOCKED;
}

enum mfrd_store_fault mfrd_store_fault(const struct mfrd_store *s)
{
	return s->fault;
}

bool mfrd_store_full(const struct mfrd_store *s)
{
	return s->full;
}

/* Run a statement to completion and reset it; bindings are cleared. */
static int run(struct mfrd_store *s, enum stmt i, const char *what)
{
	sqlite3_stmt *st = s->st[i];
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : fail(s, what);
}

int mfrd_store_schema_version(struct mfrd_store *s)
{
	sqlite3_stmt *st;
	int v = -1;

	/* Not kept prepared: read once per open. */
	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL))
		return fail(s, "user_version");
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int exec(struct mfrd_store *s, const char *sql, const char *what)
{
	return sqlite3_exec(s->db, sql, NULL, NULL, NULL) ? fail(s, what) : 0;
}

/* Bring the schema to MFRD_STORE_SCHEMA_VERSION, one step per migration. */
static int migrate(struct mfrd_store *s)
{
	char sql[64];
	int v;

	/* IMMEDIATE: a second opener waits instead of migrating twice. */
	if (exec(s, "BEGIN IMMEDIATE", "migration"))
		return -1;
	v = mfrd_store_schema_version(s);
	if (v < 0)
		goto rollback;
	if (v > MFRD_STORE_SCHEMA_VERSION) {
		snprintf(s->err, sizeof(s->err),
			 "database schema version %d is newer than this mfrd's (%d)",
			 v, MFRD_STORE_SCHEMA_VERSION);
		s->fault = MFRD_STORE_NEWER;
		goto rollback;
	}
	for (; v < MFRD_STORE_SCHEMA_VERSION; v++) {
		if (exec(s, migrations[v], "migration"))
			goto rollback;
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v + 1);
		if (exec(s, sql, "migration"))
			goto rollback;
	}
	return exec(s, "COMMIT", "migration");
rollback:
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

/* The errors quick_check reports, at most this many, in the message. */
#define QUICK_CHECK_LINES	"8"

/*
 * quick_check's answer: "ok", or one line per problem, the first of which
 * ("*** in database main ***") says nothing alone.  All of them go into
 * the error, as far as it holds them.
 */
static int quick_check(struct mfrd_store *s, sqlite3_stmt *st,
		       const char *path)
{
	size_t n;
	int rc;

	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW &&
	    !strcmp((const char *)sqlite3_column_text(st, 0), "ok"))
		return 0;
	if (rc != SQLITE_ROW) {
		/* A read that failed (I/O, busy) says nothing of the file. */
		snprintf(s->err, sizeof(s->err), "%s: integrity check failed: %s",
			 path, sqlite3_errmsg(s->db));
		s->fault = fault_of(sqlite3_extended_errcode(s->db));
		return -1;
	}
	n = (size_t)snprintf(s->err, sizeof(s->err), "%s: integrity check failed:",
			     path);
	for (; rc == SQLITE_ROW && n < sizeof(s->err); rc = sqlite3_step(st))
		n += (size_t)snprintf(s->err + n, sizeof(s->err) - n, " %s;",
				      (const char *)sqlite3_column_text(st, 0));
	if (n < sizeof(s->err) && s->err[n - 1] == ';')
		s->err[n - 1] = '\0';
	/* One line: its first alone ("*** in database main ***") says little. */
	for (char *c = s->err; *c; c++)
		if (*c == '\n')
			*c = ' ';
	s->fault = MFRD_STORE_CORRUPT;
	return -1;
}

static int setup(struct mfrd_store *s, const char *path)
{
	sqlite3_stmt *st;
	bool wal;
	int rc;

	s->fault = MFRD_STORE_UNAVAILABLE;
	rc = mfrd_store_vfs_init();
	if (rc) {
		snprintf(s->err, sizeof(s->err), "%s: no SQLite VFS: %s", path,
			 sqlite3_errstr(rc));
		return -1;
	}
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE |
			    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
			    MFRD_STORE_VFS))
		return s->db ? fail(s, path) :
		       (snprintf(s->err, sizeof(s->err), "%s: out of memory",
				 path), -1);
	/*
	 * Short: mfrctl's writes take milliseconds, and a longer hold (an
	 * operator's sqlite3 shell in BEGIN EXCLUSIVE) must not stop mfrd's
	 * loop; the caller puts the records aside and retries on a timer.
	 */
	sqlite3_busy_timeout(s->db, MFRD_STORE_BUSY_TIMEOUT_MS);
	if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode = WAL", -1, &st,
			       NULL))
		return fail(s, path);
	/* In memory (mfrd's last resort when no file store works): no WAL. */
	wal = sqlite3_step(st) == SQLITE_ROW &&
	      (!sqlite3_stricmp((const char *)sqlite3_column_text(st, 0),
				"wal") || !strcmp(path, MFRD_STORE_IN_MEMORY));
	sqlite3_finalize(st);
	if (!wal) {
		snprintf(s->err, sizeof(s->err), "%s: cannot use WAL mode: %s",
			 path, sqlite3_errmsg(s->db));
		s->fault = fault_of(sqlite3_extended_errcode(s->db));
		return -1;
	}
	/*
	 * FULL: a memory error may well be followed by a machine check that
	 * resets the host, and the record of it must already be on disk.
	 */
	if (exec(s, "PRAGMA synchronous = FULL", "synchronous") || migrate(s))
		return -1;
	/* A damaged file must be found now, not at the first error. */
	if (sqlite3_prepare_v2(s->db, "PRAGMA quick_check(" QUICK_CHECK_LINES ")",
			       -1, &st, NULL))
		return fail(s, path);
	rc = quick_check(s, st, path);
	sqlite3_finalize(st);
	if (rc)
		return -1;
	for (int i = 0; i < ST_NR; i++)
		if (sqlite3_prepare_v3(s->db, stmt_sql[i], -1,
				       SQLITE_PREPARE_PERSISTENT, &s->st[i],
				       NULL))
			return fail(s, "prepare");
	return 0;
}

int mfrd_store_open(const char *path, const char *boot_id,
		    struct mfrd_store **sp, char **errmsg,
		    enum mfrd_store_fault *fault)
{
	struct mfrd_store *s = calloc(1, sizeof(*s));

	*errmsg = NULL;
	if (fault)
		*fault = MFRD_STORE_UNAVAILABLE;
	if (!s || !(s->boot_id = strdup(boot_id))) {
		free(s);
		*errmsg = strdup("out of memory");
		return -1;
	}
	if (setup(s, path)) {
		*errmsg = strdup(s->err);
		if (fault)
			*fault = s->fault;
		mfrd_store_close(s);
		return -1;
	}
	if (fault)
		*fault = MFRD_STORE_OK;
	*sp = s;
	return 0;
}

void mfrd_store_close(struct mfrd_store *s)
{
	if (!s)
		return;
	for (int i = 0; i < ST_NR; i++)
		sqlite3_finalize(s->st[i]);
	sqlite3_close(s->db);
	free(s->boot_id);
	free(s);
}

int mfrd_store_begin(struct mfrd_store *s)
{
	return run(s, ST_BEGIN, "begin");
}

int mfrd_store_commit(struct mfrd_store *s)
{
	return run(s, ST_COMMIT, "commit");
}

int mfrd_store_rollback(struct mfrd_store *s)
{
	return run(s, ST_ROLLBACK, "rollback");
}

void mfrd_store_rollback_quietly(struct mfrd_store *s)
{
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

/* Bind helpers: a field the caller does not know stays NULL. */
static void bind_u64(sqlite3_stmt *st, int i, bool known, uint64_t v)
{
	if (known)
		sqlite3_bind_int64(st, i, (sqlite3_int64)v);
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
}

static const char *state_name(struct mfrd_store *s, uint32_t state)
{
	const char *name = mfr_enum_name(&mfr_page_state_enum, state);

	if (!name)
		snprintf(s->err, sizeof(s->err), "unknown page state %u",
			 state);
	return name;
}

int mfrd_store_put_page(struct mfrd_store *s, const struct mfrd_page *p,
			int64_t now_usec)
{
	sqlite3_stmt *st = s->st[ST_UPSERT];
	const char *state = NULL;

	/* A state newer than this mfrd: the record without it, not a failure. */
	if (p->has & MFRD_HAS_STATE)
		state = mfr_enum_name(&mfr_page_state_enum, p->state);
	sqlite3_bind_text(st, 1, s->boot_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)p->pfn);
	bind_u64(st, 3, p->has & MFRD_HAS_HEAD_PFN, p->head_pfn);
	bind_u64(st, 4, p->has & MFRD_HAS_FOLIO_SIZE, p->folio_size);
	bind_u64(st, 5, p->has & MFRD_HAS_INODE, p->inode);
	bind_text(st, 6, p->memfd_name);
	bind_u64(st, 7, p->has & MFRD_HAS_PID, p->pid);
	bind_text(st, 8, p->comm);
	bind_u64(st, 9, p->has & MFRD_HAS_CGROUP_ID, p->cgroup_id);
	bind_text(st, 10, p->cgroup_path);
	bind_u64(st, 11, p->has & MFRD_HAS_OFFSET, p->offset);
	bind_text(st, 12, state);
	bind_u64(st, 13, p->has & MFRD_HAS_TIMES_CONSUMED, p->times_consumed);
	sqlite3_bind_int64(st, 14, now_usec);
	return run(s, ST_UPSERT, "put page");
}

int mfrd_store_set_folio_state(struct mfrd_store *s, uint64_t head_pfn,
			       uint32_t state, int64_t now_usec)
{
	sqlite3_stmt *st = s->st[ST_FOLIO_STATE];
	const char *name = state_name(s, state);

	if (!name)
		return -1;
	sqlite3_bind_text(st, 1, s->boot_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)head_pfn);
	sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, now_usec);
	if (run(s, ST_FOLIO_STATE, "set folio state"))
		return -1;
	return sqlite3_changes(s->db);
}

int mfrd_store_log_event(struct mfrd_store *s, const struct mfrd_event *e)
{
	sqlite3_stmt *st = s->st[ST_EVENT];

	sqlite3_bind_int64(st, 1, e->time_usec);
	sqlite3_bind_text(st, 2, s->boot_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, e->kind, -1, SQLITE_STATIC);
	bind_u64(st, 4, e->has & MFRD_HAS_PFN, e->pfn);
	bind_u64(st, 5, e->has & MFRD_HAS_HEAD_PFN, e->head_pfn);
	bind_u64(st, 6, e->has & MFRD_HAS_INODE, e->inode);
	bind_u64(st, 7, e->has & MFRD_HAS_GENERATION, e->generation);
	bind_text(st, 8, e->detail);
	return run(s, ST_EVENT, "log event");
}

int mfrd_store_earlier_pfns(struct mfrd_store *s, uint64_t **pfns,
			    size_t *n)
{
	sqlite3_stmt *st = s->st[ST_EARLIER];
	uint64_t *v = NULL, *nv;
	size_t cnt = 0, cap = 0;
	int rc;

	sqlite3_bind_text(st, 1, s->boot_id, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		nv = mfrd_grow(v, &cap, cnt, sizeof(*v));
		if (!nv) {
			rc = SQLITE_NOMEM;
			break;
		}
		v = nv;
		v[cnt++] = (uint64_t)sqlite3_column_int64(st, 0);
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE) {
		free(v);
		if (rc == SQLITE_NOMEM)
			snprintf(s->err, sizeof(s->err),
				 "earlier pfns: out of memory");
		else
			fail(s, "earlier pfns");
		return -1;
	}
	*pfns = v;
	*n = cnt;
	return 0;
}

int mfrd_store_count_states(struct mfrd_store *s,
			    uint64_t counts[MFRD_PAGE_STATES])
{
	sqlite3_stmt *st = s->st[ST_COUNT];
	int rc, state;

	memset(counts, 0, MFRD_PAGE_STATES * sizeof(*counts));
	sqlite3_bind_text(st, 1, s->boot_id, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		state = mfr_enum_value(&mfr_page_state_enum,
				       (const char *)sqlite3_column_text(st, 0));
		/* The CHECK constraint keeps other names out. */
		if (state >= 0 && state < MFRD_PAGE_STATES)
			counts[state] = (uint64_t)sqlite3_column_int64(st, 1);
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : fail(s, "count states");
}

int mfrd_store_has_page(struct mfrd_store *s, uint64_t pfn)
{
	sqlite3_stmt *st = s->st[ST_HAS_PAGE];
	int rc;

	sqlite3_bind_text(st, 1, s->boot_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)pfn);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc == SQLITE_ROW)
		return 1;
	return rc == SQLITE_DONE ? 0 : fail(s, "has page");
}

int mfrd_store_last_changes(struct mfrd_store *s)
{
	return sqlite3_changes(s->db);
}

int64_t mfrd_store_prune_events(struct mfrd_store *s, int64_t before_usec,
				uint64_t max_rows)
{
	int64_t n = 0;

	if (before_usec > 0) {
		sqlite3_bind_int64(s->st[ST_PRUNE_AGE], 1, before_usec);
		if (run(s, ST_PRUNE_AGE, "prune events by age"))
			return -1;
		n += sqlite3_changes(s->db);
	}
	if (max_rows) {
		sqlite3_bind_int64(s->st[ST_PRUNE_ROWS], 1, (int64_t)max_rows);
		if (run(s, ST_PRUNE_ROWS, "prune events by count"))
			return -1;
		n += sqlite3_changes(s->db);
	}
	return n;
}

/* The one integer statement @i answers, or -1 (said through fail()). */
static int64_t scalar(struct mfrd_store *s, enum stmt i, const char *what)
{
	sqlite3_stmt *st = s->st[i];
	int64_t v = -1;

	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	else
		fail(s, what);
	sqlite3_reset(st);
	return v;
}

int64_t mfrd_store_data_version(struct mfrd_store *s)
{
	return scalar(s, ST_DATA_VERSION, "read the data version");
}

int64_t mfrd_store_count_events(struct mfrd_store *s)
{
	sqlite3_stmt *st = s->st[ST_COUNT_EVENTS];
	int64_t n = -1;
	int rc;

	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	else
		fail(s, "count events");
	sqlite3_reset(st);
	return n;
}

int mfrd_store_identify_pages(struct mfrd_store *s, mfrd_identify_fn identify,
			      void *arg, size_t max)
{
	sqlite3_stmt *st = s->st[ST_UNIDENTIFIED];
	uint64_t *pfns = NULL, *nv, phys;
	size_t n = 0, cap = 0, i;
	const char *dimm, *dimm_id;
	int rc, set = 0;

	sqlite3_bind_text(st, 1, s->boot_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, max > INT64_MAX ? INT64_MAX : (sqlite3_int64)max);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		nv = mfrd_grow(pfns, &cap, n, sizeof(*nv));
		if (!nv)
			abort();
		pfns = nv;
		pfns[n++] = (uint64_t)sqlite3_column_int64(st, 0);
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_DONE) {
		free(pfns);
		return fail(s, "pages without identity");
	}
	for (i = 0; i < n; i++) {
		st = s->st[ST_SET_IDENTITY];
		phys = pfns[i] << 12;
		dimm = dimm_id = NULL;
		identify(pfns[i], &phys, &dimm, &dimm_id, arg);
		sqlite3_bind_text(st, 1, s->boot_id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)pfns[i]);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)phys);
		bind_text(st, 4, dimm);
		bind_text(st, 5, dimm_id);
		if (run(s, ST_SET_IDENTITY, "set identity")) {
			free(pfns);
			return -1;
		}
		set++;
	}
	free(pfns);
	return set;
}

static char *column_dup(sqlite3_stmt *st, int i)
{
	const char *t = (const char *)sqlite3_column_text(st, i);
	char *d;

	if (!t)
		return NULL;
	d = strdup(t);
	if (!d)
		abort();
	return d;
}

void mfrd_store_earlier_free(struct mfrd_earlier *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].dimm);
		free(v[i].dimm_id);
	}
	free(v);
}

/* The rows of an earlier-pfns query (pfn, dimm, dimm_id); an SQLite code. */
static int collect_earlier(sqlite3_stmt *st, struct mfrd_earlier **vp,
			   size_t *np)
{
	struct mfrd_earlier *v = NULL, *nv;
	size_t n = 0, cap = 0;
	int rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		nv = mfrd_grow(v, &cap, n, sizeof(*nv));
		if (!nv)
			abort();
		v = nv;
		v[n].pfn = (uint64_t)sqlite3_column_int64(st, 0);
		v[n].dimm = column_dup(st, 1);
		v[n].dimm_id = column_dup(st, 2);
		n++;
	}
	if (rc != SQLITE_DONE) {
		mfrd_store_earlier_free(v, n);
		return rc;
	}
	*vp = v;
	*np = n;
	return SQLITE_DONE;
}

int mfrd_store_earlier(struct mfrd_store *s, struct mfrd_earlier **vp,
		       size_t *np)
{
	sqlite3_stmt *st = s->st[ST_EARLIER_ID];
	int rc;

	sqlite3_bind_text(st, 1, s->boot_id, -1, SQLITE_STATIC);
	rc = collect_earlier(st, vp, np);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : fail(s, "earlier pfns");
}

int mfrd_store_open_readonly(const char *path, bool immutable, sqlite3 **db)
{
	char *uri;
	int rc;
	FILE *f;
	size_t size = 0;

	/* A file: URI, with the characters URIs give a meaning escaped. */
	f = open_memstream(&uri, &size);
	if (!f)
		abort();
	fputs("file:", f);
	for (const char *c = path; *c; c++)
		if (*c == '%' || *c == '?' || *c == '#')
			fprintf(f, "%%%02X", (unsigned char)*c);
		else
			fputc(*c, f);
	fputs(immutable ? "?immutable=1" : "?mode=ro", f);
	if (fclose(f))
		abort();
	*db = NULL;
	rc = mfrd_store_vfs_init();
	if (rc == SQLITE_OK)
		rc = sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY |
				     SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX,
				     MFRD_STORE_VFS);
	free(uri);
	if (rc == SQLITE_OK)
		sqlite3_busy_timeout(*db, MFRD_STORE_BUSY_TIMEOUT_MS);
	return rc;
}

#define COPY_SQL							\
	"INSERT OR IGNORE INTO poisoned_pages (boot_id, pfn, state,"	\
	" first_seen_usec, last_update_usec, phys_addr, dimm, dimm_id)"	\
	" VALUES (coalesce(?1, 'salvaged'), ?2,"			\
	" CASE WHEN ?3 IN ('kept', 'pending', 'offlined', 'fallback')"	\
	" THEN ?3 ELSE 'kept' END, coalesce(?4, ?9), coalesce(?5, ?4, ?9),"\
	" ?6, ?7, ?8)"

/*
 * What to read from another store, best first: whole rows (schema 2 and
 * later, then 1), then the pfn index alone, which holds (pfn, boot id)
 * and may survive a damaged table.  Each is read as far as it goes.
 */
static const char *const copy_reads[] = {
	"SELECT boot_id, pfn, state, first_seen_usec, last_update_usec,"
	" phys_addr, dimm, dimm_id FROM poisoned_pages",
	"SELECT boot_id, pfn, state, first_seen_usec, last_update_usec,"
	" NULL, NULL, NULL FROM poisoned_pages",
	"SELECT boot_id, pfn, NULL, NULL, NULL, NULL, NULL, NULL"
	" FROM poisoned_pages INDEXED BY poisoned_pages_pfn",
};

/* Copy the rows of read into s; -2 if s failed, else the rows added. */
static int64_t copy_rows(struct mfrd_store *s, sqlite3_stmt *read,
			 sqlite3_stmt *ins)
{
	int64_t added = 0;
	int64_t now = (int64_t)time(NULL) * 1000000;

	while (sqlite3_step(read) == SQLITE_ROW) {
		if (sqlite3_column_type(read, 1) != SQLITE_INTEGER)
			continue;
		for (int i = 0; i < 8; i++)
			sqlite3_bind_value(ins, i + 1,
					   sqlite3_column_value(read, i));
		sqlite3_bind_int64(ins, 9, now);
		if (sqlite3_step(ins) != SQLITE_DONE) {
			sqlite3_reset(ins);
			fail(s, "copy pages");
			return -2;
		}
		added += sqlite3_changes(s->db);
		sqlite3_reset(ins);
	}
	return added;
}

/*
 * Copy what can be read of path into s; returns the rows added (or -2 if
 * s failed) and in *read whether any query of it could be run at all.
 */
static int64_t copy_from(struct mfrd_store *s, sqlite3_stmt *ins,
			 const char *path, bool immutable, bool *read_any)
{
	sqlite3_stmt *read;
	int64_t total = 0, added = 0;
	bool table_read = false;
	sqlite3 *db = NULL;

	*read_any = false;
	if (mfrd_store_open_readonly(path, immutable, &db) != SQLITE_OK) {
		sqlite3_close(db);
		return 0;
	}
	for (size_t i = 0; added >= 0 &&
	     i < sizeof(copy_reads) / sizeof(*copy_reads); i++) {
		/* Schema 1 is only tried when the newer columns are missing. */
		if (i == 1 && table_read)
			continue;
		if (sqlite3_prepare_v2(db, copy_reads[i], -1, &read, NULL))
			continue;
		table_read |= i == 0;
		*read_any = true;
		added = copy_rows(s, read, ins);
		sqlite3_finalize(read);
		if (added > 0)
			total += added;
	}
	sqlite3_close(db);
	return added < 0 ? -2 : total;
}

/* File from into a new file to; 1 if from does not exist. */
static int copy_file(const char *from, const char *to)
{
	int in, out, ret = 0;
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return errno == ENOENT ? 1 : -1;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = sendfile(out, in, NULL, 1 << 20)) > 0)
		;
	if (n < 0 || close(out))
		ret = -1;
	close(in);
	return ret;
}

char *mfrd_store_private_copy(const char *path)
{
	char *dir = mfrd_runtime_path("store-read.XXXXXX"), *db, *from_wal;
	char *wal;
	int ret;

	if (!mkdtemp(dir)) {
		free(dir);
		return NULL;
	}
	if (asprintf(&db, "%s/store.db", dir) < 0 ||
	    asprintf(&wal, "%s-wal", db) < 0 ||
	    asprintf(&from_wal, "%s-wal", path) < 0)
		abort();
	/* The WAL first: see mfrd-store.h. */
	ret = copy_file(from_wal, wal);
	if (ret >= 0)
		ret = copy_file(path, db);
	free(from_wal);
	free(wal);
	free(dir);
	if (ret) {
		mfrd_store_private_copy_remove(db);
		return NULL;
	}
	return db;
}

void mfrd_store_remove_files(const char *path)
{
	static const char *const suffixes[] = { "", "-wal", "-shm" };
	char *f;

	for (size_t i = 0; i < sizeof(suffixes) / sizeof(*suffixes); i++) {
		if (asprintf(&f, "%s%s", path, suffixes[i]) < 0)
			abort();
		unlink(f);
		free(f);
	}
}

void mfrd_store_private_copy_remove(char *copy)
{
	char *slash;

	if (!copy)
		return;
	mfrd_store_remove_files(copy);
	slash = strrchr(copy, '/');
	if (slash) {
		*slash = '\0';
		rmdir(copy);
	}
	free(copy);
}

/*
 * Copy what can be read of path through a private copy of it: where the
 * file's disk has no room for the WAL index a reader needs, and the file
 * alone would miss the records still in the WAL.
 */
static int64_t copy_from_copy(struct mfrd_store *s, sqlite3_stmt *ins,
			      const char *path, bool *read_any)
{
	char *copy = mfrd_store_private_copy(path);
	int64_t total;

	*read_any = false;
	if (!copy)
		return 0;
	total = copy_from(s, ins, copy, false, read_any);
	mfrd_store_private_copy_remove(copy);
	return total;
}

int64_t mfrd_store_copy_pages(struct mfrd_store *s, const char *path)
{
	sqlite3_stmt *ins;
	int64_t total;
	bool read_any;

	if (sqlite3_prepare_v2(s->db, COPY_SQL, -1, &ins, NULL))
		return fail(s, "copy pages"), -2;
	if (mfrd_store_begin(s)) {
		sqlite3_finalize(ins);
		return -2;
	}
	total = copy_from(s, ins, path, false, &read_any);
	if (total == 0 && !read_any)
		total = copy_from_copy(s, ins, path, &read_any);
	/*
	 * Nothing readable through SQLite's locks and WAL (a read-only
	 * directory without the -shm, writes refused): the file alone.
	 */
	if (total == 0 && !read_any)
		total = copy_from(s, ins, path, true, &read_any);
	sqlite3_finalize(ins);
	if (total >= 0 && !read_any) {
		/* Unknown, not none: nothing of the file could be read. */
		snprintf(s->err, sizeof(s->err), "%s: no page records readable",
			 path);
		total = -1;
	}
	if (total == -2 || (total >= 0 && mfrd_store_commit(s))) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -2;
	}
	if (total < 0)
		mfrd_store_rollback(s);
	return total;
}

int mfrd_store_add_incident(struct mfrd_store *s, int64_t time_usec,
			    const char *kind, const char *error,
			    const char *moved_to, int64_t salvaged)
{
	sqlite3_stmt *st = s->st[ST_INCIDENT];

	sqlite3_bind_int64(st, 1, time_usec);
	sqlite3_bind_text(st, 2, s->boot_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, kind, -1, SQLITE_STATIC);
	bind_text(st, 4, error);
	bind_text(st, 5, moved_to);
	if (salvaged >= 0)
		sqlite3_bind_int64(st, 6, salvaged);
	return run(s, ST_INCIDENT, "store incident");
}

int64_t mfrd_store_unacked_incidents(struct mfrd_store *s)
{
	return scalar(s, ST_UNACKED, "store incidents");
}

/*
 * One store's rows into another of the same connection ("%1$s" the one
 * written, "%2$s" the one read; one of them attached).  Pages: the newer
 * record of a page wins, unknown fields keep what the written one knows.
 */
static const char *const merge_sql[] = {
	"INSERT INTO %1$s.poisoned_pages (boot_id, pfn, head_pfn,"
	" folio_size, inode, memfd_name, pid, comm, cgroup_id, cgroup_path,"
	" \"offset\", state, times_consumed, first_seen_usec,"
	" last_update_usec, phys_addr, dimm, dimm_id)"
	" SELECT boot_id, pfn, head_pfn, folio_size, inode, memfd_name, pid,"
	" comm, cgroup_id, cgroup_path, \"offset\", state, times_consumed,"
	" first_seen_usec, last_update_usec, phys_addr, dimm, dimm_id"
	" FROM %2$s.poisoned_pages WHERE true"
	" ON CONFLICT (boot_id, pfn) DO UPDATE SET"
	" head_pfn = coalesce(excluded.head_pfn, head_pfn),"
	" folio_size = coalesce(excluded.folio_size, folio_size),"
	" inode = coalesce(excluded.inode, inode),"
	" memfd_name = coalesce(excluded.memfd_name, memfd_name),"
	" pid = coalesce(excluded.pid, pid),"
	" comm = coalesce(excluded.comm, comm),"
	" cgroup_id = coalesce(excluded.cgroup_id, cgroup_id),"
	" cgroup_path = coalesce(excluded.cgroup_path, cgroup_path),"
	" \"offset\" = coalesce(excluded.\"offset\", \"offset\"),"
	" state = excluded.state,"
	" times_consumed = max(times_consumed, excluded.times_consumed),"
	" first_seen_usec = min(first_seen_usec, excluded.first_seen_usec),"
	" last_update_usec = excluded.last_update_usec,"
	" phys_addr = coalesce(excluded.phys_addr, phys_addr),"
	" dimm = coalesce(excluded.dimm, dimm),"
	" dimm_id = coalesce(excluded.dimm_id, dimm_id)"
	" WHERE excluded.last_update_usec > last_update_usec",
	/* The memory identity, written where it is missing, moves no time. */
	"UPDATE %1$s.poisoned_pages AS t SET phys_addr = f.phys_addr,"
	" dimm = f.dimm, dimm_id = f.dimm_id FROM %2$s.poisoned_pages AS f"
	" WHERE t.boot_id = f.boot_id AND t.pfn = f.pfn"
	" AND t.phys_addr IS NULL AND f.phys_addr IS NOT NULL",
	"INSERT INTO %1$s.events (time_usec, boot_id, kind, pfn, head_pfn,"
	" inode, generation, detail) SELECT time_usec, boot_id, kind, pfn,"
	" head_pfn, inode, generation, detail FROM %2$s.events ORDER BY id",
	"INSERT INTO %1$s.store_incidents (time_usec, boot_id, kind, error,"
	" moved_to, salvaged, acked_usec) SELECT time_usec, boot_id, kind,"
	" error, moved_to, salvaged, acked_usec FROM %2$s.store_incidents"
	" ORDER BY id",
};

/* Attach path as "other" and merge main into it (into) or it into main. */
static int merge(struct mfrd_store *s, const char *path, bool into,
		 struct mfrd_store_merged *m)
{
	int64_t identified;
	int64_t *counts[] = { &m->pages, &identified, &m->events,
			      &m->incidents };
	sqlite3_stmt *st;
	char *sql;
	int ret = -1;

	memset(m, 0, sizeof(*m));
	if (sqlite3_prepare_v2(s->db, "ATTACH ?1 AS other", -1, &st, NULL))
		return fail(s, "merge");
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE) {
		fail(s, path);
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	if (exec(s, "BEGIN IMMEDIATE", "merge"))
		goto detach;
	for (size_t i = 0; i < sizeof(merge_sql) / sizeof(*merge_sql); i++) {
		if (asprintf(&sql, merge_sql[i], into ? "other" : "main",
			     into ? "main" : "other") < 0)
			abort();
		ret = exec(s, sql, "merge");
		free(sql);
		if (ret) {
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			goto detach;
		}
		*counts[i] = sqlite3_changes(s->db);
	}
	ret = exec(s, "COMMIT", "merge");
	if (ret)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
detach:
	sqlite3_exec(s->db, "DETACH other", NULL, NULL, NULL);
	if (ret)
		memset(m, 0, sizeof(*m));
	return ret;
}

int mfrd_store_merge_into(struct mfrd_store *s, const char *path,
			  struct mfrd_store_merged *m)
{
	return merge(s, path, true, m);
}

int mfrd_store_merge_from(struct mfrd_store *s, const char *path,
			  struct mfrd_store_merged *m)
{
	return merge(s, path, false, m);
}
