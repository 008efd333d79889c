// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Following the module's generations: see mfrd-generations.h.
 */
#include <stdlib.h>

#include "mfrd-generations.h"
#include "mfrd-grow.h"

void mfrd_gens_reset(struct mfrd_gens *g)
{
	mfrd_gens_free(g);
	g->dump_gen = g->generation = 0;
	g->next_gen = 1;
}

static void add_hole(struct mfrd_gens *g, uint64_t from, uint64_t to)
{
	struct mfrd_gen_hole *v;

	v = mfrd_grow(g->holes, &g->holes_cap, g->nholes, sizeof(*v));
	if (!v)
		abort();
	g->holes = v;
	v[g->nholes++] = (struct mfrd_gen_hole){ from, to };
}

/* A late event: its generation is no longer missing. */
static void fill_hole(struct mfrd_gens *g, uint64_t gen)
{
	struct mfrd_gen_hole *h;
	uint64_t to;

	for (size_t i = 0; i < g->nholes; i++) {
		h = &g->holes[i];
		if (gen < h->from || gen > h->to)
			continue;
		if (h->from == h->to)
			g->holes[i] = g->holes[--g->nholes];
		else if (gen == h->from)
			h->from++;
		else if (gen == h->to)
			h->to--;
		else {
			to = h->to;
			h->to = gen - 1;
			add_hole(g, gen + 1, to);	/* h moves */
		}
		return;
	}
}

enum mfrd_gen_seen mfrd_gens_event(struct mfrd_gens *g, uint64_t gen)
{
	if (gen <= g->dump_gen)
		return MFRD_GEN_DUMPED;
	if (gen < g->next_gen) {
		if (!g->late) {
			g->late_gen = gen;
			g->late_after = g->next_gen - 1;
		}
		g->late = true;
		fill_hole(g, gen);
		return MFRD_GEN_NEW;
	}
	if (gen > g->next_gen)
		add_hole(g, g->next_gen, gen - 1);
	if (gen >= g->next_gen)
		g->next_gen = gen + 1;
	if (gen > g->generation)
		g->generation = gen;
	return MFRD_GEN_NEW;
}

struct mfrd_gen_verdict mfrd_gens_batch_end(struct mfrd_gens *g)
{
	struct mfrd_gen_verdict v = { .action = MFRD_GEN_NOTHING };

	for (size_t i = 0; i < g->nholes; i++) {
		const struct mfrd_gen_hole *h = &g->holes[i];

		if (!v.missing || h->from < v.gap_from)
			v.gap_from = h->from;
		if (h->to > v.gap_to)
			v.gap_to = h->to;
		v.missing += h->to - h->from + 1;
	}
	v.late = g->late;
	v.late_gen = g->late_gen;
	v.late_after = g->late_after;
	if (v.missing)
		v.action = MFRD_GEN_RECONCILE_GAP;
	else if (v.late)
		v.action = MFRD_GEN_RECONCILE_ORDER;
	mfrd_gens_free(g);
	return v;
}

void mfrd_gens_dumped(struct mfrd_gens *g, uint64_t gen)
{
	mfrd_gens_free(g);
	g->dump_gen = gen;
	g->next_gen = gen + 1;
	if (gen > g->generation)
		g->generation = gen;
}

void mfrd_gens_free(struct mfrd_gens *g)
{
	free(g->holes);
	g->holes = NULL;
	g->nholes = g->holes_cap = 0;
	g->late = false;
}
