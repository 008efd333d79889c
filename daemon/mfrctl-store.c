// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrctl history|summary|forget: mfrd's store (SQLite, WAL) read and
 * edited while mfrd runs.  Reads open it read-only; forget takes SQLite's
 * write lock (BEGIN IMMEDIATE, waiting up to 10 s for mfrd's own
 * transactions, which are short).  The database is root's (mfrd's
 * StateDirectory is 0700): others get "permission denied".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <strings.h>
#include <sqlite3.h>
#include <systemd/sd-journal.h>

#include "mfr-boot-id.h"
#include "mfr-time.h"
#include "mfrctl.h"
#include "mfrd-log.h"
#include "mfrd-store.h"
#include "mfrd-store-vfs.h"

#define BUSY_MS		10000

/* history: the columns, in the order the query returns them (attr - 1). */
enum hcol { H_BOOT = 1, H_PFN, H_PHYS, H_DIMM, H_MEMFD, H_COMM, H_CGROUP,
	    H_OFFSET, H_STATE, H_CONSUMED, H_FIRST, H_LAST };

const struct column history_cols[] = {
	COLUMN("BOOT", false, H_BOOT, "boot id of the record"),
	COLUMN("PFN", true, H_PFN, "page frame number"),
	COLUMN("PHYS", true, H_PHYS, "physical address"),
	COLUMN("DIMM", false, H_DIMM, "memory device (SMBIOS locator), if known"),
	COLUMN("MEMFD", false, H_MEMFD, "name of the memfd that held it"),
	COLUMN("COMM", false, H_COMM, "command that created the memfd"),
	COLUMN("CGROUP", false, H_CGROUP, "cgroup of the memfd's creator: a VM's scope"),
	COLUMN("OFFSET", true, H_OFFSET, "offset in the memfd"),
	COLUMN("STATE", false, H_STATE, "kept, pending, offlined or fallback"),
	COLUMN("CONSUMED", true, H_CONSUMED, "times a task got SIGBUS for it"),
	COLUMN("FIRST-SEEN", false, H_FIRST, "when it was first recorded (UTC)"),
	COLUMN("LAST-UPDATE", false, H_LAST, "when the record last changed (UTC)"),
};
const size_t history_ncols = ARRAY_SIZE(history_cols);

static const char history_sql[] =
	"SELECT boot_id, pfn, coalesce(phys_addr, pfn * 4096), dimm, memfd_name,"
	" comm, cgroup_path, \"offset\", state, times_consumed, first_seen_usec,"
	" last_update_usec FROM poisoned_pages";

/* How a column's value reads: numbers in hex, times in ISO 8601. */
enum kind { K_TEXT, K_HEX, K_NUMBER, K_TIME };

/*
 * JSON keys that differ from the column title: the names poison list -j
 * (the spec's attributes) uses for the same thing.
 */
static const char *const history_keys[] = {
	[H_CONSUMED] = "times_consumed",
};

static const enum kind history_kinds[] = {
	[H_BOOT] = K_TEXT, [H_PFN] = K_HEX, [H_PHYS] = K_HEX,
	[H_DIMM] = K_TEXT, [H_MEMFD] = K_TEXT, [H_COMM] = K_TEXT,
	[H_CGROUP] = K_TEXT,
	[H_OFFSET] = K_HEX, [H_STATE] = K_TEXT, [H_CONSUMED] = K_NUMBER,
	[H_FIRST] = K_TIME, [H_LAST] = K_TIME,
};

static void iso_time(int64_t usec, char *buf, size_t size)
{
	mfr_time_text(usec, MFR_TIME_SECONDS, buf, size);
}

/* The text of a cell, NULL for SQL NULL; malloc()ed. */
static char *cell_text(sqlite3_stmt *st, int i, enum kind k)
{
	char buf[64], *s;

	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return NULL;
	switch (k) {
	case K_HEX:
		if (asprintf(&s, "0x%" PRIx64,
			     (uint64_t)sqlite3_column_int64(st, i)) < 0)
			return NULL;
		return s;
	case K_TIME:
		iso_time(sqlite3_column_int64(st, i), buf, sizeof(buf));
		return strdup(buf);
	case K_NUMBER:
		break;
	case K_TEXT:
		return table_cell((const char *)sqlite3_column_text(st, i));
	}
	return strdup((const char *)sqlite3_column_text(st, i));
}

