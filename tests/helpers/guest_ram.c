// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * guest_ram: a stand-in for a VMM's guest RAM.  Threads cycle through a
 * 2 MiB HugeTLB memfd reading, checking and rewriting 64-bit words while
 * an uncorrected error is injected into one 4 KiB page.  A SIGBUS marks
 * the range it names (si_addr, si_addr_lsb) as lost, as a VMM forwards
 * the error to its guest, which stops using that memory; every other
 * word must keep its value.
 *
 *   guest_ram [options] NAME SIZE_MIB SECONDS
 *     --keep           create the memfd with MFD_MF_KEEP_UE_MAPPED (else
 *                      it is up to mfrd's rules)
 *     --replace        when an error takes a whole hugepage (the kernel's
 *                      default handling), map 4 KiB pages over it, as a
 *                      VMM does, and go on using all of it but the page
 *                      the SIGBUS names (its content starts afresh)
 *     --threads N      worker threads (default: online CPUs)
 *     --poison PAGE    MADV_HWPOISON 4 KiB page PAGE half way through
 *     --ready FILE     when the run is over, write our pid to FILE ...
 *     --wait FILE      ... and wait for FILE to exist before closing
 *
 * Prints what happened and exits 0 if no word ever read back wrong and
 * the injected error was signalled; 1 otherwise.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <time.h>

#include "hwpoison.h"

#define HPAGE		(2UL << 20)
#define SMALL		4096UL
#define WORDS		(SMALL / sizeof(uint64_t))

static char *base;
static unsigned long npages;		/* 4 KiB pages */
/* Per 4 KiB page: 0 in use, LOST, or FRESH (replaced, content unknown). */
enum { LOST = 1, FRESH = 2 };
static _Atomic unsigned char *lost;
static bool replace;
static _Atomic unsigned char *replaced;	/* per hugepage */
static unsigned long replaced_pages;
/*
 * Workers hold it shared while they touch a page, so that --replace can
 * swap a range's memory under nobody's feet; taken in every mode so
 * that modes compare.
 */
static pthread_rwlock_t map_lock = PTHREAD_RWLOCK_INITIALIZER;
static atomic_bool stop, poisoned;
static atomic_ulong mismatches;

struct report {
	struct sigbus_record rec;
	bool expected;			/* the injecting thread's own error */
};

static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
static struct report reports[16];
static unsigned int nreports;

/*
 * 4 KiB pages over the hugepage-sized range at OFF (the hugepage is gone),
 * all FRESH but the page at BAD.  Called without map_lock held.
 */
static void replace_range(unsigned long off, unsigned long size, unsigned long bad)
{
	unsigned long p;

	pthread_rwlock_wrlock(&map_lock);
	if (atomic_exchange(&replaced[off / HPAGE], 1)) {
		/* Another thread's SIGBUS for this hugepage got here first. */
		pthread_rwlock_unlock(&map_lock);
		return;
	}
	if (mmap(base + off, size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
		perror("mmap 4 KiB pages over a lost hugepage");
		exit(1);
	}
	for (p = off / SMALL; p < (off + size) / SMALL; p++)
		if (p != bad / SMALL) {
			atomic_store(&lost[p], FRESH);
			replaced_pages++;
		}
	pthread_rwlock_unlock(&map_lock);
}

/* Mark the range a SIGBUS names as lost, once, and remember the signal. */
static void record_sigbus(const struct sigbus_record *rec, bool expected)
{
	unsigned long size = 1UL << (rec->lsb ? rec->lsb : 12);
	unsigned long off = ((char *)rec->addr - base) & ~(size - 1);
	bool whole = replace && size > SMALL;
	unsigned long p, fresh = 0;

	/* A late signal for a hugepage already replaced: nothing is lost. */
	for (p = off / SMALL; p < (off + size) / SMALL && p < npages &&
	     !(whole && atomic_load(&replaced[off / HPAGE])); p++) {
		unsigned char in_use = 0;

		if (atomic_compare_exchange_strong(&lost[p], &in_use, LOST))
			fresh++;
	}
	pthread_mutex_lock(&report_lock);
	if ((fresh || expected) && nreports < 16)
		reports[nreports++] = (struct report){ *rec, expected };
	pthread_mutex_unlock(&report_lock);
	if (whole && fresh)
		replace_range(off, size, (char *)rec->addr - base);
}

static inline uint64_t pattern(unsigned long word, unsigned long round)
{
	return (word * 0x9e3779b97f4a7c15ULL) ^ round;
}

struct worker {
	pthread_t thread;
	unsigned int id, nthreads;
	unsigned long words_before, words_after;
	long poison_page;			/* -1: not this thread */
	double poison_at;			/* seconds from the start */
	struct timespec start;
};

static double since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) / 1e9;
}

