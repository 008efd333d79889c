/* SPDX-License-Identifier: GPL-2.0-or-later */
#ifndef MFR_TEST_MEMINFO_H
#define MFR_TEST_MEMINFO_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Value of a /proc/meminfo field (kB for sizes, a count for HugePages_*). */
static inline long meminfo(const char *field)
{
	char line[256];
	size_t len = strlen(field);
	long value = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f) {
		perror("/proc/meminfo");
		exit(2);
	}
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, len) && line[len] == ':') {
			value = strtol(line + len + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	if (value < 0) {
		fprintf(stderr, "no %s in /proc/meminfo\n", field);
		exit(2);
	}
	return value;
}

#endif
