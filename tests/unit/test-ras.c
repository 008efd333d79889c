// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test of mfrd-ras: a database laid out as rasdaemon's (mc_event)
 * names the DIMM of a page by the newest report in it; reports without a
 * label, in another page, or no database at all name none.
 */
#include <sqlite3.h>

#include "mfrd-ras.h"
#include "unit.h"

int main(void)
{
	const char *why = "";
	struct mfrd_dimm d;
	struct mfrd_ras *r;
	sqlite3 *db;

	unit_init();
	CHECK(sqlite3_open(unit_path("ras.db"), &db) == SQLITE_OK &&
	      sqlite3_exec(db,
			   "CREATE TABLE mc_event (id INTEGER PRIMARY KEY, timestamp TEXT,"
			   " err_count INTEGER, err_type TEXT, err_msg TEXT, label TEXT,"
			   " mc_index INTEGER, top_layer INTEGER, middle_layer INTEGER,"
			   " lower_layer INTEGER, address INTEGER, grain INTEGER,"
			   " syndrome INTEGER, driver_detail TEXT);"
			   "INSERT INTO mc_event (label, mc_index, top_layer, middle_layer,"
			   " lower_layer, address) VALUES"
			   " ('CPU_SrcID#0_MC#0_Chan#1_DIMM#0', 0, 1, 0, -1, 305418240),"
			   " ('DIMM_B2', 1, 0, 1, -1, 305418304),"
			   " ('', 0, 0, 0, 0, 4096),"
			   " ('DIMM_C1', 0, 2, 0, 0, 8192);",
			   NULL, NULL, NULL) == SQLITE_OK,
	      "a rasdaemon database with four reports");
	sqlite3_close(db);
	r = mfrd_ras_open(unit_path("ras.db"), &why);
	CHECK(r != NULL, "opened read-only");
	CHECK(mfrd_ras_lookup(r, 305418240 + 100, &d) == 0, "the page of two reports");
	CHECK_STR(d.label, "DIMM_B2", "the newest report's DIMM");
	CHECK_STR(d.id, "edac=mc1/0/1/-1 label=DIMM_B2", "its identity");
	CHECK(mfrd_ras_lookup(r, 4096, &d) == -1, "a report without a label: none");
	CHECK(mfrd_ras_lookup(r, 12288, &d) == -1, "a page no report names: none");
	mfrd_ras_close(r);
	CHECK(mfrd_ras_open(unit_path("none.db"), &why) == NULL && *why,
	      "no database: none, and why (%s)", why);
	return check_exit_status();
}
