// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrd's monotonic clock: see mfrd-clock.h.
 */
#include <time.h>

#include "mfrd-clock.h"

int64_t mfrd_monotonic_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}
