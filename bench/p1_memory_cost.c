// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * P1, the memory one uncorrected error costs: a memfd of one hugepage,
 * ERRORS distinct 4 KiB pages of it poisoned through hwpoison-inject (the
 * path of a real asynchronous error), then
 *   unreachable  bytes of the live mapping a reader cannot use: pages that
 *                raise SIGBUS, and the poisoned pages themselves (an
 *                injected error leaves the memory readable in a VM; on
 *                hardware a read of one is a machine check, which mfr
 *                turns into SIGBUS for that page: make test-mce).  Every
 *                other page must read back what was written,
 *   lost         bytes that neither the hugepage pool nor the page
 *                allocator got back after close: a hugepage still in use
 *                with no owner (leaked), or the poisoned or still-huge
 *                pages of a dissolved one (/proc/kpageflags),
 *   returned     bytes of a dissolved hugepage back in the page allocator.
 *
 *   p1_memory_cost 2M|1G ERRORS keep|default
 * Prints one "p1 key=value..." line.
 */
#include "bench.h"

#define KPF_HUGE 17

/* /proc/kpageflags of the NR frames from PFN, in one read. */
static uint64_t *kpageflags_range(uint64_t pfn, unsigned long nr)
{
	uint64_t *flags = calloc(nr, sizeof(*flags));
	int fd = open("/proc/kpageflags", O_RDONLY);

	if (!flags || fd < 0 ||
	    pread(fd, flags, nr * 8, pfn * 8) != (ssize_t)(nr * 8)) {
		perror("/proc/kpageflags");
		exit(2);
	}
	close(fd);
	return flags;
}

/* Each 4 KiB page carries its index in its first and last words. */
static void mark_page(char *p, uint64_t index)
{
	((uint64_t *)p)[0] = index;
	((uint64_t *)p)[SMALL_PAGE / 8 - 1] = ~index;
}

/*
 * 0 if the page at P reads back as marked, 1 if it differs, -1 if it
 * raised SIGBUS.  Its own function so that no caller variable lives
 * across the siglongjmp().
 */
static __attribute__((noinline)) int probe_page(const char *p, uint64_t index)
{
	const volatile uint64_t *w = (const volatile uint64_t *)p;
	struct sigbus_record rec;
	int differs = 0;

	SIGBUS_TRY(rec, differs = w[0] != index || w[SMALL_PAGE / 8 - 1] != ~index);
	return rec.got ? -1 : differs;
}

int main(int argc, char **argv)
{
	unsigned long size, npages, stride, i, unreachable = 0, sigbus = 0, wrong = 0;
	unsigned long lost, returned = 0, still = 0;
	long nr0, free0, nr1, free1, leaked, dissolved, hwc0, tries;
	uint64_t head, *pfns, *flags;
	unsigned int errors;
	bool keep;
	char *map;
	int fd;

	if (argc != 4 || !(size = hugepage_size(argv[1])) ||
	    !(errors = strtoul(argv[2], NULL, 0)) ||
	    (strcmp(argv[3], "keep") && strcmp(argv[3], "default"))) {
		fprintf(stderr, "usage: p1_memory_cost 2M|1G ERRORS keep|default\n");
		return 2;
	}
	keep = !strcmp(argv[3], "keep");
	npages = size / SMALL_PAGE;
	if (errors > npages)
		return 2;
	sigbus_install();

	nr0 = pool_count(size, "nr_hugepages");
	free0 = pool_count(size, "free_hugepages");
	hwc0 = meminfo("HardwareCorrupted");
	map = hugetlb_memfd("bench-p1", size, 1, keep, &fd);
	for (i = 0; i < npages; i++)
		mark_page(map + i * SMALL_PAGE, i);
	head = pfn_of(map);

	/* Spread the errors over the hugepage, none on its head page. */
	stride = npages / errors;
	pfns = calloc(errors, sizeof(*pfns));
	for (i = 0; i < errors; i++)
		pfns[i] = head + i * stride + stride / 2;
	for (i = 0; i < errors; i++)
		corrupt_pfn(pfns[i]);

	/*
	 * Not /proc/kpageflags: it shows a hugetlb folio's HWPoison on every
	 * one of its pages.
	 */
	for (i = 0; i < npages; i++) {
		int r = probe_page(map + i * SMALL_PAGE, i);
		bool poisoned = i % stride == stride / 2 && i / stride < errors;

		sigbus += r < 0;
		unreachable += r < 0 || poisoned;
		wrong += r > 0 && !poisoned;
	}

	munmap(map, size);
	close(fd);
	/*
	 * Released means dissolved (the pool shrank) or back in the free
	 * pool; a hugepage neither after 2 s of guest time is leaked.
	 */
	for (tries = 0; tries < 200; tries++) {
		nr1 = pool_count(size, "nr_hugepages");
		free1 = pool_count(size, "free_hugepages");
		if (nr1 < nr0 || free1 == free0)
			break;
		usleep(10000);
	}
	leaked = (nr1 - free1) - (nr0 - free0);
	dissolved = nr0 - nr1;
	if (dissolved > 0) {
		/* Dissolved: each base page has flags of its own again. */
		flags = kpageflags_range(head, npages);
		for (i = 0; i < npages; i++) {
			if (flags[i] & ((1ULL << KPF_HWPOISON) | (1ULL << KPF_HUGE)))
				still++;
			else
				returned++;
		}
	}
	lost = (leaked > 0 ? leaked * size : 0) + still * SMALL_PAGE;
	printf("p1 size=%s errors=%u mode=%s unreachable=%lu lost=%lu returned=%lu"
	       " sigbus=%lu wrong_pages=%lu leaked_hugepages=%ld dissolved_hugepages=%ld"
	       " hwcorrupted_kb=%ld\n",
	       argv[1], errors, argv[3], unreachable * SMALL_PAGE, lost,
	       returned * SMALL_PAGE, sigbus * SMALL_PAGE, wrong, leaked, dissolved,
	       meminfo("HardwareCorrupted") - hwc0);
	return wrong ? 1 : 0;
}
