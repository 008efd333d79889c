// SPDX-License-Identifier: GPL-2.0
/*
 * Memory-failure recovery policy of HugeTLB memfds (MFD_MF_KEEP_UE_MAPPED).
 *
 * For 2 MiB and 1 GiB hugepages: a memfd created with the flag gets several
 * errors (MADV_HWPOISON from helper threads) in base pages of its first
 * hugepage.  Each error is signalled to the injecting thread with the exact
 * address and si_addr_lsb == PAGE_SHIFT; afterwards only the poisoned base
 * pages raise SIGBUS (BUS_MCEERR_AR, exact address, PAGE_SHIFT), every other
 * byte reads back, also through a new mapping, the pool is unchanged and
 * HardwareCorrupted grew by one base page per error.  When the memfd is
 * released (close, truncate or hole punch) the poisoned hugepage leaves the
 * pool (nr_hugepages one lower), its healthy base pages go back to the page
 * allocator (MemFree grows by about the hugepage minus the poisoned pages)
 * and the poisoned ones stay HWPoison and out of it.
 *
 * The flag needs a memory-failure recovery policy module: without one
 * memfd_create() fails with EOPNOTSUPP, on a kernel without the flag with
 * EINVAL; the test is skipped then.  A variant is skipped when its
 * hugepage size has too few free hugepages, for example:
 *
 *   echo 4 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
 *   echo 1 > /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages
 *
 * Each variant offlines one hugepage for good (until reboot).
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/memfd.h>
#include <linux/types.h>
#include <sys/mman.h>
#include <sys/statfs.h>

#include "../kselftest_harness.h"
#include "vm_util.h"

#ifndef MFD_MF_KEEP_UE_MAPPED
#define MFD_MF_KEEP_UE_MAPPED	0x0020U
#endif

#define MAX_ERRORS		8
#define KPF_BUDDY		10
#define KPF_HWPOISON		19
#define PFN_MASK		(BIT_ULL(55) - 1)

/* SIGBUS bookkeeping of the calling thread. */
struct sigbus_record {
	sigjmp_buf env;
	bool armed;
	bool got;
	int code;
	void *addr;
	short lsb;
};

static __thread struct sigbus_record sigbus;

static void sigbus_handler(int sig, siginfo_t *si, void *ucontext)
{
	if (!sigbus.armed) {
		/* Unexpected: let the default action kill the test. */
		signal(SIGBUS, SIG_DFL);
		return;
	}
	sigbus.armed = false;
	sigbus.got = true;
	sigbus.code = si->si_code;
	sigbus.addr = si->si_addr;
	sigbus.lsb = si->si_addr_lsb;
	siglongjmp(sigbus.env, 1);
}

/*
 * Read *@p into *@val; true if that raised SIGBUS (details in sigbus).
 * *@val is visible to the caller, so the compiler keeps the load, after
 * sigsetjmp() (returns_twice) and before the record is read.
 */
static bool read_sigbus(const char *p, char *val)
{
	sigbus.got = false;
	sigbus.armed = true;
	if (!sigsetjmp(sigbus.env, 1))
		*val = *p;
	sigbus.armed = false;
	return sigbus.got;
}

struct poison_req {
	char *addr;
	struct sigbus_record rec;
	int ret;
	int err;
};

/* Helper thread: inject one error and catch the SIGBUS it brings. */
static void *poison_thread(void *arg)
{
	struct poison_req *req = arg;

	req->ret = 0;
	sigbus.got = false;
	sigbus.armed = true;
	if (!sigsetjmp(sigbus.env, 1)) {
		req->ret = madvise(req->addr, psize(), MADV_HWPOISON);
		req->err = errno;
	}
	sigbus.armed = false;
	req->rec.got = sigbus.got;
	req->rec.code = sigbus.code;
	req->rec.addr = sigbus.addr;
	req->rec.lsb = sigbus.lsb;
	return NULL;
}

static long read_long(const char *path)
{
	char buf[64] = {};
	long val = -1;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) > 0)
		val = strtol(buf, NULL, 10);
	close(fd);
	return val;
}

/* A /proc/meminfo field in kB (or pages for HugePages_*), -1 if absent. */
static long meminfo_field(const char *field)
{
	size_t len = strlen(field);
	char line[128];
	long val = -1;
	FILE *f;

	f = fopen("/proc/meminfo", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, len) && line[len] == ':') {
			val = strtol(line + len + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return val;
}

static long hstate_value(unsigned long hpage_size, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/mm/hugepages/hugepages-%lukB/%s",
		 hpage_size >> 10, name);
	return read_long(path);
}

