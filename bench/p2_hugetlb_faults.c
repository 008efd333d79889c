// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * P2, what the hooks cost on hugetlb's hot paths, with the two loops mm
 * uses for hugetlb fault scalability:
 *   fault  map a shared hugetlb area, write-fault each hugepage, unmap;
 *   fork   map, write-fault a few hugepages, fork, the child exits, unmap;
 *   both   the two side by side.
 * INSTANCES processes run each loop from start to end, instance i on CPU
 * i mod the online CPUs (with "both", its fault and fork loops share it:
 * under QEMU's -icount a fork loop alone on a vCPU next to a fault loop
 * on the other made no progress at all); the rate of a run is the operations all of
 * them completed over RUNS windows of SECONDS each, measured on the
 * guest clock (run 0 warms up, the report leaves it out).
 *
 *   p2_hugetlb_faults fault|fork|both INSTANCES SECONDS RUNS [keep]
 * "keep" opts each memfd in (MFD_MF_KEEP_UE_MAPPED).  Prints
 * "p2 workload=W instances=N run=R rate=X" lines, X per second.
 */
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "bench.h"

#define HPAGE (2UL << 20)
#define FAULT_AREA 8	/* hugepages the fault loop maps and touches */
#define FORK_AREA 2	/* hugepages the fork loop maps before forking */

enum loop { FAULT, FORK };

static bool keep;

static int area(const char *name, unsigned long nr)
{
	unsigned int flags = memfd_huge_flags(HPAGE) |
			     (keep ? MFD_MF_KEEP_UE_MAPPED : 0);
	int fd = memfd_create(name, flags);

	if (fd < 0 || ftruncate(fd, nr * HPAGE)) {
		perror("memfd_create/ftruncate");
		exit(2);
	}
	return fd;
}

static char *map_and_touch(int fd, unsigned long nr)
{
	char *p = mmap(NULL, nr * HPAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	unsigned long i;

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	for (i = 0; i < nr; i++)
		*(volatile char *)(p + i * HPAGE) = 1;
	return p;
}

static __attribute__((noreturn)) void run_loop(enum loop loop, _Atomic unsigned long *ops)
{
	int fd = area(loop == FAULT ? "bench-p2-fault" : "bench-p2-fork",
		      loop == FAULT ? FAULT_AREA : FORK_AREA);

	for (;;) {
		if (loop == FAULT) {
			munmap(map_and_touch(fd, FAULT_AREA), FAULT_AREA * HPAGE);
			atomic_fetch_add(ops, FAULT_AREA);
		} else {
			char *p = map_and_touch(fd, FORK_AREA);
			pid_t pid = fork();

			if (pid == 0)
				_exit(0);
			if (pid < 0 || waitpid(pid, NULL, 0) != pid) {
				perror("fork");
				exit(2);
			}
			munmap(p, FORK_AREA * HPAGE);
			atomic_fetch_add(ops, 1);
		}
	}
}

static pid_t start(enum loop loop, unsigned int cpu, _Atomic unsigned long *ops)
{
	pid_t pid = fork();
	cpu_set_t set;

	if (pid)
		return pid;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	run_loop(loop, ops);
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "fault", "fork" };
	unsigned int instances, runs, ncpus, i, r, n = 0;
	_Atomic unsigned long *ops;
	bool loops[2];
	pid_t pids[128];
	double seconds;

	if ((argc != 5 && argc != 6) || (argc == 6 && strcmp(argv[5], "keep")))
		goto usage;
	loops[FAULT] = !strcmp(argv[1], "fault") || !strcmp(argv[1], "both");
	loops[FORK] = !strcmp(argv[1], "fork") || !strcmp(argv[1], "both");
	instances = strtoul(argv[2], NULL, 0);
	seconds = strtod(argv[3], NULL);
	runs = strtoul(argv[4], NULL, 0);
	keep = argc == 6;
	if (!(loops[FAULT] || loops[FORK]) || !instances || instances > 64 ||
	    seconds <= 0 || !runs)
		goto usage;

	ops = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ops == MAP_FAILED)
		return 2;
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	for (i = 0; i < instances; i++)
		for (r = FAULT; r <= FORK; r++)
			if (loops[r])
				pids[n++] = start(r, i % ncpus, &ops[r]);

	for (r = 0; r < runs; r++) {
		unsigned long c0[2] = { ops[FAULT], ops[FORK] }, c1[2];
		double t0 = now(), t1;
		unsigned int l;

		usleep(seconds * 1e6);
		c1[FAULT] = ops[FAULT];
		c1[FORK] = ops[FORK];
		t1 = now();
		for (l = FAULT; l <= FORK; l++)
			if (loops[l])
				printf("p2 workload=%s%s instances=%u run=%u rate=%.1f\n",
				       names[l], loops[!l] ? "+both" : "", instances, r,
				       (c1[l] - c0[l]) / (t1 - t0));
		fflush(stdout);
	}
	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return 0;
usage:
	fprintf(stderr, "usage: p2_hugetlb_faults fault|fork|both INSTANCES SECONDS RUNS [keep]\n");
	return 2;
}
