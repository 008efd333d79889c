// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The unit tests' own look at an SQLite file, beside the code under test:
 * run a statement, read an integer.
 */
#ifndef MFR_UNIT_SQL_H
#define MFR_UNIT_SQL_H

#include <sqlite3.h>

#include "unit.h"

/* Run q on the database at path; a failure ends the test. */
static inline void sql(const char *path, const char *q)
{
	sqlite3 *db;

	if (sqlite3_open(path, &db) || sqlite3_exec(db, q, NULL, NULL, NULL)) {
		printf("not ok - %s: %s: %s\n", path, q, sqlite3_errmsg(db));
		exit(1);
	}
	sqlite3_close(db);
}

/* The first column of the first row, as an integer (-1: none). */
static inline long long sql_int(const char *path, const char *q)
{
	sqlite3_stmt *st;
	sqlite3 *db;
	long long v = -1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return v;
}

#endif /* MFR_UNIT_SQL_H */
