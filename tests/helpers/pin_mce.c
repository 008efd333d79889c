// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pin_mce io-uring|io-uring-released|vmsplice REQUEST_FILE: a kernel
 * reference taken to a kept 2 MiB hugepage before a real action-optional
 * machine check on one of its 4 KiB pages P, then used after it.
 *
 *   io-uring  the hugepage is an io_uring fixed buffer; after the error,
 *             IORING_OP_WRITE_FIXED writes 64 bytes from another cache
 *             line of P to a file (the kernel copies through the direct
 *             map, kmap_local_page() of the bvec).
 *   io-uring-released
 *             page 0 is poisoned first (MADV_HWPOISON), the other pages
 *             are one fixed buffer (coalesced: one reference), and the
 *             memfd is closed before the machine check: the buffer's is
 *             the only reference left to the released hugepage, and its
 *             first error's reference is gone.  Then as io-uring.
 *   vmsplice  P is spliced into a pipe (the pipe holds the page); after
 *             the error the pipe is spliced to a file.
 *
 * The host injects the machine check (request in REQUEST_FILE, see
 * tests/mce/run.sh).  A kept hugepage referenced beyond its mappings is
 * not reported recovered, so x86 leaves P in the direct map, as stock
 * does for a pinned hugepage: the copy must succeed, with no kernel
 * report (the run checks the log).  Had P left the direct map, the copy
 * would oops.  Then the references go, the memfd is closed and the
 * hugepage must be offlined with P HWPOISON.  TAP lines; exit 1 on a
 * failed check, 2 on a failed setup.
 */
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdbool.h>
#include <sys/uio.h>

#include "check.h"
#include "hwpoison.h"

#define HP (2UL << 20)
#define P_OFF 0x3000UL
#define LINE_OFF 0x40UL		/* another cache line of P than its first */
#define POOL "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"

static unsigned char pattern(unsigned long off)
{
	return (unsigned char)(off * 7 + 3);
}

/* The first @len bytes of @fd match the hugepage's bytes from @off. */
static int file_matches(int fd, unsigned long off, size_t len)
{
	unsigned char buf[4096];

	if (len > sizeof(buf) || pread(fd, buf, len, 0) != (ssize_t)len)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (buf[i] != pattern(off + i))
			return 0;
	return 1;
}

/* Wait up to @seconds for the kernel log's memory-failure line of @pfn. */
static int wait_memory_failure(uint64_t pfn, int seconds)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd),
		 "for i in $(seq %d); do dmesg | grep -q 'Memory failure: %#llx:' && exit 0; "
		 "sleep 0.1; done; exit 1", seconds * 10, (unsigned long long)pfn);
	return system(cmd) == 0;
}

/*
 * The fixed buffer covers the hugepage from @from; with @release, the
 * memfd @fd is closed and unmapped before the machine check.
 */
static void via_io_uring(char *base, unsigned long from, int *fd, bool release,
			 int out, const char *request, uint64_t pfn)
{
	struct iovec iov = { .iov_base = base + from, .iov_len = HP - from };
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	int ret;

	ret = io_uring_queue_init(4, &ring, 0);
	if (ret < 0) {
		fprintf(stderr, "io_uring_queue_init: %s\n", strerror(-ret));
		exit(2);
	}
	ret = io_uring_register_buffers(&ring, &iov, 1);
	CHECK(!ret, "the hugepage is a registered fixed buffer (%s)",
	      ret ? strerror(-ret) : "ok");
	if (release) {
		munmap(base, HP);
		close(*fd);
		*fd = -1;
	}

	mce_request(request, "ao", 0, pfn << 12);
	if (release)
		/* The hugepage is HWPOISON since page 0: wait for P's own. */
		CHECK(wait_memory_failure(pfn, 60), "memory_failure() ran for P (pfn %#llx)",
		      (unsigned long long)pfn);
	else
		CHECK(wait_hwpoison(pfn, 60), "P (pfn %#llx) is HWPOISON",
		      (unsigned long long)pfn);

	sqe = io_uring_get_sqe(&ring);
	/* The buffer's address: the kernel's bvec, whatever the mapping does. */
	io_uring_prep_write_fixed(sqe, out, base + P_OFF + LINE_OFF, 64, 0, 0);
	ret = io_uring_submit_and_wait(&ring, 1);
	CHECK(ret == 1 && !io_uring_wait_cqe(&ring, &cqe) && cqe->res == 64,
	      "IORING_OP_WRITE_FIXED of 64 bytes of P after the error: 64 (%d)",
	      ret == 1 ? cqe->res : ret);
	if (ret == 1)
		io_uring_cqe_seen(&ring, cqe);
	CHECK(file_matches(out, P_OFF + LINE_OFF, 64), "the file holds those 64 bytes");

	ret = io_uring_unregister_buffers(&ring);
	CHECK(!ret, "unregister the fixed buffer (%s)", ret ? strerror(-ret) : "ok");
	io_uring_queue_exit(&ring);
}