static void inject(struct worker *w)
{
	char *addr = base + w->poison_page * SMALL;

	sigbus_last.got = 0;
	if (!sigsetjmp(sigbus_env, 0)) {
		if (madvise(addr, SMALL, MADV_HWPOISON))
			perror("madvise(MADV_HWPOISON)");
	}
	if (sigbus_last.got)
		record_sigbus(&sigbus_last, true);
	atomic_store(&poisoned, true);
}

/*
 * Check and rewrite one 4 KiB page (a FRESH one is only written); false
 * if it raised SIGBUS.  Its own function so that nothing the caller keeps
 * in registers lives across the siglongjmp().
 */
static __attribute__((noinline)) bool touch_page(unsigned long p,
						  unsigned long round, bool fresh)
{
	volatile uint64_t *word = (volatile uint64_t *)(base + p * SMALL);
	unsigned long i;

	sigbus_last.got = 0;
	if (sigsetjmp(sigbus_env, 0))
		return false;
	for (i = 0; i < WORDS; i++) {
		unsigned long n = p * WORDS + i;

		if (!fresh && word[i] != pattern(n, round))
			atomic_fetch_add(&mismatches, 1);
		word[i] = pattern(n, round + 1);
	}
	if (fresh)
		atomic_store(&lost[p], 0);
	return true;
}

/* One page under map_lock; a SIGBUS is recorded once the lock is dropped. */
static bool visit_page(unsigned long p, unsigned long round)
{
	unsigned char state = atomic_load(&lost[p]);
	bool ok;

	if (state == LOST)
		return false;
	pthread_rwlock_rdlock(&map_lock);
	ok = touch_page(p, round, state == FRESH);
	pthread_rwlock_unlock(&map_lock);
	if (!ok)
		record_sigbus(&sigbus_last, false);
	return ok;
}

/*
 * Each thread owns the pages congruent to its id, so a word's expected
 * value depends only on how many rounds this thread made over it.
 */
