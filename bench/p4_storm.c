// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * P4, the report path under a storm: ERRORS distinct 4 KiB pages of
 * NMEMFDS memfds (HUGEPAGES 2 MiB pages each, named bench-storm-N, so that
 * mfrd's rule opts them in) poisoned through hwpoison-inject as fast as
 * it goes, round-robin over the memfds.  mfrd's log comes in on LOG (a
 * FIFO, its stderr); mfrd logs a poisoned page only after the SQLite
 * transaction holding it committed, so the time from the injection to
 * that line bounds injection-to-persisted from above.
 *
 *   p4_storm LOG GO NMEMFDS HUGEPAGES ERRORS [WAIT]
 * creates the memfds once the file GO exists (mfrd has pushed its rule),
 * then prints one "p4 key=value..." line.  Times are on the guest clock.
 * Once GO is removed again it prints "p4end log_lines=N", the page lines
 * mfrd logged by then, and exits.
 * It waits up to WAIT seconds (default 120) for a log line per error: 0
 * for a run whose mfrd rate-limits its journal, which then logs fewer.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "bench.h"

#define HPAGE (2UL << 20)
#define PER_HPAGE (HPAGE / SMALL_PAGE)

static double *injected_at, *logged_at;	/* by pfn */
static uint64_t max_pfn;
static atomic_ulong logged, log_lines;
static atomic_bool storming;	/* the arrays above are set up */
static FILE *log_in;

/*
 * "... poisoned, pfn 0x1234..." from mfrd, live or from a reconcile.  It
 * reads from mfrd's start: the script waits for mfrd's "started" line,
 * and a full pipe would stop mfrd before it (the earlier parts' records
 * are logged as it reconciles).  Page lines count from the storm on.
 */
static void *read_log(void *arg)
{
	char *line = NULL;
	size_t cap = 0;

	(void)arg;
	while (getline(&line, &cap, log_in) > 0) {
		const char *p = strstr(line, "poisoned, pfn 0x");
		uint64_t pfn;

		if (!p) {
			fprintf(stderr, "mfrd: %s", line);
			continue;
		}
		if (!atomic_load_explicit(&storming, memory_order_acquire))
			continue;
		atomic_fetch_add(&log_lines, 1);
		pfn = strtoull(p + strlen("poisoned, pfn "), NULL, 16);
		if (pfn <= max_pfn && injected_at[pfn] > 0 && !logged_at[pfn]) {
			logged_at[pfn] = now();
			atomic_fetch_add(&logged, 1);
		}
	}
	free(line);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	unsigned long nmemfds, hugepages, errors, i, m;
	double t0, t_end, *lat, wait_s;
	uint64_t *pfns;
	char **maps, name[32];
	pthread_t reader;
	int fd;

	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: p4_storm LOG GO NMEMFDS HUGEPAGES ERRORS [WAIT]\n");
		return 2;
	}
	wait_s = argc == 7 ? strtod(argv[6], NULL) : 120;
	nmemfds = strtoul(argv[3], NULL, 0);
	hugepages = strtoul(argv[4], NULL, 0);
	errors = strtoul(argv[5], NULL, 0);
	/* The head page of each hugepage is left alone. */
	if (!nmemfds || !hugepages || !errors ||
	    errors > nmemfds * hugepages * (PER_HPAGE - 1))
		return 2;

	log_in = fopen(argv[1], "r");
	if (!log_in) {
		perror(argv[1]);
		return 2;
	}
	pthread_create(&reader, NULL, read_log, NULL);
	while (access(argv[2], F_OK))
		usleep(100000);

	maps = calloc(nmemfds, sizeof(*maps));
	for (m = 0; m < nmemfds; m++) {
		snprintf(name, sizeof(name), "bench-storm-%lu", m);
		maps[m] = hugetlb_memfd(name, HPAGE, hugepages, false, &fd);
	}
	/* Error i: memfd i % n, then its pages in order, skipping heads. */
	pfns = calloc(errors, sizeof(*pfns));
	for (i = 0; i < errors; i++) {
		unsigned long k = i / nmemfds;
		unsigned long page = k / (PER_HPAGE - 1) * PER_HPAGE +
				     k % (PER_HPAGE - 1) + 1;

		pfns[i] = pfn_of(maps[i % nmemfds] + page * SMALL_PAGE);
		if (pfns[i] > max_pfn)
			max_pfn = pfns[i];
	}
	injected_at = calloc(max_pfn + 1, sizeof(double));
	logged_at = calloc(max_pfn + 1, sizeof(double));
	if (!injected_at || !logged_at)
		return 2;
	atomic_store_explicit(&storming, true, memory_order_release);

	t0 = now();
	for (i = 0; i < errors; i++) {
		injected_at[pfns[i]] = now();
		corrupt_pfn(pfns[i]);
	}
	t_end = now();
	while (atomic_load(&logged) < errors && now() - t_end < wait_s)
		usleep(20000);

	lat = calloc(errors, sizeof(*lat));
	m = 0;
	for (i = 0; i < errors; i++)
		if (logged_at[pfns[i]] > 0)
			lat[m++] = logged_at[pfns[i]] - injected_at[pfns[i]];
	qsort(lat, m, sizeof(*lat), cmp_double);
	printf("p4 memfds=%lu errors=%lu injected=%lu logged=%lu log_lines=%lu"
	       " storm_seconds=%.3f p50_ms=%.2f p99_ms=%.2f max_ms=%.2f\n",
	       nmemfds, errors, errors, m, atomic_load(&log_lines), t_end - t0,
	       m ? lat[m / 2] * 1e3 : -1, m ? lat[(m * 99 + 99) / 100 - 1] * 1e3 : -1,
	       m ? lat[m - 1] * 1e3 : -1);
	fflush(stdout);
	/* The memfds stay open: the script reads the module's dump first. */
	while (!access(argv[2], F_OK))
		usleep(100000);
	/* mfrd's page lines so far, the rate-limited journal's included. */
	printf("p4end log_lines=%lu\n", atomic_load(&log_lines));
	return m == errors || !wait_s ? 0 : 1;
}