static __u64 page_flags(unsigned long pfn)
{
	__u64 flags = 0;
	int fd;

	fd = open("/proc/kpageflags", O_RDONLY);
	if (fd < 0)
		return 0;
	if (pread(fd, &flags, sizeof(flags), pfn * sizeof(flags)) != sizeof(flags))
		flags = 0;
	close(fd);
	return flags;
}

/* The byte every base page @idx of the memfd is filled with. */
static char pattern(unsigned long idx)
{
	return (char)(idx * 37 + 11);
}

FIXTURE(hugetlb_mfr) {
	unsigned long hpage_size;
	size_t len;
	int fd;
	char *map;
	unsigned long poison_off[MAX_ERRORS];
	unsigned long pfn[MAX_ERRORS];
	long nr_before;
	long free_before;
	long hwc_before;
};

enum release {
	RELEASE_CLOSE,
	RELEASE_TRUNCATE,
	RELEASE_PUNCH,
};

FIXTURE_VARIANT(hugetlb_mfr) {
	unsigned int hpage_shift;
	unsigned int nr_hugepages;	/* in the memfd; errors go to the first */
	unsigned int nr_errors;
	enum release release;
};

FIXTURE_VARIANT_ADD(hugetlb_mfr, 2m_close) {
	.hpage_shift = 21,
	.nr_hugepages = 2,
	.nr_errors = 4,
	.release = RELEASE_CLOSE,
};

FIXTURE_VARIANT_ADD(hugetlb_mfr, 2m_truncate) {
	.hpage_shift = 21,
	.nr_hugepages = 2,
	.nr_errors = 8,
	.release = RELEASE_TRUNCATE,
};

FIXTURE_VARIANT_ADD(hugetlb_mfr, 2m_punch) {
	.hpage_shift = 21,
	.nr_hugepages = 2,
	.nr_errors = 2,
	.release = RELEASE_PUNCH,
};

FIXTURE_VARIANT_ADD(hugetlb_mfr, 1g_close) {
	.hpage_shift = 30,
	.nr_hugepages = 1,
	.nr_errors = 4,
	.release = RELEASE_CLOSE,
};

FIXTURE_VARIANT_ADD(hugetlb_mfr, 1g_truncate) {
	.hpage_shift = 30,
	.nr_hugepages = 1,
	.nr_errors = 2,
	.release = RELEASE_TRUNCATE,
};

FIXTURE_SETUP(hugetlb_mfr)
{
	struct sigaction sa = {
		.sa_sigaction = sigbus_handler,
		.sa_flags = SA_SIGINFO | SA_NODEFER,
	};
	unsigned int flags;
	struct statfs sfs;
	unsigned long i;
	long free;

	self->fd = -1;
	self->map = MAP_FAILED;
	self->hpage_size = 1UL << variant->hpage_shift;
	self->len = variant->nr_hugepages * self->hpage_size;

	free = hstate_value(self->hpage_size, "free_hugepages");
	if (free < 0)
		SKIP(return, "no %lu kB hugepages on this system",
		     self->hpage_size >> 10);
	if (free < variant->nr_hugepages)
		SKIP(return, "%ld free %lu kB hugepages, %u needed", free,
		     self->hpage_size >> 10, variant->nr_hugepages);

	flags = MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED |
		(variant->hpage_shift << MFD_HUGE_SHIFT);
	self->fd = memfd_create("hugetlb-mfr", flags);
	if (self->fd < 0 && errno == EOPNOTSUPP)
		SKIP(return, "MFD_MF_KEEP_UE_MAPPED: no recovery policy module");
	if (self->fd < 0 && errno == EINVAL)
		SKIP(return, "MFD_MF_KEEP_UE_MAPPED: not supported by this kernel");
	ASSERT_LE(0, self->fd) TH_LOG("memfd_create: %s", strerror(errno));

	ASSERT_EQ(0, fstatfs(self->fd, &sfs));
	ASSERT_EQ(HUGETLBFS_MAGIC, sfs.f_type);
	ASSERT_EQ(self->hpage_size, (unsigned long)sfs.f_bsize);

	ASSERT_EQ(0, sigaction(SIGBUS, &sa, NULL));

	self->nr_before = hstate_value(self->hpage_size, "nr_hugepages");
	self->free_before = free;
	self->hwc_before = meminfo_field("HardwareCorrupted");
	ASSERT_LE(0, self->hwc_before);

	ASSERT_EQ(0, ftruncate(self->fd, self->len));
	self->map = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->map);
	for (i = 0; i < self->len / psize(); i++)
		memset(self->map + i * psize(), pattern(i), psize());

	/* Spread over the first hugepage, never in adjacent base pages. */
	for (i = 0; i < variant->nr_errors; i++)
		self->poison_off[i] = (i * (self->hpage_size / variant->nr_errors) +
				       3 * psize()) & ~(unsigned long)(psize() - 1);
}

