/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the benchmark programs share: hugepage sizes, the pool counters of
 * /sys/kernel/mm/hugepages, a guest clock and "key=value" result lines.
 * The SIGBUS capture, pagemap and hwpoison-inject helpers are the tests'
 * (tests/helpers/hwpoison.h).
 */
#ifndef MFR_BENCH_H
#define MFR_BENCH_H

#include <stdbool.h>
#include <time.h>

#include "hwpoison.h"
#include "meminfo.h"

#define SMALL_PAGE 4096UL

/* "2M" or "1G": the hugepage size in bytes, 0 for anything else. */
static inline unsigned long hugepage_size(const char *arg)
{
	if (!strcmp(arg, "2M"))
		return 2UL << 20;
	if (!strcmp(arg, "1G"))
		return 1UL << 30;
	return 0;
}

static inline unsigned int memfd_huge_flags(unsigned long size)
{
	return MFD_HUGETLB | ((size == (1UL << 30) ? 30U : 21U) << MFD_HUGE_SHIFT);
}

/* nr_hugepages or free_hugepages of the pool of SIZE-byte pages. */
static inline long pool_count(unsigned long size, const char *what)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%lukB/%s",
		 size >> 10, what);
	return read_long_file(path);
}

/*
 * Seconds on the guest's clock.  The benchmark VMs run with QEMU's
 * -icount shift=0, where it advances 1 ns per guest instruction.
 */
static inline double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* A memfd of NR hugepages of SIZE bytes, mapped shared, each faulted in. */
static inline char *hugetlb_memfd(const char *name, unsigned long size,
				  unsigned long nr, bool keep, int *fdp)
{
	unsigned int flags = memfd_huge_flags(size);
	unsigned long i;
	char *p;
	int fd;

	if (keep)
		flags |= MFD_MF_KEEP_UE_MAPPED;
	fd = memfd_create(name, flags);
	if (fd < 0 || ftruncate(fd, nr * size)) {
		perror("memfd_create/ftruncate");
		exit(2);
	}
	p = mmap(NULL, nr * size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	for (i = 0; i < nr; i++)
		p[i * size] = 1;
	*fdp = fd;
	return p;
}

#endif
