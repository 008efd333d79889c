// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kept_race: an error in a base page of a kept 2 MiB hugepage (corrupt-pfn,
 * the path of a scrubber's error) racing, page after page, one thing that
 * takes the page or the hugepage's lock:
 *
 *   kept_race pin ROUNDS
 *     an io_uring buffer registration (a long-term pin) of that page.
 *     Either GUP refuses the page, or memory_failure() sees the pin and
 *     does not report the error recovered (EBUSY): never both the pin and
 *     a recovered error, after which x86 would take the page out of the
 *     direct map under the pin.
 *   kept_race punch ROUNDS
 *     a hole punch zeroing part of the hugepage next to that page, which
 *     locks the hugepage while memory_failure() holds its lock and takes
 *     the file's i_mmap_rwsem: each round must end (no deadlock), and the
 *     punch either zeroes its range or, when it meets a poisoned page,
 *     fails with EHWPOISON and changes nothing.
 *
 * Round r uses base page r + 1; ROUNDS <= 500.  Prints ok/not ok lines and
 * counts; exits 0 if all held.
 */
#include <errno.h>
#include <linux/falloc.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "check.h"
#include "hwpoison.h"

#define HP (2UL << 20)

static char *base;
static int fd, ring;
static pthread_barrier_t start;

struct corrupt_arg {
	uint64_t pfn;
	int err;
};

static void *corrupt_thread(void *p)
{
	struct corrupt_arg *a = p;

	pthread_barrier_wait(&start);
	a->err = corrupt_pfn_errno(a->pfn);
	return NULL;
}

/* Run @fn(@page) against corrupt-pfn of @page's pfn; returns the latter's errno. */
static int race(int (*fn)(unsigned long), unsigned long page, int *fn_err)
{
	struct corrupt_arg a = { .pfn = pfn_of(base + page * 4096) };
	pthread_t t;

	pthread_create(&t, NULL, corrupt_thread, &a);
	pthread_barrier_wait(&start);
	*fn_err = fn(page);
	pthread_join(t, NULL);
	return a.err;
}

static int pin(unsigned long page)
{
	struct iovec iov = { base + page * 4096, 4096 };

	return syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, &iov, 1) ?
	       errno : 0;
}

static int punch(unsigned long page)
{
	/* Half of the next page: a partial punch, zeroing within the hugepage. */
	return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			 (page + 1) * 4096, 2048) ? errno : 0;
}

static int mode_pin(unsigned long rounds)
{
	unsigned long r, both = 0, pinned = 0, refused = 0, ebusy = 0;
	struct io_uring_params p = { 0 };
	int perr, cerr;

	ring = syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0) {
		perror("io_uring_setup");
		return 2;
	}
	for (r = 0; r < rounds; r++) {
		cerr = race(pin, r + 1, &perr);
		if (!perr) {
			pinned++;
			both += !cerr;
			ebusy += cerr == EBUSY;
			syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_BUFFERS, NULL, 0);
		} else {
			refused += perr == EFAULT;
		}
	}
	printf("# %lu rounds: %lu pinned (%lu of them EBUSY), %lu refused\n",
	       rounds, pinned, ebusy, refused);
	CHECK(!both, "never a pin and a recovered error at once (%lu times)", both);
	CHECK(pinned + refused == rounds, "the registration only ever failed with EFAULT");
	close(ring);
	return 0;
}

static int mode_punch(unsigned long rounds)
{
	unsigned long r, zeroed = 0, refused = 0, wrong = 0;
	int perr, cerr;

	for (r = 0; r < rounds; r++) {
		char *half = base + (r + 2) * 4096;

		cerr = race(punch, r + 1, &perr);
		(void)cerr;
		if (!perr) {
			zeroed++;
			wrong += half[0] != 0 || half[2047] != 0 || half[2048] != 0x5a;
		} else {
			refused += perr == EHWPOISON;
			wrong += half[0] != 0x5a;
		}
	}
	printf("# %lu rounds: %lu punches zeroed, %lu refused\n", rounds, zeroed, refused);
	CHECK(zeroed + refused == rounds, "every punch zeroed or failed with EHWPOISON");
	CHECK(!wrong, "each punch changed exactly its range, or nothing (%lu wrong)", wrong);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long rounds;

	if (argc != 3 || (rounds = strtoul(argv[2], NULL, 0)) > 500 || !rounds) {
		fprintf(stderr, "usage: kept_race pin|punch ROUNDS (1..500)\n");
		return 2;
	}
	sigbus_install();
	pthread_barrier_init(&start, NULL, 2);
	base = hugetlb_memfd_map("guest-ram-race", HP, 1, &fd);
	if (!strcmp(argv[1], "pin"))
		mode_pin(rounds);
	else if (!strcmp(argv[1], "punch"))
		mode_punch(rounds);
	else
		return 2;
	munmap(base, HP);
	close(fd);
	return check_exit_status();
}