FIXTURE_TEARDOWN(hugetlb_mfr)
{
	if (self->map != MAP_FAILED)
		munmap(self->map, self->len);
	if (self->fd >= 0)
		close(self->fd);
}

static bool is_poisoned(const unsigned long *poison_off, unsigned int nr,
			unsigned long off)
{
	unsigned int i;

	for (i = 0; i < nr; i++)
		if (off / psize() == poison_off[i] / psize())
			return true;
	return false;
}

/*
 * Offset of the first byte of @map (@len bytes) outside the @nr poisoned
 * base pages that does not hold its pattern, or @len if none.
 */
static unsigned long verify(const char *map, unsigned long len,
			    const unsigned long *poison_off, unsigned int nr)
{
	unsigned long off, j;
	__u64 want;

	for (off = 0; off < len; off += psize()) {
		if (is_poisoned(poison_off, nr, off))
			continue;
		want = 0x0101010101010101ULL * (__u8)pattern(off / psize());
		for (j = 0; j < psize(); j += sizeof(want))
			if (*(const __u64 *)(map + off + j) != want)
				return off + j;
	}
	return len;
}

/*
 * Only the poisoned base page at @off is lost: the bytes on either side of
 * it read back through @map without SIGBUS, and read() of the memfd stops
 * short before it (EIO when it is the first byte).
 */
static void check_isolated(struct __test_metadata *_metadata, int fd,
			   const char *map, unsigned long off)
{
	unsigned long before = off - psize(), after = off + psize();
	char val, *buf;

	buf = malloc(2 * psize());
	ASSERT_NE(NULL, buf);
	EXPECT_FALSE(read_sigbus(map + off - 1, &val))
		TH_LOG("SIGBUS for the byte before poisoned page +%#lx", off);
	EXPECT_EQ(pattern(before / psize()), val);
	EXPECT_FALSE(read_sigbus(map + after, &val))
		TH_LOG("SIGBUS for the byte after poisoned page +%#lx", off);
	EXPECT_EQ(pattern(after / psize()), val);

	errno = 0;
	EXPECT_EQ(-1, pread(fd, buf, psize(), off));
	EXPECT_EQ(EIO, errno);
	EXPECT_EQ((ssize_t)psize(), pread(fd, buf, 2 * psize(), before));
	EXPECT_EQ(pattern(before / psize()), buf[0]);
	EXPECT_EQ(pattern(before / psize()), buf[psize() - 1]);
	free(buf);
}