/* NULL with *null set for SQL NULL (json-c's null is a NULL object). */
static json_object *cell_json(sqlite3_stmt *st, int i, enum kind k,
			      bool *null)
{
	char buf[64];

	*null = sqlite3_column_type(st, i) == SQLITE_NULL;
	if (*null)
		return NULL;
	switch (k) {
	case K_HEX:
	case K_NUMBER:
		return json_object_new_uint64((uint64_t)sqlite3_column_int64(st, i));
	case K_TIME:
		iso_time(sqlite3_column_int64(st, i), buf, sizeof(buf));
		return json_object_new_string(buf);
	case K_TEXT:
		break;
	}
	return json_text((const char *)sqlite3_column_text(st, i));
}

/* The private copy open_copy() reads, removed when mfrctl exits. */
static char *store_copy;

static void remove_store_copy(void)
{
	mfrd_store_private_copy_remove(store_copy);
	store_copy = NULL;
}

/*
 * A store SQLite cannot read in place: a copy of it and its WAL in
 * mfrd's runtime directory, or else the file alone (immutable), as mfrd
 * reads it in those cases.
 */
static int open_copy(const char *path, sqlite3 **db)
{
	int rc;

	store_copy = mfrd_store_private_copy(path);
	if (store_copy) {
		atexit(remove_store_copy);
		rc = mfrd_store_open_readonly(store_copy, false, db);
		if (rc == SQLITE_OK &&
		    sqlite3_exec(*db, "SELECT count(*) FROM sqlite_schema",
				 NULL, NULL, NULL) == SQLITE_OK)
			return rc;
		sqlite3_close(*db);
	}
	return mfrd_store_open_readonly(path, true, db);
}

/*
 * The store, read-only or for writing.  Read-only, a WAL store whose
 * WAL index SQLite cannot make or map (a read-only /var with the -shm
 * file gone with a clean stop; a full disk) is read from a copy.
 */
static int open_db(struct mfrctl *ctl, bool write, sqlite3 **db)
{
	int flags = write ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
	const char *path = ctl->db_path ?: MFRCTL_DB_PATH;
	int rc;

	/* a missing file is not created: it is not mfrd's store then */
	if (access(path, write ? R_OK | W_OK : R_OK)) {
		fprintf(stderr, "mfrctl: %s: %s: %s\n", ctl->what, path,
			strerror(errno));
		return errno == EACCES || errno == EPERM ? EXIT_DENIED :
		       EXIT_FAILED;
	}
	*db = NULL;
	rc = mfrd_store_vfs_init();
	if (rc == SQLITE_OK)
		rc = sqlite3_open_v2(path, db, flags, MFRD_STORE_VFS);
	if (rc == SQLITE_OK && !write &&
	    sqlite3_exec(*db, "SELECT count(*) FROM sqlite_schema", NULL, NULL,
			 NULL) != SQLITE_OK) {
		sqlite3_close(*db);
		rc = open_copy(path, db);
	}
	if (rc != SQLITE_OK) {
		fprintf(stderr, "mfrctl: %s: %s: %s\n", ctl->what, path,
			*db ? sqlite3_errmsg(*db) : sqlite3_errstr(rc));
		sqlite3_close(*db);
		return EXIT_FAILED;
	}
	sqlite3_busy_timeout(*db, BUSY_MS);
	return EXIT_OK;
}

static int db_fail(struct mfrctl *ctl, sqlite3 *db, const char *what)
{
	fprintf(stderr, "mfrctl: %s: %s: %s\n", ctl->what, what,
		sqlite3_errmsg(db));
	return EXIT_FAILED;
}

/* An integer a query returns, or -1. */
static int query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return v;
}

/*
 * A query of the store failed: say why in the operator's terms.  A store
 * of an older schema (mfrd migrates it when it starts) or a newer one
 * (a newer mfrd wrote it) is mfrd's all the same; "not an mfrd store"
 * only for a database without its tables.
 */
static int store_fail(struct mfrctl *ctl, sqlite3 *db, const char *doing)
{
	char err[512];
	int v, tables;

	snprintf(err, sizeof(err), "%s", sqlite3_errmsg(db));
	v = query_int(db, "PRAGMA user_version");
	tables = query_int(db, "SELECT count(*) FROM sqlite_schema"
			       " WHERE name = 'poisoned_pages'");
	if (v == 0 && tables == 0)
		fprintf(stderr, "mfrctl: %s: not an mfrd store (no poisoned_pages table)\n",
			ctl->what);
	else if (v > 0 && v < MFRD_STORE_SCHEMA_VERSION)
		fprintf(stderr, "mfrctl: %s: the store has schema %d, older than this mfrctl's %d: mfrd migrates it when it starts (%s)\n",
			ctl->what, v, MFRD_STORE_SCHEMA_VERSION, err);
	else if (v > MFRD_STORE_SCHEMA_VERSION)
		fprintf(stderr, "mfrctl: %s: the store has schema %d, newer than this mfrctl's %d: a newer mfrd wrote it (%s)\n",
			ctl->what, v, MFRD_STORE_SCHEMA_VERSION, err);
	else
		fprintf(stderr, "mfrctl: %s: %s: %s\n", ctl->what, doing, err);
	return EXIT_FAILED;
}

