// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kept_lifecycle: a kept hugepage ends offlined, whatever happens to it
 * after its first error.  TAP lines; exit 1 on a failed check, 2 on a
 * failed setup.
 *
 *   kept_lifecycle pinned SIZE close|race CMD_PENDING
 *     An io_uring fixed buffer holds a kept hugepage.  Page A is poisoned
 *     (MADV_HWPOISON), the memfd closed, and page B poisoned (corrupt-pfn,
 *     the asynchronous path) after the close ("close") or while it runs
 *     ("race").  While pinned the hugepage is pending and unpoison-pfn of
 *     A, B and the head is refused; CMD_PENDING runs then.  After the
 *     unpin: A and B HWPOISON and not in the buddy allocator, no other
 *     page of the hugepage poisoned, most of them free, the pool one
 *     lower.
 *   kept_lifecycle pinned-released SIZE
 *     Page 0 of a kept hugepage is poisoned (MADV_HWPOISON), then the other
 *     pages registered as one io_uring fixed buffer (coalesced: one
 *     reference), the memfd closed: an error in page 5 (corrupt-pfn) is
 *     answered EBUSY, not recovered.  After the unpin both pages are
 *     offlined as above.
 *   kept_lifecycle unpoison SIZE
 *     unpoison-pfn of the poisoned page, of the head and of a healthy page
 *     of a kept hugepage is refused with EBUSY and changes nothing.
 *   kept_lifecycle release SIZE CMD_BEFORE CMD_RELEASED
 *     Keep a hugepage with one page poisoned (MADV_HWPOISON), run
 *     CMD_BEFORE, close the memfd and run CMD_RELEASED (a test that makes
 *     the dissolve fail, then succeed) with the hugepage's head pfn in
 *     MFR_HEAD_PFN (hex).  Then, within 60 s, the hugepage is offlined as
 *     above.
 *
 * SIZE is 2M or 1G; the memfd holds one hugepage.
 */
#include <errno.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "check.h"
#include "hwpoison.h"
#include "meminfo.h"

#define KPF_LRU 5
#define KPF_SLAB 7
#define KPF_MMAP 11
#define KPF_ANON 12
#define KPF_COMPOUND_HEAD 15
#define KPF_HUGE 17
#define KPF_PGTABLE 26
/* A page some allocation holds: it came from the page allocator. */
#define KPF_IN_USE ((1ULL << KPF_LRU) | (1ULL << KPF_SLAB) | (1ULL << KPF_MMAP) | \
		    (1ULL << KPF_ANON) | (1ULL << KPF_PGTABLE))

static unsigned long hp;
static const char *pool;	/* sysfs nr_hugepages of the size */

static long nr_hugepages(void)
{
	return read_long_file(pool);
}

static void *madvise_poison(void *addr)
{
	struct sigbus_record rec;

	SIGBUS_TRY(rec, madvise(addr, 4096, MADV_HWPOISON));
	return (void *)(long)(rec.got && rec.addr == addr && rec.lsb == 12);
}

static void *corrupt_thread(void *pfn)
{
	return (void *)(long)corrupt_pfn_errno(*(uint64_t *)pfn);
}

/* Write @pfn to unpoison-pfn; returns the errno (0 if it was accepted). */
static int unpoison_pfn(uint64_t pfn)
{
	char buf[32];
	int fd = open("/sys/kernel/debug/hwpoison/unpoison-pfn", O_WRONLY);
	int n = snprintf(buf, sizeof(buf), "%#llx\n", (unsigned long long)pfn);
	int err = 0;

	if (fd < 0) {
		perror("unpoison-pfn");
		exit(2);
	}
	if (write(fd, buf, n) != n)
		err = errno;
	close(fd);
	return err;
}

static void expect_unpoison_refused(const char *what, uint64_t pfn)
{
	uint64_t before = kpageflags(pfn);
	int err = unpoison_pfn(pfn);

	CHECK(err == EBUSY && kpageflags(pfn) == before,
	      "unpoison-pfn of %s (pfn %#llx) refused with EBUSY, flags unchanged (%s)",
	      what, (unsigned long long)pfn, strerror(err));
}

/* A kept hugepage of @name, faulted in and filled. */
static char *kept_hugepage(const char *name, int *fd)
{
	return hugetlb_memfd_map(name, hp, 1, fd);
}

static void poison_by_madvise(char *addr)
{
	pthread_t t;
	void *ok;

	pthread_create(&t, NULL, madvise_poison, addr);
	pthread_join(t, &ok);
	CHECK(ok, "MADV_HWPOISON at %p: page-sized SIGBUS at that address", addr);
}

/* A kept hugepage with its page at @off poisoned; its head and that pfn. */
static char *kept_poisoned_hugepage(const char *name, unsigned long off,
				    int *fd, uint64_t *head, uint64_t *pfn)
{
	char *base = kept_hugepage(name, fd);

	*head = pfn_of(base);
	*pfn = pfn_of(base + off);
	poison_by_madvise(base + off);
	return base;
}

