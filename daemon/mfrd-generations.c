// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Following the module's generations: see mfrd-generations.h.
 */
#include <stdlib.h>

#include "mfrd-generations.h"

void mfrd_gens_reset(struct mfrd_gens *g)
{
	mfrd_gens_free(g);
	g->dump_gen = g->generation = 0;
	g->next_gen = 1;
}

static void add_hole(struct mfrd_gens *g, uint64_t from, uint64_t to)
{
	struct mfrd_gen_hole *v;

	v = realloc(g->holes, (g->nholes + 1) * sizeof(*v));
	if (!v)
		abort();
	g->holes = v;
	v[g->nholes++] = (struct mfrd_gen_hole){ from, to };
}

enum mfrd_gen_seen mfrd_gens_event(struct mfrd_gens *g, uint64_t gen)
{
	if (gen <= g->dump_gen)
		return MFRD_GEN_DUMPED;
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
		if (!v.missing)
			v.gap_from = g->holes[i].from;
		v.gap_to = g->holes[i].to;
		v.missing += g->holes[i].to - g->holes[i].from + 1;
	}
	if (v.missing)
		v.action = MFRD_GEN_RECONCILE_GAP;
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
	g->nholes = 0;
}
