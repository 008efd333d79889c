// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pins stock 6.12 behaviour for a HugeTLB memfd without any mfr policy:
 * MADV_HWPOISON of one 4 KiB page makes every byte of its 2 MiB hugepage
 * raise SIGBUS (BUS_MCEERR_AR, si_addr_lsb 21), other hugepages stay
 * usable, and after close the poisoned hugepage is gone from the free
 * pool (HugePages_Free one lower, HugePages_Total unchanged).
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "meminfo.h"

#define HPAGE (2UL << 20)
#define POISON_OFF 0x5000UL	/* a 4 KiB page inside hugepage 0 */

#ifndef MFD_HUGETLB
#define MFD_HUGETLB 0x0004U
#endif

static sigjmp_buf env;
static volatile sig_atomic_t got_sigbus;
static siginfo_t last;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	last = *si;
	got_sigbus = 1;
	siglongjmp(env, 1);
}

/* Read one byte; returns 1 if it raised SIGBUS (details in 'last'). */
static int read_faults(volatile char *p, char *val)
{
	got_sigbus = 0;
	if (!sigsetjmp(env, 1))
		*val = *p;
	return got_sigbus;
}

static void expect_large_sigbus(char *base, unsigned long off)
{
	char v;
	int faulted = read_faults(base + off, &v);

	CHECK(faulted, "read at +%#lx of the poisoned hugepage raises SIGBUS",
	      off);
	if (!faulted)
		return;
	CHECK(last.si_code == BUS_MCEERR_AR, "  si_code BUS_MCEERR_AR (got %d)",
	      last.si_code);
	CHECK(last.si_addr_lsb == 21, "  si_addr_lsb 21 (got %d)",
	      last.si_addr_lsb);
	CHECK(last.si_addr == base + off, "  si_addr is the address read");
}

int main(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus,
				.sa_flags = SA_SIGINFO | SA_NODEFER };
	long free_before, total_before;
	unsigned long off;
	char *base, v;
	int fd;

	sigaction(SIGBUS, &sa, NULL);
	free_before = meminfo("HugePages_Free");
	total_before = meminfo("HugePages_Total");

	fd = memfd_create("stock", MFD_HUGETLB);
	if (fd < 0 || ftruncate(fd, 2 * HPAGE)) {
		perror("hugetlb memfd");
		return 2;
	}
	base = mmap(NULL, 2 * HPAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	for (off = 0; off < 2 * HPAGE; off++)
		base[off] = (char)(off * 7 + 1);

	/* MADV_HWPOISON signals the caller from inside madvise(). */
	got_sigbus = 0;
	if (!sigsetjmp(env, 1))
		madvise(base + POISON_OFF, 4096, MADV_HWPOISON);
	CHECK(got_sigbus, "MADV_HWPOISON raises SIGBUS in the caller");
	if (got_sigbus) {
		CHECK(last.si_code == BUS_MCEERR_AR,
		      "  si_code BUS_MCEERR_AR (got %d)", last.si_code);
		CHECK(last.si_addr_lsb == 21, "  si_addr_lsb 21 (got %d)",
		      last.si_addr_lsb);
		CHECK(last.si_addr == base + POISON_OFF,
		      "  si_addr is the poisoned page");
	}

	expect_large_sigbus(base, POISON_OFF);
	expect_large_sigbus(base, 0);
	expect_large_sigbus(base, 0x1000);
	expect_large_sigbus(base, HPAGE / 2);
	expect_large_sigbus(base, HPAGE - 1);

	for (off = HPAGE; off < 2 * HPAGE; off += 4093) {
		if (read_faults(base + off, &v) || v != (char)(off * 7 + 1))
			break;
	}
	CHECK(off >= 2 * HPAGE, "the other hugepage reads back intact");
	CHECK(meminfo("HugePages_Total") == total_before,
	      "HugePages_Total unchanged while the memfd lives");

	munmap(base, 2 * HPAGE);
	close(fd);
	CHECK(meminfo("HugePages_Free") == free_before - 1,
	      "after close HugePages_Free is one lower (%ld -> %ld)",
	      free_before, meminfo("HugePages_Free"));
	CHECK(meminfo("HugePages_Total") == total_before,
	      "after close HugePages_Total is unchanged (%ld)", total_before);
	return check_exit_status();
}
