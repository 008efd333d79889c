// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrd-grow.h: an array filled one element at a time (a netlink dump of
 * 20 000 poison records) is reallocated O(log N) times, keeps what it
 * held, and a size that would overflow is refused with the array intact.
 */
#include "mfrd-grow.h"
#include "unit.h"

int main(void)
{
	size_t n, cap = 0, reallocs = 0, big_cap;
	unsigned long *v = NULL, *nv;
	bool intact = true;

	for (n = 0; n < 20000; n++) {
		size_t before = cap;

		nv = mfrd_grow(v, &cap, n, sizeof(*v));
		if (!nv)
			break;
		v = nv;
		reallocs += cap != before;
		v[n] = n * 7;
	}
	CHECK(n == 20000, "20000 elements fit");
	for (size_t i = 0; i < n; i++)
		intact &= v[i] == i * 7;
	CHECK(intact, "every element kept its value through the reallocations");
	CHECK(reallocs <= 12, "12 reallocations at most for 20000 elements (16 to 32768)");
	CHECK(cap >= n && cap < 2 * n, "room for less than twice what is held");
	nv = mfrd_grow(v, &cap, n - 1, sizeof(*v));
	CHECK(nv == v, "room already there: the same array");

	big_cap = SIZE_MAX / 2 + 1;
	nv = mfrd_grow(v, &big_cap, big_cap, 1);
	CHECK(!nv && big_cap == SIZE_MAX / 2 + 1,
	      "a doubling that overflows: refused, capacity unchanged");
	free(v);
	return check_exit_status();
}
