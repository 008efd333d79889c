// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pin_hwpoison HOLD_CMD RELEASED_CMD: a kept 2 MiB hugepage registered as
 * an io_uring fixed buffer, then poisoned, outlives its memfd.  After munmap
 * and close it is pending (HOLD_CMD checks that) and still in the pool;
 * once the buffer is unregistered it is offlined: the pool shrinks by one
 * and the poisoned pfn stays HWPOISON and out of the buddy allocator
 * (RELEASED_CMD checks the counters).
 */
#include <errno.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "check.h"
#include "hwpoison.h"

#define HP (2UL << 20)

static int poison_errno;

static void *poison_thread(void *addr)
{
	struct sigbus_record rec;
	int rc = 0;

	SIGBUS_SYSCALL(rec, rc = madvise(addr, 4096, MADV_HWPOISON));
	poison_errno = rc ? errno : 0;
	return (void *)(long)(rec.got && rec.lsb == 12);
}

static long nr_hugepages(void)
{
	return read_long_file("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages");
}

int main(int argc, char **argv)
{
	struct io_uring_params p = { 0 };
	struct iovec iov;
	long nr_before;
	uint64_t pfn;
	pthread_t t;
	void *ok;
	char *base;
	int fd, ring;

	if (argc != 3)
		return 2;
	sigbus_install();
	nr_before = nr_hugepages();

	fd = memfd_create("guest-ram-pinned", MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED);
	if (fd < 0 || ftruncate(fd, HP))
		return 2;
	base = mmap(NULL, HP, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return 2;
	memset(base, 0x5a, HP);
	pfn = pfn_of(base + 0x7000);

	ring = syscall(__NR_io_uring_setup, 4, &p);
	CHECK(ring >= 0, "io_uring_setup (%s)", ring < 0 ? strerror(errno) : "ok");
	if (ring < 0)
		return check_exit_status();
	iov.iov_base = base;
	iov.iov_len = HP;
	CHECK(!syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, &iov, 1),
	      "the hugepage is registered as a fixed buffer (%s)",
	      strerror(errno));

	/* The error hits a registered buffer; after it, GUP would refuse. */
	pthread_create(&t, NULL, poison_thread, base + 0x7000);
	pthread_join(t, &ok);
	CHECK(ok, "MADV_HWPOISON: page-sized SIGBUS");
	/*
	 * The fixed buffer reaches the page through the direct map: not
	 * reported recovered, so that x86 leaves it there (as stock does).
	 */
	CHECK(poison_errno == EHWPOISON,
	      "MADV_HWPOISON of a pinned kept hugepage: EHWPOISON, not recovered (%s)",
	      poison_errno ? strerror(poison_errno) : "returned 0");

	munmap(base, HP);
	close(fd);
	CHECK(nr_hugepages() == nr_before,
	      "memfd closed, hugepage still pinned: nr_hugepages unchanged");
	CHECK(system(argv[1]) == 0, "while pinned: %s", argv[1]);

	CHECK(!syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_BUFFERS, NULL, 0),
	      "unregister the fixed buffer");
	close(ring);
	/* io_uring drops its pins from a worker; wait for the offline. */
	for (int i = 0; i < 100 && nr_hugepages() != nr_before - 1; i++)
		usleep(100000);
	CHECK(nr_hugepages() == nr_before - 1,
	      "after unpinning: nr_hugepages dropped by one (%ld -> %ld)",
	      nr_before, nr_hugepages());
	CHECK((kpageflags(pfn) & (1ULL << KPF_HWPOISON)) &&
	      !(kpageflags(pfn) & (1ULL << KPF_BUDDY)),
	      "pfn %#llx is HWPOISON and not in the buddy allocator",
	      (unsigned long long)pfn);
	CHECK(system(argv[2]) == 0, "after unpinning: %s", argv[2]);
	return check_exit_status();
}
