// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kept_fault_race SECONDS: the keep decision races new mappings.
 *
 * Round after round for SECONDS seconds: a fresh kept 2 MiB memfd, filled;
 * two threads map it anew again and again, one reading a healthy word (a
 * fault through hugetlb_no_page() each time), the other through a mapping
 * registered for userfaultfd MINOR faults, installed with UFFDIO_CONTINUE;
 * meanwhile a third thread poisons one 4 KiB page P with MADV_HWPOISON.
 * memory_failure() sets the hugepage's hwpoison flag before it asks the
 * policy, so a fault in between must wait for the answer: a healthy word
 * never raises SIGBUS and UFFDIO_CONTINUE never fails with EIO for a
 * hugepage the module keeps.  Each round's memfd is closed (the hugepage
 * offlined) and the pool grown back by one; at most MAX_ROUNDS rounds, and
 * fewer if the pool cannot grow after MIN_ROUNDS.  TAP lines; exit 1 on a
 * failed check, 2 on a failed setup.  Root, mfr.ko loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>

#include "check.h"
#include "hwpoison.h"

#define HP (2UL << 20)
#define P_OFF 0x7000UL		/* the page poisoned each round */
#define H_OFF 0x9008UL		/* a healthy word the readers read */
#define POOL "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
/*
 * Each round takes a hugepage for good: at most this many, and at least
 * MIN_ROUNDS before a pool that cannot grow ends the run early.
 */
#define MAX_ROUNDS 256
#define MIN_ROUNDS 16

static int memfd;
static volatile int round_over;
static unsigned long bad_sigbus, bad_continue, faults, continues;

static char *map_memfd(void)
{
	char *m = mmap(NULL, HP, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);

	if (m == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return m;
}

/* New mappings, each faulting the hugepage in through a read of H. */
static void *fault_thread(void *arg)
{
	struct sigbus_record rec;

	(void)arg;
	while (!round_over) {
		char *m = map_memfd();
		volatile uint64_t v = 0;

		SIGBUS_TRY(rec, v = WORD_AT(m, H_OFF));
		if (rec.got || v != H_OFF) {
			if (!bad_sigbus++)
				printf("# read of a healthy word: SIGBUS %d lsb %d, value %#llx\n",
				       rec.got, rec.lsb, (unsigned long long)v);
		}
		faults++;
		munmap(m, HP);
	}
	return NULL;
}

/* New mappings registered for MINOR faults, installed with CONTINUE. */
static void *continue_thread(void *arg)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_MINOR_HUGETLBFS };
	int uffd = syscall(__NR_userfaultfd, O_CLOEXEC);

	(void)arg;
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		perror("userfaultfd");
		exit(2);
	}
	while (!round_over) {
		char *m = map_memfd();
		struct uffdio_register reg = {
			.range = { .start = (uintptr_t)m, .len = HP },
			.mode = UFFDIO_REGISTER_MODE_MINOR,
		};
		struct uffdio_continue cont = {
			.range = { .start = (uintptr_t)m, .len = HP },
		};

		if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
			perror("UFFDIO_REGISTER");
			exit(2);
		}
		if (ioctl(uffd, UFFDIO_CONTINUE, &cont) && errno != EEXIST) {
			if (!bad_continue++)
				printf("# UFFDIO_CONTINUE: %s\n", strerror(errno));
		}
		continues++;
		munmap(m, HP);
	}
	close(uffd);
	return NULL;
}

static int write_long_file(const char *path, long v)
{
	FILE *f = fopen(path, "w");

	return f && fprintf(f, "%ld\n", v) >= 0 && !fclose(f);
}

/*
 * Grow the 2 MiB pool by one page, compacting memory once if it cannot;
 * false (said) if it still cannot.  Every round leaves a 2 MiB block with
 * an offline 4 KiB page in it, so a long suite can run out of free blocks.
 */
static int refill_pool(void)
{
	long n = read_long_file(POOL);

	for (int tries = 0; tries < 2; tries++) {
		if (write_long_file(POOL, n + 1) && read_long_file(POOL) == n + 1)
			return 1;
		write_long_file("/proc/sys/vm/compact_memory", 1);
	}
	printf("# cannot grow the 2 MiB pool to %ld pages\n", n + 1);
	return 0;
}

static void *poison_thread(void *addr)
{
	struct sigbus_record rec;

	SIGBUS_SYSCALL(rec, madvise(addr, 4096, MADV_HWPOISON));
	return (void *)(long)(rec.got && rec.lsb == 12);
}

int main(int argc, char **argv)
{
	unsigned long rounds = 0, poisoned = 0;
	struct timespec t0, now;
	int seconds;

	if (argc != 2 || (seconds = atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: kept_fault_race SECONDS\n");
		return 2;
	}
	sigbus_install();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		pthread_t f, c, p;
		char *base;
		void *ok;

		memfd = memfd_create("guest-ram-fault-race",
				     MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED);
		if (memfd < 0 || ftruncate(memfd, HP)) {
			perror("memfd");
			return 2;
		}
		base = map_memfd();
		for (unsigned long off = 0; off < HP; off += 8)
			WORD_AT(base, off) = off;
		round_over = 0;
		pthread_create(&f, NULL, fault_thread, NULL);
		pthread_create(&c, NULL, continue_thread, NULL);
		usleep(1000 * (rounds % 7));
		pthread_create(&p, NULL, poison_thread, base + P_OFF);
		pthread_join(p, &ok);
		poisoned += ok != NULL;
		usleep(2000);
		round_over = 1;
		pthread_join(f, NULL);
		pthread_join(c, NULL);
		munmap(base, HP);
		close(memfd);
		rounds++;
		/* The hugepage left the pool with its poisoned page: refill. */
		if (!refill_pool()) {
			if (rounds < MIN_ROUNDS)
				return 2;
			break;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec - t0.tv_sec < seconds && rounds < MAX_ROUNDS);

	printf("# %lu rounds, %lu faults, %lu UFFDIO_CONTINUE\n", rounds, faults, continues);
	CHECK(poisoned == rounds, "every round's MADV_HWPOISON: SIGBUS lsb 12 (%lu of %lu)",
	      poisoned, rounds);
	CHECK(!bad_sigbus, "a healthy word of a kept hugepage never raised SIGBUS (%lu did)",
	      bad_sigbus);
	CHECK(!bad_continue, "UFFDIO_CONTINUE of a kept hugepage never failed (%lu did)",
	      bad_continue);
	return check_exit_status();
}
