// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * P1, the memory one uncorrected error costs: a memfd of one hugepage,
 * ERRORS distinct 4 KiB pages of it poisoned through hwpoison-inject (the
 * path of a real asynchronous error), then
 *   unreachable  bytes of the mapping that raise SIGBUS while it lives,
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

static char expect[SMALL_PAGE];

/*
 * 0 if the 4 KiB page at P reads back as filled, 1 if it differs, -1 if
 * it raised SIGBUS.  Its own function so that no caller variable lives
 * across the siglongjmp().
 */
static __attribute__((noinline)) int probe_page(const char *p)
{
	struct sigbus_record rec;
	int differs = 0;

	SIGBUS_TRY(rec, differs = memcmp(p, expect, SMALL_PAGE));
	return rec.got ? -1 : !!differs;
}

int main(int argc, char **argv)
{
	unsigned long size, npages, stride, i, unreachable = 0, wrong = 0;
	unsigned long lost, returned = 0, still = 0;
	long nr0, free0, nr1, free1, leaked, dissolved, hwc0, memfree0, tries;
	uint64_t head, *pfns;
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
	memset(expect, 0xab, sizeof(expect));

	nr0 = pool_count(size, "nr_hugepages");
	free0 = pool_count(size, "free_hugepages");
	hwc0 = meminfo("HardwareCorrupted");
	map = hugetlb_memfd("bench-p1", size, 1, keep, 0xab, &fd);
	head = pfn_of(map);

	/* Spread the errors over the hugepage, none on its head page. */
	stride = npages / errors;
	pfns = calloc(errors, sizeof(*pfns));
	for (i = 0; i < errors; i++)
		pfns[i] = head + i * stride + stride / 2;
	for (i = 0; i < errors; i++)
		corrupt_pfn(pfns[i]);

	for (i = 0; i < npages; i++) {
		int r = probe_page(map + i * SMALL_PAGE);

		unreachable += r < 0;
		wrong += r > 0;
	}

	munmap(map, size);
	memfree0 = meminfo("MemFree");
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
		for (i = 0; i < npages; i++) {
			uint64_t f = kpageflags(head + i);

			if (f & ((1ULL << KPF_HWPOISON) | (1ULL << KPF_HUGE)))
				still++;
			else
				returned++;
		}
	}
	lost = (leaked > 0 ? leaked * size : 0) + still * SMALL_PAGE;
	printf("p1 size=%s errors=%u mode=%s unreachable=%lu lost=%lu returned=%lu"
	       " wrong_pages=%lu leaked_hugepages=%ld dissolved_hugepages=%ld"
	       " hwcorrupted_kb=%ld memfree_delta_kb=%ld\n",
	       argv[1], errors, argv[3], unreachable * SMALL_PAGE, lost,
	       returned * SMALL_PAGE, wrong, leaked, dissolved,
	       meminfo("HardwareCorrupted") - hwc0, meminfo("MemFree") - memfree0);
	return wrong ? 1 : 0;
}
