/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Tiny TAP-style assertions for the VM test helpers: every check prints
 * "ok" or "not ok" with what was expected, and the exit status counts.
 */
#ifndef MFR_TEST_CHECK_H
#define MFR_TEST_CHECK_H

#include <stdio.h>

static int check_failures;

#define CHECK(cond, fmt, ...)						\
	do {								\
		if (cond) {						\
			printf("ok - " fmt "\n", ##__VA_ARGS__);	\
		} else {						\
			printf("not ok - " fmt " [%s:%d: %s]\n",	\
			       ##__VA_ARGS__, __FILE__, __LINE__, #cond); \
			check_failures++;				\
		}							\
		fflush(stdout);						\
	} while (0)

static inline int check_exit_status(void)
{
	return check_failures ? 1 : 0;
}

#endif
