/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Room for one more element at the end of an array that grows one
 * element at a time (netlink dumps, SMBIOS tables): the allocation
 * doubles, so N elements cost O(log N) reallocations, not N.
 */
#ifndef MFRD_GROW_H
#define MFRD_GROW_H

#include <stdint.h>
#include <stdlib.h>

/*
 * @v holds @n elements of @size bytes in room for *@cap.  Returns the
 * array with room for n + 1 (*@cap updated), or NULL with @v and *@cap
 * untouched.
 */
static inline void *mfrd_grow(void *v, size_t *cap, size_t n, size_t size)
{
	size_t ncap;
	void *nv;

	if (n < *cap)
		return v;
	ncap = *cap ? 2 * *cap : 16;
	if (ncap <= n || ncap > SIZE_MAX / size)
		return NULL;
	nv = realloc(v, ncap * size);
	if (nv)
		*cap = ncap;
	return nv;
}

#endif