TEST_F_TIMEOUT(hugetlb_mfr, keep_and_release, 1800)
{
	unsigned int nr = variant->nr_errors;
	long memfree_before, memfree_gain, want_gain;
	unsigned int i;
	int pagemap;

	pagemap = open("/proc/self/pagemap", O_RDONLY);
	ASSERT_LE(0, pagemap);
	for (i = 0; i < nr; i++)
		self->pfn[i] = pagemap_get_entry(pagemap,
						 self->map + self->poison_off[i]) & PFN_MASK;
	close(pagemap);

	for (i = 0; i < nr; i++) {
		struct poison_req req = { .addr = self->map + self->poison_off[i] };
		pthread_t thread;

		ASSERT_EQ(0, pthread_create(&thread, NULL, poison_thread, &req));
		ASSERT_EQ(0, pthread_join(thread, NULL));
		if (req.ret && req.err == EPERM)
			SKIP(return, "MADV_HWPOISON needs CAP_SYS_ADMIN");
		ASSERT_TRUE(req.rec.got)
			TH_LOG("MADV_HWPOISON at +%#lx: no SIGBUS", self->poison_off[i]);
		EXPECT_EQ(BUS_MCEERR_AR, req.rec.code);
		EXPECT_EQ(req.addr, req.rec.addr);
		EXPECT_EQ((int)pshift(), req.rec.lsb);

		check_isolated(_metadata, self->fd, self->map, self->poison_off[i]);
	}

	/* Every healthy byte, through the mapping the errors hit. */
	EXPECT_EQ(self->len, verify(self->map, self->len, self->poison_off, nr));
	EXPECT_EQ(self->nr_before, hstate_value(self->hpage_size, "nr_hugepages"));
	EXPECT_EQ(self->hwc_before + nr * (psize() >> 10),
		  meminfo_field("HardwareCorrupted"));
	for (i = 0; i < nr; i++)
		if (self->pfn[i])
			EXPECT_TRUE(!!(page_flags(self->pfn[i]) & BIT_ULL(KPF_HWPOISON)));

	/* A new mapping faults the kept hugepage in again. */
	ASSERT_EQ(0, munmap(self->map, self->len));
	self->map = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->map);
	EXPECT_EQ(self->len, verify(self->map, self->len, self->poison_off, nr));
	for (i = 0; i < nr; i++)
		check_isolated(_metadata, self->fd, self->map, self->poison_off[i]);

	ASSERT_EQ(0, munmap(self->map, self->len));
	self->map = MAP_FAILED;
	memfree_before = meminfo_field("MemFree");
	switch (variant->release) {
	case RELEASE_CLOSE:
		ASSERT_EQ(0, close(self->fd));
		self->fd = -1;
		break;
	case RELEASE_TRUNCATE:
		ASSERT_EQ(0, ftruncate(self->fd, 0));
		break;
	case RELEASE_PUNCH:
		ASSERT_EQ(0, fallocate(self->fd, FALLOC_FL_PUNCH_HOLE |
				       FALLOC_FL_KEEP_SIZE, 0, self->hpage_size));
		break;
	}

	/* The policy module may dissolve the hugepage from a worker. */
	want_gain = (long)(self->hpage_size >> 10) - nr * (psize() >> 10);
	for (i = 0; i < 600; i++) {
		memfree_gain = meminfo_field("MemFree") - memfree_before;
		if (hstate_value(self->hpage_size, "nr_hugepages") ==
		    self->nr_before - 1 && memfree_gain >= want_gain / 2)
			break;
		usleep(100000);
	}
	EXPECT_EQ(self->nr_before - 1,
		  hstate_value(self->hpage_size, "nr_hugepages"));
	EXPECT_EQ(self->hwc_before + nr * (psize() >> 10),
		  meminfo_field("HardwareCorrupted"));
	/* Other allocations meanwhile move MemFree by a few MiB at most. */
	EXPECT_LE(want_gain / 2, memfree_gain)
		TH_LOG("MemFree grew by %ld kB, want about %ld kB",
		       memfree_gain, want_gain);
	EXPECT_GE(want_gain + 8192, memfree_gain)
		TH_LOG("MemFree grew by %ld kB, want about %ld kB",
		       memfree_gain, want_gain);
	for (i = 0; i < nr; i++) {
		__u64 kpf;

		if (!self->pfn[i])
			continue;
		kpf = page_flags(self->pfn[i]);
		EXPECT_TRUE(!!(kpf & BIT_ULL(KPF_HWPOISON)));
		EXPECT_FALSE(!!(kpf & BIT_ULL(KPF_BUDDY)));
	}

	if (self->fd >= 0) {
		ASSERT_EQ(0, close(self->fd));
		self->fd = -1;
	}
	/* Healthy hugepages of the memfd went back to the pool. */
	EXPECT_EQ(self->free_before - 1,
		  hstate_value(self->hpage_size, "free_hugepages"));
}

int main(int argc, char **argv)
{
	int fd;

	/* No policy (or no flag): nothing below can run. */
	fd = memfd_create("hugetlb-mfr", MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED);
	if (fd < 0 && errno == EOPNOTSUPP)
		ksft_exit_skip("MFD_MF_KEEP_UE_MAPPED needs a recovery policy module\n");
	if (fd < 0 && errno == EINVAL)
		ksft_exit_skip("MFD_MF_KEEP_UE_MAPPED is not supported by this kernel\n");
	if (fd >= 0)
		close(fd);
	return test_harness_run(argc, argv);
}
