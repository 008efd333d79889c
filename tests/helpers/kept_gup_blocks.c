// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kept_gup_blocks: GUP hands out the healthy base pages of a kept 2 MiB
 * hugepage in blocks, never one that covers a poisoned base page.
 *
 *   kept_gup_blocks 2M madvise
 *
 * Eight base pages of one kept hugepage are poisoned with MADV_HWPOISON,
 * at indexes chosen so that the aligned blocks GUP takes at once must
 * shrink around them: both ends of the hugepage, a pair, both sides of the
 * middle, and odd places between.  Then, from every healthy base page i,
 * with next the first poisoned base page after i:
 * - process_vm_readv() (pin_user_pages_remote()) of [i, next] copies
 *   exactly [i, next) and stops at next, with the right contents;
 * - an io_uring buffer over [i, next) registers (a long-term pin) and one
 *   over [i, next] is refused;
 * - pread() of the memfd over [i, next] (hugetlbfs_read_iter(), one
 *   lookup of the poisoned base pages per read) returns [i, next).
 * Under MADV_HWPOISON nothing traps a kernel read of a poisoned page, so a
 * block that covered one would show only in these lengths.
 * The memfd is closed at the end (the hugepage is then offlined).  Prints
 * ok/not ok lines, one per kind of check with the first failing index;
 * exits 0 if all held.
 */
#include <errno.h>
#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "check.h"
#include "hwpoison.h"

#define HP (2UL << 20)
#define NPAGES (HP / 4096)

static const unsigned long poisoned[] = { 1, 6, 7, 64, 255, 256, 300, 511 };
#define NPOISONED (sizeof(poisoned) / sizeof(poisoned[0]))

static char *base;
static int memfd;

static uint64_t pattern(unsigned long off)
{
	return (off + 1) * 0x9E3779B97F4A7C15ULL;
}

static int is_poisoned(unsigned long idx)
{
	for (unsigned long k = 0; k < NPOISONED; k++)
		if (poisoned[k] == idx)
			return 1;
	return 0;
}

static unsigned long next_poisoned(unsigned long idx)
{
	while (idx < NPAGES && !is_poisoned(idx))
		idx++;
	return idx;
}

/* Does @buf hold the pattern of the hugepage's bytes [off, off + n)? */
static int holds_pattern(const char *buf, unsigned long off, unsigned long n)
{
	for (unsigned long k = 0; k < n; k += 8)
		if (*(const uint64_t *)(buf + k) != pattern(off + k))
			return 0;
	return 1;
}

static void poison_all(void)
{
	for (unsigned long k = 0; k < NPOISONED; k++) {
		char *page = base + poisoned[k] * 4096;
		uint64_t pfn = pfn_of(page);
		struct sigbus_record rec;
		int rc;

		SIGBUS_SYSCALL(rec, rc = madvise(page, 4096, MADV_HWPOISON));
		CHECK(rc == 0 && rec.got && rec.lsb == 12 && rec.addr == page,
		      "MADV_HWPOISON of base page %lu: 0, SIGBUS at it, lsb 12 (rc %d, got %d, lsb %d)",
		      poisoned[k], rc, rec.got, rec.lsb);
		CHECK(wait_hwpoison(pfn, 60), "base page %lu (pfn %#llx) is HWPOISON",
		      poisoned[k], (unsigned long long)pfn);
	}
}

static int ring_register(int ring, unsigned long idx, unsigned long n)
{
	struct iovec iov = { base + idx * 4096, n * 4096 };
	long rc = syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, &iov, 1);

	if (!rc)
		syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_BUFFERS, NULL, 0);
	return rc ? -1 : 0;
}

int main(int argc, char **argv)
{
	static char buf[HP];
	long bad_vm = -1, bad_ring = -1, bad_pread = -1, starts = 0;
	struct io_uring_params params = { 0 };
	int ring;

	if (argc < 3 || strcmp(argv[1], "2M") || strcmp(argv[2], "madvise")) {
		fprintf(stderr, "usage: kept_gup_blocks 2M madvise\n");
		return 2;
	}
	sigbus_install();
	memfd = memfd_create("guest-ram-gup-blocks",
			     MFD_HUGETLB | (21U << MFD_HUGE_SHIFT) | MFD_MF_KEEP_UE_MAPPED);
	if (memfd < 0 || ftruncate(memfd, HP)) {
		perror("memfd_create");
		return 2;
	}
	base = mmap(NULL, HP, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	for (unsigned long off = 0; off < HP; off += 8)
		WORD_AT(base, off) = pattern(off);
	ring = syscall(__NR_io_uring_setup, 4, &params);
	if (ring < 0) {
		perror("io_uring_setup");
		return 2;
	}

	poison_all();

	for (unsigned long i = 0; i < NPAGES; i++) {
		unsigned long next, end, want;
		struct iovec local, remote;
		ssize_t n;

		if (is_poisoned(i))
			continue;
		starts++;
		next = next_poisoned(i);
		end = next < NPAGES ? next + 1 : NPAGES;
		want = (next - i) * 4096;

		local = (struct iovec){ buf, (end - i) * 4096 };
		remote = (struct iovec){ base + i * 4096, (end - i) * 4096 };
		n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
		if (bad_vm < 0 && (n != (ssize_t)want || !holds_pattern(buf, i * 4096, want))) {
			bad_vm = i;
			printf("# process_vm_readv from %lu over %lu pages: %zd, want %lu\n",
			       i, end - i, n, want);
		}

		if (bad_ring < 0 && (ring_register(ring, i, next - i) ||
				     (next < NPAGES && !ring_register(ring, i, next - i + 1)))) {
			bad_ring = i;
			printf("# io_uring registration from %lu: [%lu, %lu) %s, [%lu, %lu] %s\n",
			       i, i, next, ring_register(ring, i, next - i) ? "refused" : "ok",
			       i, next, ring_register(ring, i, next - i + 1) ? "refused" : "ok");
		}

		n = pread(memfd, buf, (end - i) * 4096, i * 4096);
		if (bad_pread < 0 && (n != (ssize_t)want || !holds_pattern(buf, i * 4096, want))) {
			bad_pread = i;
			printf("# pread from %lu over %lu pages: %zd, want %lu\n",
			       i, end - i, n, want);
		}
	}
	CHECK(starts == (long)(NPAGES - NPOISONED), "%ld healthy base pages tried", starts);
	CHECK(bad_vm < 0,
	      "process_vm_readv from each healthy base page stops at the next poisoned one (first wrong: %ld)",
	      bad_vm);
	CHECK(bad_ring < 0,
	      "io_uring buffers up to the next poisoned base page register, one more page is refused (first wrong: %ld)",
	      bad_ring);
	CHECK(bad_pread < 0,
	      "pread() from each healthy base page stops at the next poisoned one (first wrong: %ld)",
	      bad_pread);

	for (unsigned long i = 0; i < NPAGES; i++)
		if (!is_poisoned(i) && !holds_pattern(base + i * 4096, i * 4096, 4096)) {
			CHECK(0, "healthy base page %lu reads back", i);
			break;
		}
	CHECK(pfn_of(base) == pfn_of(base + 2 * 4096) - 2,
	      "the hugepage is still mapped at the same frame");
	close(ring);
	munmap(base, HP);
	close(memfd);
	return check_exit_status();
}
