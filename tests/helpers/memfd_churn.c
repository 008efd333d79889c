// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * memfd_churn: what creating HugeTLB memfds costs the kernel, for the
 * security tests of an unprivileged opt-in (tests/vm/t-memfd-churn.sh,
 * tests/vm/t-memfd-scale.sh).  Memfds are empty: no hugepage is used.
 *
 *   memfd_churn cycles N keep|plain
 *       N memfd_create() + close() cycles; prints "ns_per_cycle=X".
 *   memfd_churn timing OPEN BATCH ROUNDS
 *       Per-create and per-close time of flagged memfds, with none held
 *       open, then with OPEN flagged memfds held open: ROUNDS rounds of
 *       BATCH flagged creates (timed) and closes (timed), then as many
 *       plain ones.  Prints medians as "create_ns_0=", "close_ns_0=",
 *       "plain_create_ns_0=", ..., "create_ratio_0=" (flagged / plain,
 *       thousandths), "close_ratio_0=", and the same with OPEN for 0.
 *   memfd_churn hold N keep|plain READY WAIT
 *       Creates N memfds, creates the file READY, waits until the file
 *       WAIT exists, closes them.
 *
 * Needs RLIMIT_NOFILE above OPEN + BATCH (or N): raise the hard limit
 * before dropping privileges.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "hwpoison.h"

static unsigned int memfd_flags(const char *kind)
{
	if (!strcmp(kind, "keep"))
		return MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED;
	if (!strcmp(kind, "plain"))
		return MFD_HUGETLB;
	fprintf(stderr, "memfd_churn: keep or plain, not %s\n", kind);
	exit(2);
}

static int new_memfd(unsigned int flags)
{
	int fd = memfd_create("churn", flags);

	if (fd < 0) {
		fprintf(stderr, "memfd_churn: memfd_create: %s\n", strerror(errno));
		exit(1);
	}
	return fd;
}

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Room for @n more descriptors: raise the soft limit up to the hard one. */
static void want_fds(long n)
{
	struct rlimit r;

	getrlimit(RLIMIT_NOFILE, &r);
	if (r.rlim_cur < (rlim_t)n + 64) {
		r.rlim_cur = r.rlim_max;
		setrlimit(RLIMIT_NOFILE, &r);
	}
	if (r.rlim_cur < (rlim_t)n + 64) {
		fprintf(stderr, "memfd_churn: RLIMIT_NOFILE %llu, need %ld\n",
			(unsigned long long)r.rlim_cur, n + 64);
		exit(1);
	}
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static long long median(long long *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_ll);
	return v[n / 2];
}

/* ns per create and per close of one batch of @batch memfds. */
static void time_batch(int *fds, int batch, unsigned int flags,
		       long long *create, long long *close_)
{
	long long t;
	int i;

	t = now_ns();
	for (i = 0; i < batch; i++)
		fds[i] = new_memfd(flags);
	*create = (now_ns() - t) / batch;
	t = now_ns();
	for (i = 0; i < batch; i++)
		close(fds[i]);
	*close_ = (now_ns() - t) / batch;
}

/*
 * @rounds rounds of a batch of flagged memfds then a batch of plain ones:
 * the plain batch, which the module does not track, is the control, taken
 * right after under the same load (a TCG guest's clock runs on while its
 * host is busy elsewhere).  Prints the medians of the times and of the
 * per-round ratios flagged / plain (in thousandths).
 */
static void time_batches(int batch, int rounds, const char *tag)
{
	long long *v = calloc(6 * rounds, sizeof(*v));
	long long *kc = v, *kx = v + rounds, *pc = v + 2 * rounds;
	long long *px = v + 3 * rounds, *rc = v + 4 * rounds, *rx = v + 5 * rounds;
	int *fds = calloc(batch, sizeof(*fds));
	int r;

	if (!v || !fds)
		exit(1);
	for (r = 0; r < rounds; r++) {
		time_batch(fds, batch, MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED,
			   &kc[r], &kx[r]);
		time_batch(fds, batch, MFD_HUGETLB, &pc[r], &px[r]);
		rc[r] = kc[r] * 1000 / (pc[r] ?: 1);
		rx[r] = kx[r] * 1000 / (px[r] ?: 1);
	}
	printf("create_ns_%s=%lld\nclose_ns_%s=%lld\n", tag, median(kc, rounds),
	       tag, median(kx, rounds));
	printf("plain_create_ns_%s=%lld\nplain_close_ns_%s=%lld\n", tag,
	       median(pc, rounds), tag, median(px, rounds));
	printf("create_ratio_%s=%lld\nclose_ratio_%s=%lld\n", tag,
	       median(rc, rounds), tag, median(rx, rounds));
	free(v);
	free(fds);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "cycles")) {
		long n = atol(argv[2]), i;
		unsigned int flags = memfd_flags(argv[3]);
		long long t = now_ns();

		for (i = 0; i < n; i++)
			close(new_memfd(flags));
		printf("ns_per_cycle=%lld\n", n ? (now_ns() - t) / n : 0);
		return 0;
	}
	if (argc == 5 && !strcmp(argv[1], "timing")) {
		int open_n = atoi(argv[2]), batch = atoi(argv[3]);
		int rounds = atoi(argv[4]), i;
		char tag[32];

		if (open_n < 0 || batch < 1 || rounds < 1)
			return 2;
		want_fds(open_n + batch);
		time_batches(batch, rounds, "0");
		for (i = 0; i < open_n; i++)
			new_memfd(MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED);
		snprintf(tag, sizeof(tag), "%d", open_n);
		time_batches(batch, rounds, tag);
		return 0;
	}
	if (argc == 6 && !strcmp(argv[1], "hold")) {
		long n = atol(argv[2]), i;
		unsigned int flags = memfd_flags(argv[3]);
		FILE *f;

		want_fds(n);
		for (i = 0; i < n; i++)
			new_memfd(flags);
		f = fopen(argv[4], "w");
		if (!f)
			return 1;
		fclose(f);
		while (access(argv[5], F_OK))
			usleep(20000);
		return 0;
	}
	fprintf(stderr, "usage: memfd_churn cycles N keep|plain | timing OPEN BATCH ROUNDS | hold N keep|plain READY WAIT\n");
	return 2;
}
