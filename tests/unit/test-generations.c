// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrd-generations.c: events in generation order need no reconcile, a
 * real gap does, and an event that arrives after a later one (500 before
 * 499, as t-nl-events once saw) is neither a gap nor lost: it fills the
 * hole the later one seemed to leave, and the page states are taken from
 * the dumps, since the late event may be older than what the store holds.
 */
#include <stdio.h>

#include "mfrd-generations.h"
#include "unit.h"

static struct mfrd_gen_verdict feed(struct mfrd_gens *g, const uint64_t *gens,
				    size_t n, unsigned int *news)
{
	*news = 0;
	for (size_t i = 0; i < n; i++)
		*news += mfrd_gens_event(g, gens[i]) != MFRD_GEN_DUMPED;
	return mfrd_gens_batch_end(g);
}

int main(void)
{
	static const uint64_t in_order[] = { 498, 499, 500 };
	static const uint64_t late[] = { 501, 503, 502, 504 };
	static const uint64_t gap[] = { 505, 508, 509 };
	static const uint64_t late_and_gap[] = { 510, 514, 512, 515 };
	static const uint64_t stale[] = { 521, 522 };
	static const uint64_t split[] = { 516, 521, 518 };
	struct mfrd_gens g = { 0 };
	struct mfrd_gen_verdict v;
	unsigned int news;

	mfrd_gens_reset(&g);
	mfrd_gens_dumped(&g, 497);

	v = feed(&g, in_order, 3, &news);
	CHECK(news == 3 && v.action == MFRD_GEN_NOTHING && !v.missing,
	      "498 499 500: three new events, nothing to reconcile");

	v = feed(&g, late, 4, &news);
	CHECK(news == 4, "501 503 502 504: the late 502 is recorded too");
	CHECK(v.missing == 0, "... no generation is missing");
	CHECK(v.action == MFRD_GEN_RECONCILE_ORDER,
	      "... the page states are taken from the dumps, not counted as lost");
	CHECK(g.generation == 504 && g.next_gen == 505,
	      "... 504 is the highest, 505 expected");

	v = feed(&g, gap, 3, &news);
	CHECK(news == 3 && v.action == MFRD_GEN_RECONCILE_GAP &&
	      v.missing == 2 && v.gap_from == 506 && v.gap_to == 507,
	      "505 508 509: 506 and 507 missed, a gap reconcile");

	v = feed(&g, late_and_gap, 4, &news);
	CHECK(v.action == MFRD_GEN_RECONCILE_GAP && v.missing == 2 &&
	      v.gap_from == 511 && v.gap_to == 513,
	      "510 514 512 515: 511 and 513 still missing (a gap wins)");
	CHECK(v.late, "... and the late 512 is reported");

	v = feed(&g, split, 3, &news);
	CHECK(v.action == MFRD_GEN_RECONCILE_GAP && v.missing == 3 &&
	      v.gap_from == 517 && v.gap_to == 520,
	      "516 521 518: the late 518 splits the hole, 517 519 520 missing");

	mfrd_gens_dumped(&g, 521);
	v = feed(&g, stale, 2, &news);
	CHECK(news == 1 && v.action == MFRD_GEN_NOTHING,
	      "after a dump at 521: 521 is in the store, 522 is new");

	mfrd_gens_event(&g, 525);
	mfrd_gens_dumped(&g, 526);
	v = mfrd_gens_batch_end(&g);
	CHECK(v.action == MFRD_GEN_NOTHING,
	      "a dump during the batch makes its gap moot");
	mfrd_gens_free(&g);
	return check_exit_status();
}
