// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * P3, what releasing a kept hugepage costs: a kept memfd of one hugepage
 * with NPOISON of its 4 KiB pages poisoned (hwpoison-inject), unmapped,
 * then timed from close() until the pool shows the release done: the
 * hugepage back in the free pool (NPOISON 0) or dissolved, its healthy
 * pages freed and the poisoned ones offlined.
 *
 *   p3_release_cost 2M|1G NPOISON
 *   p3_release_cost 2M|1G shrink
 * Prints "p3 size=S poisoned=N seconds=X", on the guest clock.  "shrink"
 * times the reference, a healthy hugepage going back to the page
 * allocator: one free hugepage dissolved by lowering nr_hugepages
 * (printed as poisoned=shrink).
 *
 * To profile only the release: P3_PERF_CTL=CTL P3_PERF_ACK=ACK (two
 * FIFOs) with "perf record -D -1 --control fifo:CTL,ACK"; the timed part
 * is bracketed by "enable" and "disable", each acknowledged by perf.
 */
#include "bench.h"

static void perf_ctl(const char *cmd)
{
	const char *ctl = getenv("P3_PERF_CTL"), *ack = getenv("P3_PERF_ACK");
	char buf[8];
	int fd;

	if (!ctl || !ack)
		return;
	/* perf must act before the timed part goes on: wait for its ack. */
	fd = open(ctl, O_WRONLY);
	if (fd < 0 || write(fd, cmd, strlen(cmd)) < 0)
		perror(ctl);
	if (fd >= 0)
		close(fd);
	fd = open(ack, O_RDONLY);
	if (fd < 0 || read(fd, buf, sizeof(buf)) < 0)
		perror(ack);
	if (fd >= 0)
		close(fd);
}

static int shrink_pool(const char *name, unsigned long size)
{
	long nr = pool_count(size, "nr_hugepages");
	char path[128], buf[32];
	double t0, t1;
	int fd, n;

	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%lukB/nr_hugepages",
		 size >> 10);
	n = snprintf(buf, sizeof(buf), "%ld\n", nr - 1);
	fd = open(path, O_WRONLY);
	perf_ctl("enable\n");
	t0 = now();
	if (fd < 0 || write(fd, buf, n) != n || pool_count(size, "nr_hugepages") != nr - 1) {
		perror(path);
		return 1;
	}
	t1 = now();
	perf_ctl("disable\n");
	close(fd);
	printf("p3 size=%s poisoned=shrink seconds=%.9f\n", name, t1 - t0);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long size, npages, npoison, stride, i;
	long nr0, free0;
	double t0, t1;
	uint64_t head;
	char *map;
	int fd;

	if (argc != 3 || !(size = hugepage_size(argv[1]))) {
		fprintf(stderr, "usage: p3_release_cost 2M|1G NPOISON\n");
		return 2;
	}
	npages = size / SMALL_PAGE;
	if (!strcmp(argv[2], "shrink"))
		return shrink_pool(argv[1], size);
	npoison = strtoul(argv[2], NULL, 0);
	if (npoison >= npages)
		return 2;

	map = hugetlb_memfd("bench-p3", size, 1, true, &fd);
	head = pfn_of(map);
	stride = npoison ? npages / npoison : 0;
	for (i = 0; i < npoison; i++)
		corrupt_pfn(head + i * stride + stride / 2);
	munmap(map, size);
	nr0 = pool_count(size, "nr_hugepages");
	free0 = pool_count(size, "free_hugepages");

	perf_ctl("enable\n");
	t0 = now();
	close(fd);
	while (npoison ? pool_count(size, "nr_hugepages") == nr0 :
			 pool_count(size, "free_hugepages") == free0) {
		if (now() - t0 > 60) {
			fprintf(stderr, "p3: the hugepage was not released within 60 s\n");
			return 1;
		}
	}
	t1 = now();
	perf_ctl("disable\n");
	printf("p3 size=%s poisoned=%lu seconds=%.9f\n", argv[1], npoison, t1 - t0);
	return 0;
}
