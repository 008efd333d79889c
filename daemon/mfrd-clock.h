// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The monotonic clock mfrd measures intervals with (batches, the
 * watchdog, rate limits, reload results), in microseconds.
 */
#ifndef MFRD_CLOCK_H
#define MFRD_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in microseconds: never steps back, not wall time. */
int64_t mfrd_monotonic_usec(void);

#endif /* MFRD_CLOCK_H */