/*
 * Wait for the hugepage at @head to be dissolved, then check its pages:
 * exactly @bad[0..nbad) poisoned and out of the buddy allocator.
 */
static void expect_offlined(uint64_t head, const uint64_t *bad, int nbad)
{
	unsigned long nr = hp / 4096, poisoned = 0, buddy = 0, reused = 0;
	uint64_t *flags = calloc(nr, sizeof(*flags));
	int fd, i;

	for (i = 0; i < 600 && (kpageflags(head) & (1ULL << KPF_HUGE)); i++)
		usleep(100000);
	CHECK(!(kpageflags(head) & (1ULL << KPF_HUGE)),
	      "the hugepage at pfn %#llx was dissolved (%d.%d s)",
	      (unsigned long long)head, i / 10, i % 10);

	fd = open("/proc/kpageflags", O_RDONLY);
	if (!flags || fd < 0 ||
	    pread(fd, flags, nr * 8, head * 8) != (ssize_t)(nr * 8)) {
		perror("/proc/kpageflags");
		exit(2);
	}
	close(fd);
	for (unsigned long j = 0; j < nr; j++) {
		poisoned += !!(flags[j] & (1ULL << KPF_HWPOISON));
		buddy += !!(flags[j] & (1ULL << KPF_BUDDY));
		reused += !(flags[j] & (1ULL << KPF_HWPOISON)) && (flags[j] & KPF_IN_USE);
	}
	for (i = 0; i < nbad; i++) {
		uint64_t f = flags[bad[i] - head];

		CHECK((f & (1ULL << KPF_HWPOISON)) && !(f & (1ULL << KPF_BUDDY)),
		      "poisoned pfn %#llx is HWPOISON and not in the buddy allocator",
		      (unsigned long long)bad[i]);
	}
	CHECK(poisoned == (unsigned long)nbad,
	      "no other page of the hugepage is poisoned (%lu HWPOISON)", poisoned);
	/*
	 * Freed as buddy blocks: only the first page of each is BUDDY.  In a
	 * zone with little else free (a block made ZONE_MOVABLE) they may be
	 * handed out again at once: a page in use came from the allocator.
	 */
	CHECK(buddy > 0 || reused > 0,
	      "its healthy pages went back to the page allocator (%lu buddy heads, %lu in use again)",
	      buddy, reused);
	free(flags);
}

static int mode_pinned(int race, const char *cmd_pending)
{
	struct io_uring_params p = { 0 };
	long nr_before = nr_hugepages();
	uint64_t head, pfn_a, pfn_b, bad[2];
	unsigned long off_b = hp / 2 + 0x3000;
	struct iovec iov;
	int fd, ring, err;
	pthread_t t;
	char *base;
	void *ret;

	base = kept_hugepage("guest-ram-pinned", &fd);
	head = pfn_of(base);
	pfn_a = pfn_of(base + 0x7000);
	pfn_b = pfn_of(base + off_b);
	/* Registered while healthy: after the error GUP refuses it. */
	ring = syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0) {
		perror("io_uring_setup");
		return 2;
	}
	iov.iov_base = base;
	iov.iov_len = hp;
	err = syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, &iov, 1) ?
	      errno : 0;
	CHECK(!err, "the kept hugepage is registered as an io_uring fixed buffer (%s)",
	      err ? strerror(err) : "ok");

	poison_by_madvise(base + 0x7000);
	expect_unpoison_refused("page A of a kept hugepage", pfn_a);

	munmap(base, hp);
	if (race)
		pthread_create(&t, NULL, corrupt_thread, &pfn_b);
	close(fd);
	if (race)
		pthread_join(t, &ret);
	else
		ret = corrupt_thread(&pfn_b);
	/* The pin maps B: it stays in the direct map, before the release or after. */
	CHECK((long)ret == EBUSY, "page B's error is not reported recovered: EBUSY (%s)",
	      ret ? strerror((long)ret) : "recovered");
	CHECK(kpageflags(head) & (1ULL << KPF_HUGE),
	      "memfd closed, %s: the pinned hugepage is not dissolved",
	      race ? "page B poisoned during the close" : "then page B poisoned");
	CHECK(nr_hugepages() == nr_before,
	      "still in the pool until the pin goes (nr_hugepages %ld)", nr_hugepages());
	expect_unpoison_refused("page A of a pending hugepage", pfn_a);
	expect_unpoison_refused("page B of a pending hugepage", pfn_b);
	expect_unpoison_refused("the head of a pending hugepage", head);
	CHECK(system(cmd_pending) == 0, "while pinned: %s", cmd_pending);

	CHECK(!syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_BUFFERS, NULL, 0),
	      "unregister the fixed buffer");
	close(ring);
	bad[0] = pfn_a;
	bad[1] = pfn_b;
	expect_offlined(head, bad, 2);
	CHECK(nr_hugepages() == nr_before - 1,
	      "then it left the pool (nr_hugepages %ld -> %ld)", nr_before, nr_hugepages());
	return check_exit_status();
}

