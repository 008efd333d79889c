// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kept_hmm: a device that mirrors the process's page tables through
 * hmm_range_fault() (lib/test_hmm.c's dmirror, standing in for RDMA
 * on-demand paging or a GPU) never gets the poisoned 4 KiB page P of a kept
 * hugepage, and no longer maps the hugepage as one entry.
 *
 *   kept_hmm DEVICE
 *     DEVICE is a dmirror device (/dev/hmm_dmirror0, "modprobe test_hmm").
 *     Before the error a snapshot of the hugepage shows every page
 *     writable and PMD-sized.  After MADV_HWPOISON of P: P is an error in
 *     the snapshot and every other page is writable at 4 KiB; a device
 *     read of the whole hugepage fails with EFAULT; one of the pages after
 *     P reads their data.
 *
 * Prints ok/not ok lines; exits 0 if all held.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/ioctl.h>

#include "check.h"
#include "hwpoison.h"

/* lib/test_hmm_uapi.h, the dmirror device's ABI. */
struct hmm_dmirror_cmd {
	uint64_t addr;
	uint64_t ptr;
	uint64_t npages;
	uint64_t cpages;
	uint64_t faults;
};

#define HMM_DMIRROR_READ	_IOWR('H', 0x00, struct hmm_dmirror_cmd)
#define HMM_DMIRROR_SNAPSHOT	_IOWR('H', 0x04, struct hmm_dmirror_cmd)
#define HMM_DMIRROR_PROT_ERROR	0xFF
#define HMM_DMIRROR_PROT_WRITE	0x02
#define HMM_DMIRROR_PROT_PMD	0x04

#define HP (2UL << 20)
#define NPAGES (HP / 4096)
#define P_PAGE 3

static int dev;

static int dmirror(unsigned long req, char *addr, void *buf, unsigned long npages)
{
	struct hmm_dmirror_cmd cmd = {
		.addr = (uintptr_t)addr,
		.ptr = (uintptr_t)buf,
		.npages = npages,
	};

	return ioctl(dev, req, &cmd) ? errno : 0;
}

/* Pages whose snapshot byte is @want, of @n from @first. */
static unsigned long count(const uint8_t *prot, unsigned long first,
			   unsigned long n, uint8_t want)
{
	unsigned long i, c = 0;

	for (i = first; i < first + n; i++)
		c += prot[i] == want;
	return c;
}

int main(int argc, char **argv)
{
	static uint8_t prot[NPAGES];
	struct sigbus_record rec;
	char *base, *buf;
	int fd, ret, err;
	unsigned long i;

	if (argc != 2) {
		fprintf(stderr, "usage: kept_hmm DEVICE\n");
		return 2;
	}
	dev = open(argv[1], O_RDWR);
	if (dev < 0) {
		perror(argv[1]);
		return 2;
	}
	sigbus_install();
	base = hugetlb_memfd_map("guest-ram-hmm", HP, 1, &fd);
	buf = malloc(HP);

	err = dmirror(HMM_DMIRROR_SNAPSHOT, base, prot, NPAGES);
	CHECK(!err && count(prot, 0, NPAGES, HMM_DMIRROR_PROT_WRITE | HMM_DMIRROR_PROT_PMD) == NPAGES,
	      "before the error the device sees one writable PMD-sized hugepage (%s, prot[0] %#x)",
	      strerror(err), prot[0]);

	SIGBUS_SYSCALL(rec, ret = madvise(base + P_PAGE * 4096, 4096, MADV_HWPOISON));
	CHECK(ret == 0 && rec.lsb == 12, "P kept after MADV_HWPOISON (lsb %d)", rec.lsb);

	memset(prot, 0, sizeof(prot));
	err = dmirror(HMM_DMIRROR_SNAPSHOT, base, prot, NPAGES);
	CHECK(!err && prot[P_PAGE] == HMM_DMIRROR_PROT_ERROR,
	      "after it the snapshot has P as an error (%s, %#x)", strerror(err), prot[P_PAGE]);
	CHECK(count(prot, 0, NPAGES, HMM_DMIRROR_PROT_WRITE) == NPAGES - 1,
	      "and every other page writable at 4 KiB, none PMD-sized (%lu of %lu)",
	      count(prot, 0, NPAGES, HMM_DMIRROR_PROT_WRITE), NPAGES - 1);

	err = dmirror(HMM_DMIRROR_READ, base, buf, NPAGES);
	CHECK(err == EFAULT, "a device read of the whole hugepage fails: EFAULT (%s)",
	      strerror(err));
	memset(buf, 0, HP);
	err = dmirror(HMM_DMIRROR_READ, base + (P_PAGE + 1) * 4096, buf, NPAGES - P_PAGE - 1);
	for (i = 0; !err && i < (NPAGES - P_PAGE - 1) * 4096; i++)
		if (buf[i] != 0x5a)
			break;
	CHECK(!err && i == (NPAGES - P_PAGE - 1) * 4096,
	      "a device read of the pages after P gets their data (%s, %lu bytes right)",
	      strerror(err), i);

	munmap(base, HP);
	close(fd);
	close(dev);
	return check_exit_status();
}
