// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mce_target: the guest side of a real machine check injected by the
 * host through QEMU's monitor ("mce" command) into one 4 KiB page of a
 * 2 MiB HugeTLB memfd opted in with MFD_MF_KEEP_UE_MAPPED.
 *
 *   mce_target ao|ar PAGE REQUEST_FILE
 *     ao  this task is PR_MCE_KILL_EARLY and sleeps; the host injects an
 *         action-optional error (memory scrub): expect SIGBUS
 *         BUS_MCEERR_AO for exactly that page, lsb 12
 *     ar  this task pins itself to CPU 1 and spins in user space; the host
 *         injects an action-required error (data load) on CPU 1: expect
 *         SIGBUS BUS_MCEERR_AR with the exact si_addr, lsb 12
 *
 * The physical address of the page is written to REQUEST_FILE as
 * "ao|ar CPU 0xPHYS" for the host to inject, within 60 s.  Then every
 * other byte of the hugepage must still read back, and the hugepage must
 * still be mapped.  Prints "ok"/"not ok" lines; exits 0 if all held.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>

#include "check.h"
#include "hwpoison.h"

#define HPAGE (2UL << 20)
#define SMALL 4096UL
#define AR_CPU 1

static volatile sig_atomic_t got, timed_out;
static volatile int got_code, got_lsb;
static void *volatile got_addr;
static sigjmp_buf spin_env;
static bool jump_out;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	got_code = si->si_code;
	got_lsb = si->si_addr_lsb;
	got_addr = si->si_addr;
	got = 1;
	if (jump_out)
		siglongjmp(spin_env, 1);
}

static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
}

/*
 * Spin in user space until the SIGBUS (or SIGALRM): a synchronous
 * machine check is only recoverable when it interrupts user mode, so no
 * system call here, not even a clock read (it may not be a vDSO one).
 */
static __attribute__((noinline)) void spin(void)
{
	jump_out = true;
	if (sigsetjmp(spin_env, 0))
		return;
	while (!got && !timed_out)
		;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus,
				.sa_flags = SA_SIGINFO | SA_NODEFER };
	unsigned long page, off, bad = 0;
	const char *mode;
	char *base, *target;
	uint64_t phys;
	bool ar;
	int fd;

	if (argc != 4 || (strcmp(argv[1], "ao") && strcmp(argv[1], "ar"))) {
		fprintf(stderr, "usage: mce_target ao|ar PAGE REQUEST_FILE\n");
		return 2;
	}
	mode = argv[1];
	ar = !strcmp(mode, "ar");
	page = strtoul(argv[2], NULL, 0);
	if (page >= HPAGE / SMALL) {
		fprintf(stderr, "PAGE must be below %lu\n", HPAGE / SMALL);
		return 2;
	}

	fd = memfd_create(ar ? "mce-ar" : "mce-ao",
			  MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED);
	if (fd < 0 || ftruncate(fd, HPAGE)) {
		perror("memfd_create");
		return 2;
	}
	base = mmap(NULL, HPAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	for (off = 0; off < HPAGE; off += 8)
		*(uint64_t *)(base + off) = off ^ 0x5a5a5a5a5a5a5a5aULL;
	target = base + page * SMALL;
	phys = pfn_of(target) << 12;
	sigaction(SIGBUS, &sa, NULL);
	signal(SIGALRM, on_alarm);

	if (ar) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(AR_CPU, &set);
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("sched_setaffinity");
			return 2;
		}
		mce_request(argv[3], mode, AR_CPU, phys);
		alarm(60);
		spin();
	} else {
		if (prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 0)) {
			perror("PR_MCE_KILL");
			return 2;
		}
		mce_request(argv[3], mode, 0, phys);
		alarm(60);
		while (!got && !timed_out)
			pause();
	}

	CHECK(got, "SIGBUS delivered");
	CHECK(got_code == (ar ? BUS_MCEERR_AR : BUS_MCEERR_AO),
	      "si_code %s (got %d)", ar ? "BUS_MCEERR_AR" : "BUS_MCEERR_AO",
	      got_code);
	CHECK(got_addr == target, "si_addr is the page (%p, expected %p)",
	      got_addr, (void *)target);
	CHECK(got_lsb == 12, "si_addr_lsb 12 (got %d)", got_lsb);
	CHECK(kpageflags(phys >> 12) & (1ULL << KPF_HWPOISON),
	      "pfn %#llx is HWPOISON", (unsigned long long)(phys >> 12));
	for (off = 0; off < HPAGE; off += 8) {
		if (off / SMALL == page)
			continue;
		if (*(uint64_t *)(base + off) != (off ^ 0x5a5a5a5a5a5a5a5aULL))
			bad++;
	}
	CHECK(!bad, "every other byte of the hugepage reads back (%lu words wrong)",
	      bad);
	CHECK(pfn_of(base) == (phys >> 12) - page,
	      "the hugepage is still mapped at the same frame");
	return check_failures ? 1 : 0;
}