static void via_vmsplice(char *base, int out, const char *request, uint64_t pfn)
{
	struct iovec iov = { .iov_base = base + P_OFF, .iov_len = 4096 };
	loff_t off = 0;
	int pipefd[2];
	ssize_t n;

	if (pipe(pipefd)) {
		perror("pipe");
		exit(2);
	}
	n = vmsplice(pipefd[1], &iov, 1, 0);
	CHECK(n == 4096, "vmsplice of P into a pipe: 4096 (%zd)", n);

	mce_request(request, "ao", 0, pfn << 12);
	CHECK(wait_hwpoison(pfn, 60), "P (pfn %#llx) is HWPOISON", (unsigned long long)pfn);

	n = splice(pipefd[0], NULL, out, &off, 4096, 0);
	CHECK(n == 4096, "splice of the pipe to a file after the error: 4096 (%zd, %s)",
	      n, n < 0 ? strerror(errno) : "ok");
	CHECK(file_matches(out, P_OFF, 4096), "the file holds P's bytes");
	close(pipefd[0]);
	close(pipefd[1]);
}

int main(int argc, char **argv)
{
	char path[] = "/tmp/pin_mce.XXXXXX";
	long nr_before;
	uint64_t pfn;
	char *base;
	int fd, out;

	if (argc != 3 || (strcmp(argv[1], "io-uring") && strcmp(argv[1], "io-uring-released") &&
			  strcmp(argv[1], "vmsplice"))) {
		fprintf(stderr, "usage: pin_mce io-uring|io-uring-released|vmsplice REQUEST_FILE\n");
		return 2;
	}
	nr_before = read_long_file(POOL);
	fd = memfd_create("guest-ram-pin-mce", MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED);
	out = mkstemp(path);
	if (fd < 0 || ftruncate(fd, HP) || out < 0) {
		perror("memfd or output file");
		return 2;
	}
	unlink(path);
	base = mmap(NULL, HP, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	for (unsigned long off = 0; off < HP; off++)
		base[off] = pattern(off);
	pfn = pfn_of(base + P_OFF);

	if (!strcmp(argv[1], "io-uring")) {
		via_io_uring(base, 0, &fd, false, out, argv[2], pfn);
	} else if (!strcmp(argv[1], "io-uring-released")) {
		struct sigbus_record rec;
		int ret;

		sigbus_install();
		SIGBUS_SYSCALL(rec, ret = madvise(base, 4096, MADV_HWPOISON));
		CHECK(!ret && rec.lsb == 12, "page 0 poisoned first, kept (lsb %d)", rec.lsb);
		via_io_uring(base, 4096, &fd, true, out, argv[2], pfn);
	} else {
		via_vmsplice(base, out, argv[2], pfn);
	}

	if (fd >= 0) {
		munmap(base, HP);
		close(fd);
	}
	/* io_uring drops its pins from a worker; wait for the offline. */
	for (int i = 0; i < 100 && read_long_file(POOL) != nr_before - 1; i++)
		usleep(100000);
	CHECK(read_long_file(POOL) == nr_before - 1,
	      "after the references went and the close: the pool shrank by one (%ld -> %ld)",
	      nr_before, read_long_file(POOL));
	CHECK((kpageflags(pfn) & (1ULL << KPF_HWPOISON)) &&
	      !(kpageflags(pfn) & (1ULL << KPF_BUDDY)),
	      "pfn %#llx is HWPOISON and not in the buddy allocator",
	      (unsigned long long)pfn);
	close(out);
	return check_exit_status();
}