static void *work(void *arg)
{
	struct worker *w = arg;
	unsigned long round, p;

	for (round = 0; !atomic_load(&stop); round++) {
		unsigned long done = 0;

		if (w->poison_page >= 0 && !atomic_load(&poisoned) &&
		    since(&w->start) >= w->poison_at)
			inject(w);
		for (p = w->id; p < npages; p += w->nthreads)
			if (visit_page(p, round))
				done += WORDS;
		if (atomic_load(&poisoned))
			w->words_after += done;
		else
			w->words_before += done;
	}
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: guest_ram [--keep] [--replace] [--threads N] [--poison PAGE] "
		"[--ready FILE] [--wait FILE] NAME SIZE_MIB SECONDS\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned int flags = MFD_HUGETLB | (21U << MFD_HUGE_SHIFT);
	const char *ready = NULL, *wait_file = NULL, *name;
	unsigned int nthreads = sysconf(_SC_NPROCESSORS_ONLN), t;
	unsigned long before = 0, after = 0, lost_pages = 0, p, i;
	long poison_page = -1;
	double seconds, t_before, t_after, elapsed;
	struct worker *w;
	struct timespec start;
	bool signalled = false;
	int fd, ai;

	for (ai = 1; ai < argc && argv[ai][0] == '-'; ai++) {
		if (!strcmp(argv[ai], "--keep"))
			flags |= MFD_MF_KEEP_UE_MAPPED;
		else if (!strcmp(argv[ai], "--replace"))
			replace = true;
		else if (!strcmp(argv[ai], "--threads") && ai + 1 < argc)
			nthreads = strtoul(argv[++ai], NULL, 0);
		else if (!strcmp(argv[ai], "--poison") && ai + 1 < argc)
			poison_page = strtol(argv[++ai], NULL, 0);
		else if (!strcmp(argv[ai], "--ready") && ai + 1 < argc)
			ready = argv[++ai];
		else if (!strcmp(argv[ai], "--wait") && ai + 1 < argc)
			wait_file = argv[++ai];
		else
			usage();
	}
	if (argc - ai != 3 || !nthreads)
		usage();
	name = argv[ai];
	npages = strtoul(argv[ai + 1], NULL, 0) * (1UL << 20) / SMALL;
	seconds = strtod(argv[ai + 2], NULL);
	if (!npages || npages % (HPAGE / SMALL) || seconds <= 0 ||
	    poison_page >= (long)npages)
		usage();

	fd = memfd_create(name, flags);
	if (fd < 0 || ftruncate(fd, npages * SMALL)) {
		perror("memfd_create/ftruncate");
		return 1;
	}
	base = mmap(NULL, npages * SMALL, PROT_READ | PROT_WRITE, MAP_SHARED,
		    fd, 0);
	lost = calloc(npages, 1);
	replaced = calloc(npages * SMALL / HPAGE, 1);
	w = calloc(nthreads, sizeof(*w));
	if (base == MAP_FAILED || !lost || !replaced || !w) {
		perror("mmap");
		return 1;
	}
	for (i = 0; i < npages * WORDS; i++)
		((uint64_t *)base)[i] = pattern(i, 0);
	sigbus_install();
	printf("guest_ram: memfd %s, %lu MiB of 2 MiB pages, %u threads, %.0f s\n",
	       name, npages * SMALL >> 20, nthreads, seconds);
	fflush(stdout);

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (t = 0; t < nthreads; t++) {
		w[t] = (struct worker){ .id = t, .nthreads = nthreads,
					.poison_page = -1, .start = start };
		if (poison_page >= 0 && (unsigned long)poison_page % nthreads == t) {
			w[t].poison_page = poison_page;
			w[t].poison_at = seconds / 2;
		}
		pthread_create(&w[t].thread, NULL, work, &w[t]);
	}
	while (since(&start) < seconds)
		usleep(10000);
	atomic_store(&stop, true);
	elapsed = since(&start);
	for (t = 0; t < nthreads; t++) {
		pthread_join(w[t].thread, NULL);
		before += w[t].words_before;
		after += w[t].words_after;
	}
	for (p = 0; p < npages; p++)
		lost_pages += lost[p] == LOST;

	for (i = 0; i < nreports; i++) {
		struct sigbus_record *r = &reports[i].rec;
		long page = ((char *)r->addr - base) / (long)SMALL;

		printf("sigbus page=%ld code=%s lsb=%d exact=%d%s\n", page,
		       r->code == BUS_MCEERR_AR ? "AR" :
		       r->code == BUS_MCEERR_AO ? "AO" : "other", r->lsb,
		       page == poison_page &&
		       r->addr == base + poison_page * SMALL,
		       reports[i].expected ? "" : " (touched later)");
		signalled |= page <= poison_page &&
			     poison_page < page + (1L << r->lsb) / (long)SMALL;
	}
	printf("lost %lu KiB of %lu MiB; %lu words checked, %lu wrong\n",
	       lost_pages * 4, npages * SMALL >> 20, before + after,
	       (unsigned long)atomic_load(&mismatches));
	if (replace)
		printf("replaced %lu KiB with 4 KiB pages\n", replaced_pages * 4);
	if (poison_page >= 0) {
		t_before = seconds / 2;
		t_after = elapsed - t_before;
		printf("throughput: %.1f Mwords/s before the error, %.1f after\n",
		       before / t_before / 1e6, after / t_after / 1e6);
	}
	fflush(stdout);

	if (ready) {
		char tmp[4096];
		FILE *f;

		snprintf(tmp, sizeof(tmp), "%s.tmp", ready);
		f = fopen(tmp, "w");
		if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f) ||
		    rename(tmp, ready)) {
			perror(ready);
			return 1;
		}
	}
	while (wait_file && access(wait_file, F_OK))
		usleep(50000);
	munmap(base, npages * SMALL);
	close(fd);
	printf("guest_ram: closed\n");
	return atomic_load(&mismatches) ||
	       (poison_page >= 0 && !signalled) ? 1 : 0;
}
