// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The rules mfr.ko holds against the ones mfrd pushed, by the ids the
 * module gave them: a rule added or deleted behind mfrd's back (mfrctl
 * rules add/del) lasts only until mfrd's next push, so mfrd says so.
 */
#ifndef MFRD_RULE_IDS_H
#define MFRD_RULE_IDS_H

#include <stddef.h>
#include <stdint.h>

struct mfrd_rule_drift {
	unsigned int added;	/* in the module, not pushed by mfrd */
	unsigned int removed;	/* pushed by mfrd, gone from the module */
};

/* Compare two id lists (any order, each without repeats). */
struct mfrd_rule_drift mfrd_rule_ids_drift(const uint32_t *pushed,
					   size_t npushed,
					   const uint32_t *now, size_t nnow);

#endif /* MFRD_RULE_IDS_H */
