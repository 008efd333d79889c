// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrd-rule-ids.c: the rules mfr.ko holds against those mfrd pushed.  A
 * rule added with "mfrctl rules add" or one of mfrd's deleted with
 * "mfrctl rules del" is counted, whatever the order of the dump.
 */
#include "mfrd-rule-ids.h"
#include "unit.h"

#define N(v) (sizeof(v) / sizeof((v)[0]))

int main(void)
{
	static const uint32_t pushed[] = { 4, 5, 6 };
	static const uint32_t same[] = { 6, 4, 5 };
	static const uint32_t added[] = { 4, 5, 6, 9 };
	static const uint32_t deleted[] = { 4, 6 };
	static const uint32_t swapped[] = { 4, 6, 10 };
	struct mfrd_rule_drift d;

	d = mfrd_rule_ids_drift(pushed, N(pushed), same, N(same));
	CHECK(!d.added && !d.removed, "the same ids in another order: no drift");
	d = mfrd_rule_ids_drift(pushed, N(pushed), added, N(added));
	CHECK(d.added == 1 && !d.removed, "rules add: one added");
	d = mfrd_rule_ids_drift(pushed, N(pushed), deleted, N(deleted));
	CHECK(!d.added && d.removed == 1, "rules del 5: one removed");
	d = mfrd_rule_ids_drift(pushed, N(pushed), swapped, N(swapped));
	CHECK(d.added == 1 && d.removed == 1,
	      "del then add (same count): one added, one removed");
	d = mfrd_rule_ids_drift(pushed, N(pushed), NULL, 0);
	CHECK(!d.added && d.removed == 3, "all deleted: three removed");
	d = mfrd_rule_ids_drift(NULL, 0, NULL, 0);
	CHECK(!d.added && !d.removed, "no rules pushed, none held: no drift");
	return check_exit_status();
}