/*
 * Rows of st as a table (cols, kinds) or a JSON array, keyed by the
 * column titles in snake_case unless keys (by attr) names one; an SQL
 * NULL is left out, as the netlink listings leave out what the kernel
 * did not send.
 */
static int print_rows(struct mfrctl *ctl, sqlite3 *db, sqlite3_stmt *st,
		      const struct column *cols, size_t ncols,
		      const enum kind *kinds, const char *const *keys,
		      size_t nkeys, const char *columns, json_object **json_out,
		      size_t *rows)
{
	struct libscols_table *tb = NULL;
	size_t shown[ncols], nshown = ncols, i, bad_len;
	json_object *arr = NULL, *obj;
	struct libscols_line *ln;
	const char *bad;
	char key[64], name[32];
	int rc, n;

	if (ctl->json) {
		arr = json_object_new_array();
		if (!arr)
			return -ENOMEM;
	} else {
		n = columns_select(cols, ncols, columns, shown, &bad, &bad_len);
		if (n < 0)
			return -EINVAL;
		nshown = (size_t)n;
		tb = table_new(cols, shown, nshown);
		if (!tb)
			goto nomem;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		++*rows;
		if (arr) {
			obj = json_object_new_object();
			if (!obj || json_append(arr, obj))
				goto nomem;
			for (i = 0; i < ncols; i++) {
				unsigned int a = cols[i].attr;
				bool null;
				json_object *v = cell_json(st, (int)a - 1,
							   kinds[a], &null);

				if (null)
					continue;
				if (a < nkeys && keys[a]) {
					snprintf(key, sizeof(key), "%s", keys[a]);
				} else {
					column_name(&cols[i], name, sizeof(name));
					json_key(name, key, sizeof(key));
				}
				if (json_add(obj, key, v))
					goto nomem;
			}
			continue;
		}
		ln = scols_table_new_line(tb, NULL);
		if (!ln)
			goto nomem;
		for (i = 0; i < nshown; i++) {
			const struct column *c = &cols[shown[i]];
			char *t = cell_text(st, (int)c->attr - 1, kinds[c->attr]);

			if (scols_line_refer_data(ln, i, t ?: strdup("-"))) {
				free(t);
				goto nomem;
			}
		}
	}
	if (rc != SQLITE_DONE) {
		scols_unref_table(tb);
		json_object_put(arr);
		return db_fail(ctl, db, "reading the store");
	}
	if (json_out) {
		*json_out = arr;
	} else if (arr) {
		rc = json_print(arr);
		json_object_put(arr);
		return rc ? EXIT_FAILED : EXIT_OK;
	} else {
		table_print(tb, cols, shown, nshown);
		scols_unref_table(tb);
	}
	return EXIT_OK;
nomem:
	scols_unref_table(tb);
	json_object_put(arr);
	return -ENOMEM;
}

/*
 * The records history and summary look at: " WHERE ..." for the filters
 * given (memfd name glob, cgroup and below, boot, DIMM, first seen since),
 * or "".  Values are bound by filter_bind().
 */
static char *filter_where(const struct mfrctl *ctl)
{
	const char *sep = " WHERE ";
	size_t size = 0;
	char *w = NULL;
	FILE *f = open_memstream(&w, &size);

	if (!f)
		abort();
	if (ctl->name_glob) {
		fprintf(f, "%smemfd_name GLOB :name", sep);
		sep = " AND ";
	}
	if (ctl->cgroup_path) {
		fprintf(f, "%s(cgroup_path = :cgroup OR substr(cgroup_path, 1,"
			" length(:cgroup) + 1) = :cgroup || '/')", sep);
		sep = " AND ";
	}
	if (ctl->forget_boot) {
		fprintf(f, "%sboot_id = :boot", sep);
		sep = " AND ";
	}
	if (ctl->forget_dimm) {
		fprintf(f, "%sdimm = :dimm", sep);
		sep = " AND ";
	}
	if (ctl->given & OPT_SINCE)
		fprintf(f, "%sfirst_seen_usec >= :since", sep);
	if (fclose(f))
		abort();
	return w;
}

