// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Rule ids pushed against rule ids held: see mfrd-rule-ids.h.
 */
#include <stdlib.h>
#include <string.h>

#include "mfrd-rule-ids.h"

static int cmp_id(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static uint32_t *sorted_copy(const uint32_t *v, size_t n)
{
	uint32_t *c = malloc((n ? n : 1) * sizeof(*c));

	if (!c)
		abort();
	if (n)
		memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), cmp_id);
	return c;
}

struct mfrd_rule_drift mfrd_rule_ids_drift(const uint32_t *pushed,
					   size_t npushed,
					   const uint32_t *now, size_t nnow)
{
	struct mfrd_rule_drift d = { 0 };
	uint32_t *p = sorted_copy(pushed, npushed), *n = sorted_copy(now, nnow);
	size_t i = 0, j = 0;

	/* A merge of the two sorted lists. */
	while (i < npushed || j < nnow) {
		if (j == nnow || (i < npushed && p[i] < n[j])) {
			d.removed++;
			i++;
		} else if (i == npushed || n[j] < p[i]) {
			d.added++;
			j++;
		} else {
			i++;
			j++;
		}
	}
	free(p);
	free(n);
	return d;
}
