// SPDX-License-Identifier: GPL-2.0-or-later
/* rasdaemon's reports of decoded memory errors (mfrd-ras.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "mfrd-ras.h"
#include "mfrd-store-vfs.h"

/*
 * rasdaemon's mc_event: label is the DIMM's (EDAC's dimm_label, or the
 * driver's location), mc_index and the three layers where it sits, and
 * address the physical address of the error.
 */
#define LOOKUP_SQL							\
	"SELECT label, mc_index, top_layer, middle_layer, lower_layer"	\
	" FROM mc_event WHERE address >= ?1 AND address < ?1 + 4096"	\
	" AND label IS NOT NULL AND label != '' AND label != 'any memory'"\
	" ORDER BY id DESC LIMIT 1"

struct mfrd_ras {
	sqlite3 *db;
	sqlite3_stmt *lookup;
};

struct mfrd_ras *mfrd_ras_open(const char *path, const char **why)
{
	/* The message lives in the connection, closed before we return. */
	static char msg[256];
	struct mfrd_ras *r = calloc(1, sizeof(*r));
	char *uri;

	if (!r)
		abort();
	/* Read-only, never waiting long: rasdaemon writes it. */
	if (asprintf(&uri, "file:%s?mode=ro", path) < 0)
		abort();
	/* rasdaemon's disk may be mfrd's full one: its -shm the same risk. */
	if (mfrd_store_vfs_init() != SQLITE_OK ||
	    sqlite3_open_v2(uri, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI |
			    SQLITE_OPEN_NOMUTEX, MFRD_STORE_VFS) != SQLITE_OK ||
	    sqlite3_prepare_v2(r->db, LOOKUP_SQL, -1, &r->lookup, NULL)) {
		snprintf(msg, sizeof(msg), "%s",
			 r->db ? sqlite3_errmsg(r->db) : "out of memory");
		*why = msg;
		free(uri);
		mfrd_ras_close(r);
		return NULL;
	}
	free(uri);
	sqlite3_busy_timeout(r->db, 50);
	return r;
}

void mfrd_ras_close(struct mfrd_ras *r)
{
	if (!r)
		return;
	sqlite3_finalize(r->lookup);
	sqlite3_close(r->db);
	free(r);
}

int mfrd_ras_lookup(struct mfrd_ras *r, uint64_t phys, struct mfrd_dimm *out)
{
	sqlite3_stmt *st;
	int ret = -1;

	if (!r)
		return -1;
	st = r->lookup;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)(phys & ~4095ULL));
	if (sqlite3_step(st) == SQLITE_ROW) {
		snprintf(out->label, sizeof(out->label), "%s",
			 (const char *)sqlite3_column_text(st, 0));
		snprintf(out->id, sizeof(out->id),
			 "edac=mc%d/%d/%d/%d label=%s", sqlite3_column_int(st, 1),
			 sqlite3_column_int(st, 2), sqlite3_column_int(st, 3),
			 sqlite3_column_int(st, 4), out->label);
		ret = 0;
	}
	sqlite3_reset(st);
	return ret;
}