static void bind_text_named(sqlite3_stmt *st, const char *name,
			    const char *v, int len)
{
	int i = sqlite3_bind_parameter_index(st, name);

	if (i)
		sqlite3_bind_text(st, i, v, len, SQLITE_TRANSIENT);
}

static void filter_bind(const struct mfrctl *ctl, sqlite3_stmt *st)
{
	size_t len;
	int i;

	bind_text_named(st, ":name", ctl->name_glob, -1);
	if (ctl->cgroup_path) {
		/* "/machine.slice/" is "/machine.slice"; "/" is every cgroup */
		len = strlen(ctl->cgroup_path);
		while (len && ctl->cgroup_path[len - 1] == '/')
			len--;
		bind_text_named(st, ":cgroup", ctl->cgroup_path, (int)len);
	}
	if (ctl->forget_boot) {
		char id[MFR_BOOT_ID_MAX];

		bind_text_named(st, ":boot",
				mfr_boot_id_normal(ctl->forget_boot, id), -1);
	}
	bind_text_named(st, ":dimm", ctl->forget_dimm, -1);
	i = sqlite3_bind_parameter_index(st, ":since");
	if (i)
		sqlite3_bind_int64(st, i, ctl->since_usec);
}

/* "SELECT ... FROM poisoned_pages" + the filters + tail, prepared. */
static int prepare_filtered(const struct mfrctl *ctl, sqlite3 *db,
			    const char *select, const char *tail,
			    sqlite3_stmt **st)
{
	char *where = filter_where(ctl), *sql;
	int rc;

	if (asprintf(&sql, "%s%s%s", select, where, tail) < 0)
		abort();
	free(where);
	rc = sqlite3_prepare_v2(db, sql, -1, st, NULL);
	free(sql);
	if (rc == SQLITE_OK)
		filter_bind(ctl, *st);
	return rc;
}

/* Filters that can leave nothing: history and summary say so. */
#define FILTERS	(OPT_NAME | OPT_CGROUP | OPT_BOOT | OPT_DIMM | OPT_SINCE)

/*
 * Filters given and no record matched: said on stderr, exit 1, so that a
 * name pasted wrongly is not taken for "no error on that VM".
 */
static int nothing_matched(const struct mfrctl *ctl, size_t rows, int ret)
{
	if (ret || rows || !(ctl->given & FILTERS))
		return ret;
	fprintf(stderr, "mfrctl: %s: no record matches the filters:%s%s%s%s%s%s%s%s%s\n",
		ctl->what, ctl->name_glob ? " --name " : "",
		ctl->name_glob ?: "", ctl->cgroup_path ? " --cgroup " : "",
		ctl->cgroup_path ?: "", ctl->forget_boot ? " --boot " : "",
		ctl->forget_boot ?: "", ctl->forget_dimm ? " --dimm " : "",
		ctl->forget_dimm ?: "",
		ctl->given & OPT_SINCE ? " --since ..." : "");
	return EXIT_FAILED;
}

int history_run(struct mfrctl *ctl)
{
	sqlite3_stmt *st;
	size_t rows = 0;
	sqlite3 *db;
	int ret;

	ret = open_db(ctl, false, &db);
	if (ret)
		return ret;
	if (prepare_filtered(ctl, db, history_sql,
			     " ORDER BY first_seen_usec, pfn", &st) != SQLITE_OK) {
		ret = store_fail(ctl, db, "reading the store");
		sqlite3_close(db);
		return ret;
	}
	ret = print_rows(ctl, db, st, history_cols, history_ncols,
			 history_kinds, history_keys, ARRAY_SIZE(history_keys),
			 output_opts.columns, NULL, &rows);
	sqlite3_finalize(st);
	sqlite3_close(db);
	if (ret < 0) {
		fprintf(stderr, "mfrctl: %s: %s\n", ctl->what, strerror(-ret));
		return EXIT_FAILED;
	}
	return nothing_matched(ctl, rows, ret);
}

/* summary: one section per grouping. */
static const struct column dimm_cols[] = {
	COLUMN("DIMM", false, 1, "memory device; - if the host does not tell"),
	COLUMN("PAGES", true, 2, "distinct poisoned pfns"),
	COLUMN("BOOTS", true, 3, "boots they were seen in"),
	COLUMN("FIRST-SEEN", false, 4, "first record"),
	COLUMN("LAST-SEEN", false, 5, "last record"),
};
static const enum kind dimm_kinds[] = { K_TEXT, K_TEXT, K_NUMBER, K_NUMBER,
					K_TIME, K_TIME };