/*
 * A coalesced io_uring fixed buffer over the healthy pages of a kept
 * hugepage holds it with one reference once the memfd released it.  A
 * second error then must not be reported recovered: x86 would take the
 * page out of the direct map while the buffer still maps it, and the next
 * kernel copy from the buffer would oops.
 */
static int mode_pinned_released(void)
{
	struct io_uring_params p = { 0 };
	uint64_t head, bad[2];
	struct iovec iov;
	int fd, ring, err;
	char *base;

	base = kept_poisoned_hugepage("guest-ram-pinned-released", 0, &fd,
				      &head, &bad[0]);
	bad[1] = pfn_of(base + 5 * 4096);
	ring = syscall(__NR_io_uring_setup, 4, &p);
	if (ring < 0) {
		perror("io_uring_setup");
		return 2;
	}
	/* Registered after the error: every page but the poisoned one. */
	iov.iov_base = base + 4096;
	iov.iov_len = hp - 4096;
	err = syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, &iov, 1) ?
	      errno : 0;
	CHECK(!err, "pages 1 to the last of the kept hugepage are an io_uring fixed buffer (%s)",
	      err ? strerror(err) : "ok");
	munmap(base, hp);
	close(fd);
	CHECK(kpageflags(head) & (1ULL << KPF_HUGE),
	      "memfd closed: the pinned hugepage is pending, not dissolved");

	err = corrupt_pfn_errno(bad[1]);
	CHECK(err == EBUSY,
	      "an error in page 5, which the buffer maps: not recovered, EBUSY (%s)",
	      err ? strerror(err) : "recovered");

	CHECK(!syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_BUFFERS, NULL, 0),
	      "unregister the fixed buffer");
	close(ring);
	expect_offlined(head, bad, 2);
	return check_exit_status();
}

static int mode_unpoison(void)
{
	long pool_before, hwc;
	uint64_t head, pfn;
	char *base;
	int fd;

	base = kept_poisoned_hugepage("guest-ram-unpoison", 0x5000, &fd, &head, &pfn);
	pool_before = nr_hugepages();
	hwc = meminfo("HardwareCorrupted");
	expect_unpoison_refused("the poisoned page", pfn);
	expect_unpoison_refused("the head", head);
	expect_unpoison_refused("a healthy page", pfn_of(base + 0x9000));
	CHECK(base[0x9000] == 0x5a && base[0x4fff] == 0x5a,
	      "the hugepage is still mapped and readable");
	CHECK(nr_hugepages() == pool_before && meminfo("HardwareCorrupted") == hwc,
	      "the pool and HardwareCorrupted are unchanged");
	munmap(base, hp);
	close(fd);
	expect_offlined(head, &pfn, 1);
	return check_exit_status();
}

static int mode_release(const char *cmd_before, const char *cmd_released)
{
	char head_hex[32];
	long nr_before;
	uint64_t head, pfn;
	char *base;
	int fd;

	base = kept_poisoned_hugepage("guest-ram-release", 0x3000, &fd, &head, &pfn);
	/* After the fault: a surplus hugepage joins the pool only now. */
	nr_before = nr_hugepages();
	munmap(base, hp);
	CHECK(system(cmd_before) == 0, "before the close: %s", cmd_before);
	close(fd);
	CHECK(nr_hugepages() == nr_before - 1,
	      "closed: the hugepage left the pool (%ld -> %ld)", nr_before,
	      nr_hugepages());
	/* CMD_RELEASED may look at the hugepage: its head pfn, in hex. */
	snprintf(head_hex, sizeof(head_hex), "%#llx", (unsigned long long)head);
	setenv("MFR_HEAD_PFN", head_hex, 1);
	CHECK(system(cmd_released) == 0, "after the close: %s", cmd_released);
	expect_offlined(head, &pfn, 1);
	return check_exit_status();
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	if (!strcmp(argv[2], "2M")) {
		hp = 2UL << 20;
		pool = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages";
	} else if (!strcmp(argv[2], "1G")) {
		hp = 1UL << 30;
		pool = "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages";
	} else {
		return 2;
	}
	sigbus_install();

	if (!strcmp(argv[1], "pinned") && argc == 5)
		return mode_pinned(!strcmp(argv[3], "race"), argv[4]);
	if (!strcmp(argv[1], "pinned-released") && argc == 3)
		return mode_pinned_released();
	if (!strcmp(argv[1], "unpoison") && argc == 3)
		return mode_unpoison();
	if (!strcmp(argv[1], "release") && argc == 5)
		return mode_release(argv[3], argv[4]);
	fprintf(stderr, "usage: see the comment at the top of %s\n", __FILE__);
	return 2;
}
