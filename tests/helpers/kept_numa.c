// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kept_numa: migration between NUMA nodes around a kept hugepage.
 *
 *   kept_numa HOLD_CMD
 *
 * A kept memfd of three 2 MiB hugepages A, B, C is bound to node 0 and
 * filled; one 4 KiB page P of A is poisoned with MADV_HWPOISON.  Then:
 * - move_pages() of A and B to node 1 refuses A (-EBUSY: a poisoned
 *   hugepage is not migratable) and moves B;
 * - mbind(MPOL_MF_MOVE | MPOL_MF_STRICT) of A and C to node 1 fails with
 *   EIO for A and moves C;
 * - A is still mapped at the same frame on node 0, P is still HWPOISON,
 *   and every healthy word of A, B and C reads back (under MADV_HWPOISON
 *   nothing traps a read of P itself: the checks say what the kernel did);
 * - HOLD_CMD (a shell command: the caller's per-node checks) succeeds
 *   while the memfd lives.
 * The memfd is closed at the end (A is then offlined).  Prints ok/not ok
 * lines; exits 0 if all held.
 */
#include <errno.h>
#include <sys/syscall.h>

#include "check.h"
#include "hwpoison.h"

/* <numaif.h> is libnuma's; these are the kernel's uAPI values. */
#define MPOL_BIND 2
#define MPOL_MF_STRICT (1 << 0)
#define MPOL_MF_MOVE (1 << 1)

#define HP (2UL << 20)
#define P_OFF 0x3000UL

static char *base;

static uint64_t pattern(unsigned long off)
{
	return (off + 1) * 0x9E3779B97F4A7C15ULL;
}

static long bind_to(char *addr, unsigned long len, int node, unsigned int flags)
{
	unsigned long mask = 1UL << node;

	return syscall(SYS_mbind, addr, len, MPOL_BIND, &mask, sizeof(mask) * 8 + 1, flags);
}

/* The node of the page at @addr, or a negative errno. */
static int node_of(char *addr)
{
	void *pages[1] = { addr };
	int status = -1;

	if (syscall(SYS_move_pages, 0, 1UL, pages, NULL, &status, 0))
		return -errno;
	return status;
}

/* Every healthy word of [from, to) holds its pattern. */
static int intact(unsigned long from, unsigned long to)
{
	for (unsigned long off = from; off < to; off += 8)
		if ((off & ~4095UL) != P_OFF && WORD_AT(base, off) != pattern(off))
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	char *a, *b, *c;
	void *pages[2];
	int nodes[2] = { 1, 1 }, status[2] = { 1, 1 };
	struct sigbus_record rec;
	uint64_t pfn_a;
	long rc;
	int memfd;

	if (argc != 2) {
		fprintf(stderr, "usage: kept_numa HOLD_CMD\n");
		return 2;
	}
	sigbus_install();
	memfd = memfd_create("guest-ram-numa",
			     MFD_HUGETLB | (21U << MFD_HUGE_SHIFT) | MFD_MF_KEEP_UE_MAPPED);
	if (memfd < 0 || ftruncate(memfd, 3 * HP)) {
		perror("memfd_create");
		return 2;
	}
	base = mmap(NULL, 3 * HP, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	a = base;
	b = base + HP;
	c = base + 2 * HP;
	rc = bind_to(base, 3 * HP, 0, 0);
	CHECK(rc == 0, "mbind of the memfd's mapping to node 0 (%s)", rc ? strerror(errno) : "ok");
	for (unsigned long off = 0; off < 3 * HP; off += 8)
		WORD_AT(base, off) = pattern(off);
	CHECK(node_of(a) == 0 && node_of(b) == 0 && node_of(c) == 0,
	      "A, B and C on node 0 (%d %d %d)", node_of(a), node_of(b), node_of(c));
	pfn_a = pfn_of(a);

	SIGBUS_SYSCALL(rec, rc = madvise(a + P_OFF, 4096, MADV_HWPOISON));
	CHECK(rc == 0 && rec.got && rec.lsb == 12 && rec.addr == a + P_OFF,
	      "MADV_HWPOISON of P: 0, SIGBUS at P, lsb 12 (rc %ld, got %d, lsb %d)",
	      rc, rec.got, rec.lsb);
	CHECK(wait_hwpoison(pfn_a + P_OFF / 4096, 60), "P is HWPOISON");

	pages[0] = a;
	pages[1] = b;
	rc = syscall(SYS_move_pages, 0, 2UL, pages, nodes, status, MPOL_MF_MOVE);
	CHECK(rc >= 0 && status[0] == -EBUSY && status[1] == 1,
	      "move_pages of A and B to node 1: A refused with EBUSY, B moved (rc %ld, status %d %d)",
	      rc, status[0], status[1]);

	errno = 0;
	rc = bind_to(a, HP, 1, MPOL_MF_MOVE | MPOL_MF_STRICT);
	CHECK(rc == -1 && errno == EIO,
	      "mbind MPOL_MF_MOVE|MPOL_MF_STRICT of A to node 1: EIO (%ld, %s)", rc,
	      strerror(errno));
	rc = bind_to(c, HP, 1, MPOL_MF_MOVE | MPOL_MF_STRICT);
	CHECK(rc == 0, "mbind MPOL_MF_MOVE|MPOL_MF_STRICT of C to node 1 (%s)",
	      rc ? strerror(errno) : "ok");
	CHECK(node_of(a) == 0 && node_of(b) == 1 && node_of(c) == 1,
	      "A on node 0, B and C on node 1 (%d %d %d)", node_of(a), node_of(b), node_of(c));

	CHECK(pfn_of(a) == pfn_a, "A is still mapped at the same frame");
	CHECK(kpageflags(pfn_a + P_OFF / 4096) & (1ULL << KPF_HWPOISON), "P is still HWPOISON");
	CHECK(intact(0, 3 * HP), "every healthy word of A, B and C reads back");
	WORD_AT(a, P_OFF + 4096) = 7;
	CHECK(WORD_AT(a, P_OFF + 4096) == 7, "a healthy word of A is writable");
	WORD_AT(a, P_OFF + 4096) = pattern(P_OFF + 4096);

	fflush(stdout);
	CHECK(system(argv[1]) == 0, "hold command while the memfd lives: %s", argv[1]);

	munmap(base, 3 * HP);
	close(memfd);
	return check_exit_status();
}