static const struct column owner_cols[] = {
	COLUMN("COMM", false, 1, "command that created the memfd"),
	COLUMN("MEMFD", false, 2, "memfd name"),
	COLUMN("PAGES", true, 3, "poisoned pages"),
	COLUMN("CONSUMED", true, 4, "SIGBUS sent for them"),
};
static const enum kind owner_kinds[] = { K_TEXT, K_TEXT, K_TEXT, K_NUMBER,
					 K_NUMBER };
static const struct column cgroup_cols[] = {
	COLUMN("CGROUP", false, 1, "cgroup of the memfd's creator: a VM's scope"),
	COLUMN("COMM", false, 2, "command that created the memfd"),
	COLUMN("PAGES", true, 3, "poisoned pages"),
	COLUMN("CONSUMED", true, 4, "SIGBUS sent for them"),
	COLUMN("LAST-SEEN", false, 5, "last record"),
};
static const enum kind cgroup_kinds[] = { K_TEXT, K_TEXT, K_TEXT, K_NUMBER,
					  K_NUMBER, K_TIME };
static const struct column boot_cols[] = {
	COLUMN("BOOT", false, 1, "boot id"),
	COLUMN("PAGES", true, 2, "poisoned pages"),
	COLUMN("FIRST-SEEN", false, 3, "first record"),
	COLUMN("LAST-SEEN", false, 4, "last record"),
};
static const enum kind boot_kinds[] = { K_TEXT, K_TEXT, K_NUMBER, K_TIME,
					K_TIME };

/* One JSON vocabulary: the key history -j and poison list -j use. */
static const char *const consumed_key[] = { [4] = "times_consumed" };

static const struct {
	const char *title, *key, *select, *tail;
	const struct column *cols;
	size_t ncols;
	const enum kind *kinds;
	const char *const *keys;
	size_t nkeys;
} sections[] = {
	{ "Poisoned pages by DIMM", "by_dimm",
	  "SELECT dimm, count(DISTINCT pfn), count(DISTINCT boot_id),"
	  " min(first_seen_usec), max(last_update_usec) FROM poisoned_pages",
	  " GROUP BY dimm ORDER BY count(DISTINCT pfn) DESC, dimm",
	  dimm_cols, ARRAY_SIZE(dimm_cols), dimm_kinds, NULL, 0 },
	{ "Poisoned pages by memfd owner", "by_owner",
	  "SELECT comm, memfd_name, count(*), sum(times_consumed)"
	  " FROM poisoned_pages", " GROUP BY comm, memfd_name"
	  " ORDER BY count(*) DESC, comm, memfd_name",
	  owner_cols, ARRAY_SIZE(owner_cols), owner_kinds,
	  consumed_key, ARRAY_SIZE(consumed_key) },
	/* VMs of one VMM share comm and memfd name, not their cgroup. */
	{ "Poisoned pages by cgroup (one per VM under libvirt or systemd)",
	  "by_cgroup",
	  "SELECT cgroup_path, comm, count(*), sum(times_consumed),"
	  " max(last_update_usec) FROM poisoned_pages",
	  " GROUP BY cgroup_path, comm ORDER BY count(*) DESC, cgroup_path, comm",
	  cgroup_cols, ARRAY_SIZE(cgroup_cols), cgroup_kinds,
	  consumed_key, ARRAY_SIZE(consumed_key) },
	{ "Poisoned pages by boot", "by_boot",
	  "SELECT boot_id, count(*), min(first_seen_usec), max(last_update_usec)"
	  " FROM poisoned_pages", " GROUP BY boot_id ORDER BY min(first_seen_usec)",
	  boot_cols, ARRAY_SIZE(boot_cols), boot_kinds, NULL, 0 },
};

