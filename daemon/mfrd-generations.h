// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The module's generations as mfrd follows them (module/mfr.yaml): every
 * change and every successful write operation moves the generation by
 * one; events and dumps carry it.  This file decides, event by event,
 * whether an event is already in the store, and, batch by batch, whether
 * the store must be reconciled from the module's dumps.
 *
 * The module sends its events in increasing generation (mfr.yaml), so a
 * generation skipped is a change that sent nothing.  An event that still
 * arrives after a later one (a module before that rule: t-nl-events saw
 * 498, 500, 499) fills the hole the later one seemed to leave: it is not
 * a lost event.  It is recorded, but it may be older than what the store
 * holds now (a page's "kept" after its folio's "offlined"), so the batch
 * ends with a reconcile that takes the page states from the dumps.
 */
#ifndef MFRD_GENERATIONS_H
#define MFRD_GENERATIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Generations the events of a batch skipped: [from, to]. */
struct mfrd_gen_hole {
	uint64_t from, to;
};

struct mfrd_gens {
	uint64_t dump_gen;	/* events at or below it are in the store */
	uint64_t next_gen;	/* the one expected next */
	uint64_t generation;	/* the highest seen, for STATUS */

	/* The batch being read. */
	struct mfrd_gen_hole *holes;
	size_t nholes, holes_cap;
	bool late;		/* an event came after a later one */
	uint64_t late_gen, late_after;	/* the first such, and the later */
};

enum mfrd_gen_seen {
	MFRD_GEN_DUMPED,	/* at or below the last dump: skip it */
	MFRD_GEN_NEW,		/* to record */
};

enum mfrd_gen_action {
	MFRD_GEN_NOTHING,
	MFRD_GEN_RECONCILE_GAP,	/* generations without events: re-dump */
	MFRD_GEN_RECONCILE_ORDER, /* none missing, but one came late */
};

/* What a batch leaves to do, from mfrd_gens_batch_end(). */
struct mfrd_gen_verdict {
	enum mfrd_gen_action action;
	uint64_t gap_from, gap_to;	/* the first and last missed */
	uint64_t missing;		/* generations missed */
	bool late;			/* an event came after a later one */
	uint64_t late_gen, late_after;
};

/* A (re)connection: nothing dumped yet, generation 1 expected. */
void mfrd_gens_reset(struct mfrd_gens *g);

/* An event of generation gen, read in the current batch. */
enum mfrd_gen_seen mfrd_gens_event(struct mfrd_gens *g, uint64_t gen);

/* The batch is read: what must follow; the batch's state is cleared. */
struct mfrd_gen_verdict mfrd_gens_batch_end(struct mfrd_gens *g);

/* The dumps were recorded up to generation gen: the batch is moot. */
void mfrd_gens_dumped(struct mfrd_gens *g, uint64_t gen);

void mfrd_gens_free(struct mfrd_gens *g);

#endif /* MFRD_GENERATIONS_H */
