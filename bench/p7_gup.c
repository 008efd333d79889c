// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * P7, what the series costs GUP on a 1 GiB HugeTLB page: the two ways a
 * VMM's guest RAM is pinned most, each over the first 1023 MiB of one
 * hugepage (the last 4 KiB page is the one that may be poisoned):
 *   odirect   O_DIRECT reads of CHUNK bytes from /dev/nullb0 into it, the
 *             chunks in turn (null_blk moves no data: what is measured is
 *             pin_user_pages_fast() and the block layer around it);
 *   register  io_uring_register_buffers() of the 1023 MiB as one buffer,
 *             then its unregistration (a FOLL_LONGTERM pin of 261 888
 *             base pages and its release).
 *
 *   p7_gup odirect|register SECONDS RUNS [keep [poison]]
 * "keep" opts the memfd in (MFD_MF_KEEP_UE_MAPPED); "poison" then poisons
 * its last 4 KiB page through hwpoison-inject first, and checks that the
 * kernel refuses that page to the same calls (EFAULT) while the page
 * stays mapped at the same frame.  Prints "p7 mode=M poisoned=0|1 run=R
 * rate=X" lines, X operations per second of the guest clock; a window
 * lasts SECONDS and at least 3 operations (run 0 warms up).
 */
#include <errno.h>
#include <liburing.h>

#include "bench.h"

#define GIB (1UL << 30)
#define AREA (GIB - (1UL << 20))	/* the first 1023 MiB */
#define CHUNK (1UL << 20)
#define KPF_HUGE 17

static char *map;
static int nullb = -1;
static struct io_uring ring;

static int odirect_at(unsigned long off, unsigned long len)
{
	ssize_t n = pread(nullb, map + off, len, 0);

	if (n == (ssize_t)len)
		return 0;
	return n < 0 ? -errno : -EIO;
}

static int register_at(unsigned long off, unsigned long len)
{
	struct iovec iov = { .iov_base = map + off, .iov_len = len };
	int ret = io_uring_register_buffers(&ring, &iov, 1);

	if (ret)
		return ret;
	ret = io_uring_unregister_buffers(&ring);
	if (ret) {
		fprintf(stderr, "p7: io_uring_unregister_buffers: %s\n", strerror(-ret));
		exit(2);
	}
	return 0;
}

/* One operation of MODE over the area; the chunk moves on each time. */
static void op(bool odirect, unsigned long i)
{
	int ret = odirect ? odirect_at(i % (AREA / CHUNK) * CHUNK, CHUNK) :
			    register_at(0, AREA);

	if (ret) {
		fprintf(stderr, "p7: %s of a healthy range: %s\n",
			odirect ? "O_DIRECT read" : "buffer registration", strerror(-ret));
		exit(1);
	}
}

/* Poison the last 4 KiB page and check the premise: kept, refused. */
static void poison_last_page(bool odirect)
{
	char *last = map + GIB - SMALL_PAGE;
	uint64_t head = pfn_of(map), pfn = pfn_of(last);
	int ret;

	corrupt_pfn(pfn);
	if (!wait_hwpoison(pfn, 10)) {
		fprintf(stderr, "p7: pfn %#llx did not become HWPOISON\n",
			(unsigned long long)pfn);
		exit(1);
	}
	if (pfn_present(map) != head || pfn_present(last) != pfn) {
		fprintf(stderr, "p7: the poisoned hugepage was not kept mapped\n");
		exit(1);
	}
	/*
	 * One O_DIRECT page: a longer read that reaches the poisoned page
	 * pins the pages before it, and the block layer reads the rest
	 * through the page cache (a plain copy, blkdev_read_iter()).
	 */
	ret = odirect ? odirect_at(GIB - SMALL_PAGE, SMALL_PAGE) : register_at(0, GIB);
	if (ret != -EFAULT) {
		fprintf(stderr, "p7: %s the poisoned page returned %s, not EFAULT\n",
			odirect ? "an O_DIRECT read into" : "a buffer registration over",
			ret ? strerror(-ret) : "success");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	bool odirect, keep, poison;
	unsigned int runs, r;
	unsigned long i = 0;
	double seconds;
	int fd, ret;

	if (argc < 4 || argc > 6 ||
	    (strcmp(argv[1], "odirect") && strcmp(argv[1], "register")) ||
	    (argc >= 5 && strcmp(argv[4], "keep")) ||
	    (argc == 6 && strcmp(argv[5], "poison")))
		goto usage;
	odirect = !strcmp(argv[1], "odirect");
	seconds = strtod(argv[2], NULL);
	runs = strtoul(argv[3], NULL, 0);
	keep = argc >= 5;
	poison = argc == 6;
	if (seconds <= 0 || !runs)
		goto usage;

	map = hugetlb_memfd("bench-p7", GIB, 1, keep, &fd);
	if (pfn_of(map) % (GIB / SMALL_PAGE) ||
	    !(kpageflags(pfn_of(map)) & (1ULL << KPF_HUGE))) {
		fprintf(stderr, "p7: the memfd is not backed by a 1 GiB hugepage\n");
		return 1;
	}
	if (odirect) {
		nullb = open("/dev/nullb0", O_RDONLY | O_DIRECT);
		if (nullb < 0) {
			perror("p7: /dev/nullb0 (CONFIG_BLK_DEV_NULL_BLK)");
			return 2;
		}
	} else {
		ret = io_uring_queue_init(4, &ring, 0);
		if (ret) {
			fprintf(stderr, "p7: io_uring_queue_init: %s\n", strerror(-ret));
			return 2;
		}
	}
	if (poison)
		poison_last_page(odirect);

	for (r = 0; r < runs; r++) {
		double t0 = now(), t;
		unsigned long n = 0;

		do {
			op(odirect, i++);
			n++;
			t = now();
		} while (t - t0 < seconds || n < 3);
		printf("p7 mode=%s poisoned=%d run=%u rate=%.3f\n",
		       argv[1], poison, r, n / (t - t0));
		fflush(stdout);
	}
	return 0;
usage:
	fprintf(stderr, "usage: p7_gup odirect|register SECONDS RUNS [keep [poison]]\n");
	return 2;
}