int summary_run(struct mfrctl *ctl)
{
	json_object *doc = NULL, *arr;
	sqlite3_stmt *st;
	size_t rows = 0;
	sqlite3 *db;
	int ret;

	ret = open_db(ctl, false, &db);
	if (ret)
		return ret;
	if (ctl->json && !(doc = json_object_new_object()))
		ret = -ENOMEM;
	for (size_t i = 0; !ret && i < ARRAY_SIZE(sections); i++) {
		if (prepare_filtered(ctl, db, sections[i].select,
				     sections[i].tail, &st)) {
			ret = store_fail(ctl, db, "reading the store");
			break;
		}
		if (!doc)
			printf("%s%s:\n", i ? "\n" : "", sections[i].title);
		arr = NULL;
		ret = print_rows(ctl, db, st, sections[i].cols, sections[i].ncols,
				 sections[i].kinds, sections[i].keys,
				 sections[i].nkeys, NULL, doc ? &arr : NULL,
				 &rows);
		sqlite3_finalize(st);
		if (!ret && doc)
			ret = json_add(doc, sections[i].key, arr);
	}
	if (!ret && doc)
		ret = json_print(doc) ? EXIT_FAILED : EXIT_OK;
	json_object_put(doc);
	sqlite3_close(db);
	if (ret < 0) {
		fprintf(stderr, "mfrctl: %s: %s\n", ctl->what, strerror(-ret));
		return EXIT_FAILED;
	}
	return nothing_matched(ctl, rows, ret);
}

/*
 * A pfn as every listing prints it: hexadecimal, "0x1a2b" or "1a2b".  A
 * bare number of decimal digits only ("1234") is refused as ambiguous:
 * forgetting 0x4d2 for a decimal 1234 would delete the wrong record.
 */
static int parse_pfn(const char *s, uint64_t *out)
{
	const char *digits = s + (!strncasecmp(s, "0x", 2) ? 2 : 0);
	unsigned long long v;
	char *end;

	if (!*digits || strspn(digits, "0123456789abcdefABCDEF") != strlen(digits))
		return usage_error("invalid pfn '%s': expected a hexadecimal page frame number, as listings print it (0x1a2b)",
				   s);
	if (digits == s && strspn(s, "0123456789") == strlen(s))
		return usage_error("ambiguous pfn '%s': pfns are hexadecimal, as listings print them; write 0x%s (if %s is decimal: 0x%llx)",
				   s, s, s, strtoull(s, NULL, 10));
	errno = 0;
	v = strtoull(digits, &end, 16);
	if (errno || v > UINT64_MAX >> 12)
		return usage_error("invalid pfn '%s': larger than any page frame number",
				   s);
	*out = v;
	return 0;
}

int forget_parse(struct mfrctl *ctl, char **args)
{
	int given = !!args[0] + !!ctl->forget_boot + !!ctl->forget_dimm;

	if (given != 1)
		return usage_error("forget: give one of PFN, --boot ID or --dimm LABEL");
	if ((ctl->given & OPT_DRY_RUN) && (ctl->given & OPT_YES))
		return usage_error("forget: --dry-run or --yes, not both");
	/* Asked before anything is read: no terminal, no question. */
	if (!(ctl->given & (OPT_DRY_RUN | OPT_YES)) && !isatty(STDIN_FILENO))
		return usage_error("forget: no terminal to confirm on: give --yes to delete, or --dry-run to see what it would delete");
	if (!args[0])
		return 0;
	ctl->forget_pfn_arg = args[0];
	return parse_pfn(args[0], &ctl->forget_pfn);
}

/*
 * The records forget deletes: ?1 the pfn, boot id (either form) or DIMM,
 * of earlier boots only (?2 the current boot id): mfr.ko still reports
 * this boot's pages, and mfrd would record them again from its next dump
 * and alert as if they were new.  this_boot selects those instead.
 */
static char *forget_where(const struct mfrctl *ctl, bool this_boot)
{
	const char *what = ctl->forget_boot ? "boot_id = ?1" :
			   ctl->forget_dimm ? "dimm = ?1" : "pfn = ?1";
	char *sql;

	if (asprintf(&sql, " FROM poisoned_pages WHERE %s AND boot_id %s ?2",
		     what, this_boot ? "=" : "!=") < 0)
		return NULL;
	return sql;
}

static void forget_bind(const struct mfrctl *ctl, sqlite3_stmt *st,
			const char *boot_id)
{
	char id[MFR_BOOT_ID_MAX];

	if (ctl->forget_boot)
		sqlite3_bind_text(st, 1, mfr_boot_id_normal(ctl->forget_boot, id),
				  -1, SQLITE_TRANSIENT);
	else if (ctl->forget_dimm)
		sqlite3_bind_text(st, 1, ctl->forget_dimm, -1, SQLITE_STATIC);
	else
		sqlite3_bind_int64(st, 1, (sqlite3_int64)ctl->forget_pfn);
	sqlite3_bind_text(st, 2, boot_id, -1, SQLITE_STATIC);
}

/* "pfn 0x1a2b", "boot ID", "DIMM 'LABEL'" */
static void forget_what(const struct mfrctl *ctl, char *buf, size_t size)
{
	if (ctl->forget_boot)
		snprintf(buf, size, "boot '%s'", ctl->forget_boot);
	else if (ctl->forget_dimm)
		snprintf(buf, size, "DIMM '%s'", ctl->forget_dimm);
	else
		snprintf(buf, size, "pfn 0x%" PRIx64, ctl->forget_pfn);
}

/*
 * Records, distinct pfns and boots that forget would delete (or, with
 * this_boot, keeps); -1 on error.
 */
static int forget_count(struct mfrctl *ctl, sqlite3 *db, const char *boot_id,
			bool this_boot, int counts[3])
{
	char *where = forget_where(ctl, this_boot), *sql = NULL;
	sqlite3_stmt *st;
	int rc;

	if (!where || asprintf(&sql, "SELECT count(*), count(DISTINCT pfn),"
			       " count(DISTINCT boot_id)%s", where) < 0)
		sql = NULL;
	free(where);
	if (!sql)
		return -1;
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	free(sql);
	if (rc)
		return store_fail(ctl, db, "reading the store"), -1;
	forget_bind(ctl, st, boot_id);
	rc = sqlite3_step(st);
	for (int i = 0; i < 3; i++)
		counts[i] = rc == SQLITE_ROW ? sqlite3_column_int(st, i) : 0;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : (db_fail(ctl, db, "reading"), -1);
}

/* What forget leaves: this boot's records, and why. */
static void say_kept(const char *what, int kept)
{
	fprintf(stderr, "mfrctl: forget: %d record%s of %s from the running boot kept: mfr.ko still reports %s, and mfrd would record %s again; forget %s after the next boot\n",
		kept, kept == 1 ? "" : "s", what, kept == 1 ? "it" : "them",
		kept == 1 ? "it" : "them", kept == 1 ? "it" : "them");
}

/* y or yes on the terminal; anything else, or end of input, is no. */
static bool confirmed(const char *what, const int counts[3])
{
	char *line = NULL;
	size_t size = 0;
	bool yes;

	fprintf(stderr, "Forget %d record%s of %s (%d pfn%s, %d boot%s)? Boot offlining will no longer offline %s. [y/N] ",
		counts[0], counts[0] == 1 ? "" : "s", what, counts[1],
		counts[1] == 1 ? "" : "s", counts[2], counts[2] == 1 ? "" : "s",
		counts[1] == 1 ? "it" : "them");
	yes = getline(&line, &size, stdin) > 0 &&
	      (!strcmp(line, "y\n") || !strcmp(line, "yes\n") ||
	       !strcmp(line, "Y\n"));
	free(line);
	return yes;
}

/* The operator's deletion, in the journal: who, what, how many. */
static void log_forget(const struct mfrctl *ctl, const char *what, int n)
{
	const char *path = ctl->db_path ?: MFRCTL_DB_PATH;

	sd_journal_send("MESSAGE_ID=" MFRD_MSGID_FORGOTTEN,
			"PRIORITY=%d", LOG_NOTICE,
			"MESSAGE=mfrctl forget: %d record%s of %s deleted from %s by uid %u; boot offlining no longer offlines them",
			n, n == 1 ? "" : "s", what, path, (unsigned int)getuid(),
			"MFR_FORGOTTEN=%d", n,
			"MFR_FORGET=%s", what,
			"MFR_STORE=%s", path,
			NULL);
}

int forget_run(struct mfrctl *ctl)
{
	bool dry = ctl->given & OPT_DRY_RUN;
	char what[512], boot_id[MFR_BOOT_ID_MAX], *sql, *where;
	int ret, n, counts[3], kept[3];
	sqlite3_stmt *st;
	json_object *doc;
	sqlite3 *db;

	forget_what(ctl, what, sizeof(what));
	ret = mfr_boot_id(boot_id);
	if (ret) {
		fprintf(stderr, "mfrctl: forget: cannot read the boot id: %s; nothing forgotten\n",
			strerror(-ret));
		return EXIT_FAILED;
	}
	ret = open_db(ctl, !dry, &db);
	if (ret)
		return ret;
	/* Counted and asked before the write lock: mfrd must not wait on us. */
	if (forget_count(ctl, db, boot_id, true, kept) ||
	    forget_count(ctl, db, boot_id, false, counts)) {
		sqlite3_close(db);
		return EXIT_FAILED;
	}
	if (kept[0])
		say_kept(what, kept[0]);
	if (!counts[0]) {
		if (!kept[0])
			fprintf(stderr, "mfrctl: forget: no record of %s\n",
				what);
		sqlite3_close(db);
		return EXIT_FAILED;
	}
	if (dry) {
		sqlite3_close(db);
		if (ctl->json) {
			doc = json_object_new_object();
			ret = doc ? json_add(doc, "would_forget",
					     json_object_new_int(counts[0])) : -ENOMEM;
			if (!ret)
				ret = json_print(doc);
			json_object_put(doc);
			return ret ? EXIT_FAILED : EXIT_OK;
		}
		printf("would forget %d record%s of %s (%d pfn%s, %d boot%s)\n",
		       counts[0], counts[0] == 1 ? "" : "s", what, counts[1],
		       counts[1] == 1 ? "" : "s", counts[2],
		       counts[2] == 1 ? "" : "s");
		return EXIT_OK;
	}
	if (!(ctl->given & OPT_YES) && !confirmed(what, counts)) {
		fprintf(stderr, "mfrctl: forget: nothing forgotten\n");
		sqlite3_close(db);
		return EXIT_FAILED;
	}
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL)) {
		ret = db_fail(ctl, db, "locking the store");
		sqlite3_close(db);
		return ret;
	}
	where = forget_where(ctl, false);
	if (!where || asprintf(&sql, "DELETE%s", where) < 0) {
		free(where);
		ret = EXIT_FAILED;
		goto rollback;
	}
	free(where);
	ret = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	free(sql);
	if (ret) {
		ret = store_fail(ctl, db, "forgetting");
		goto rollback;
	}
	forget_bind(ctl, st, boot_id);
	if (sqlite3_step(st) != SQLITE_DONE) {
		sqlite3_finalize(st);
		ret = db_fail(ctl, db, "forgetting");
		goto rollback;
	}
	sqlite3_finalize(st);
	n = sqlite3_changes(db);
	if (!n) {
		fprintf(stderr, "mfrctl: forget: no record of %s\n", what);
		ret = EXIT_FAILED;
		goto rollback;
	}
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL)) {
		ret = db_fail(ctl, db, "committing");
		goto rollback;
	}
	sqlite3_close(db);
	log_forget(ctl, what, n);
	if (!ctl->json) {
		printf("forgot %d record%s\n", n, n == 1 ? "" : "s");
		return EXIT_OK;
	}
	doc = json_object_new_object();
	ret = doc ? json_add(doc, "forgotten", json_object_new_int(n)) : -ENOMEM;
	if (!ret)
		ret = json_print(doc);
	json_object_put(doc);
	return ret ? EXIT_FAILED : EXIT_OK;
rollback:
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(db);
	return ret;
}

/*
 * store ack: the operator has seen the store incidents (a damaged store
 * moved aside, a store mfrd could not use) and mfrd's alert may clear.
 */
int store_ack_run(struct mfrctl *ctl)
{
	struct timespec now;
	sqlite3_stmt *st;
	json_object *doc;
	sqlite3 *db;
	int ret, n;

	ret = open_db(ctl, true, &db);
	if (ret)
		return ret;
	clock_gettime(CLOCK_REALTIME, &now);
	if (sqlite3_prepare_v2(db, "UPDATE store_incidents SET acked_usec = ?1"
			       " WHERE acked_usec IS NULL", -1, &st, NULL)) {
		ret = store_fail(ctl, db, "acknowledging");
		sqlite3_close(db);
		return ret;
	}
	sqlite3_bind_int64(st, 1, (sqlite3_int64)now.tv_sec * 1000000 +
			   now.tv_nsec / 1000);
	if (sqlite3_step(st) != SQLITE_DONE) {
		ret = db_fail(ctl, db, "acknowledging");
		sqlite3_finalize(st);
		sqlite3_close(db);
		return ret;
	}
	sqlite3_finalize(st);
	n = sqlite3_changes(db);
	sqlite3_close(db);
	if (!ctl->json) {
		printf("acknowledged %d store incident%s\n", n, n == 1 ? "" : "s");
		return EXIT_OK;
	}
	doc = json_object_new_object();
	ret = doc ? json_add(doc, "acknowledged", json_object_new_int(n)) :
	      -ENOMEM;
	if (!ret)
		ret = json_print(doc);
	json_object_put(doc);
	return ret ? EXIT_FAILED : EXIT_OK;
}
