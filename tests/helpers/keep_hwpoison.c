// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * keep_hwpoison: a HugeTLB memfd opted in with MFD_MF_KEEP_UE_MAPPED keeps
 * its hugepage mapped after uncorrected errors in some of its 4 KiB pages.
 *
 *   keep_hwpoison SIZE NPAGES INJECT RELEASE [HOLD_CMD]
 *     SIZE     2M | 1G (the memfd has 2 hugepages of 2M, or 1 of 1G)
 *     NPAGES   poisoned 4 KiB pages in hugepage 0
 *     INJECT   madvise (MADV_HWPOISON from other threads: action required)
 *              | corrupt-pfn (hwpoison-inject: action optional, to this
 *              PR_MCE_KILL_EARLY task)
 *     RELEASE  close | truncate | punch | madv-remove | none
 *     HOLD_CMD shell command run (must succeed) while the memfd is alive
 *
 * Checks: each injection signals exactly the poisoned page (si_addr, lsb
 * 12, AR or AO), a repeated action-optional error is not signalled again
 * and MADV_HWPOISON of a poisoned page is refused (the kernel takes no
 * reference to it; a consumed repeat is make test-mce's), every healthy byte reads back and
 * is writable, the pool is unchanged, HardwareCorrupted grew 4 kB per page,
 * re-faults (new mapping, fork) work, a MAP_PRIVATE mapping reads the kept
 * hugepage and a write to it (copy-on-write) raises the hugepage-sized
 * SIGBUS, an unaligned hole punch over a poisoned page fails with
 * EHWPOISON and changes nothing (one over healthy pages zeroes its range).  After RELEASE: the hugepage left the
 * pool, healthy pages went back to the allocator, the poisoned pfns are
 * HWPOISON and not in the buddy allocator.  With MFR_PRESSURE=1 in the
 * environment, a child then allocates and touches ~85 % of free memory:
 * none of its pages may be a poisoned pfn, which must stay HWPOISON.
 */
#include <errno.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "check.h"
#include "hwpoison.h"
#include "meminfo.h"

static unsigned long hp;	/* hugepage size */
static unsigned long len;	/* memfd size */
static int npoison;
static unsigned long poff[64];	/* poisoned offsets */

static uint64_t pattern(unsigned long off, uint64_t seed)
{
	return (off + 1) * 0x9E3779B97F4A7C15ULL ^ seed;
}

static int is_poisoned(unsigned long off)
{
	for (int i = 0; i < npoison; i++)
		if (off / 4096 == poff[i] / 4096)
			return 1;
	return 0;
}

/* Compare every healthy word; returns the first bad offset or len. */
static unsigned long verify(char *base, uint64_t seed, unsigned long from,
			    unsigned long to)
{
	for (unsigned long off = from; off < to; off += 8) {
		if (is_poisoned(off)) {
			off = (off | 4095) - 7;
			continue;
		}
		if (WORD_AT(base, off) != pattern(off, seed))
			return off;
	}
	return len;
}

static void fill(char *base, uint64_t seed, int healthy_only)
{
	for (unsigned long off = 0; off < len; off += 8) {
		if (healthy_only && is_poisoned(off)) {
			off = (off | 4095) - 7;
			continue;
		}
		WORD_AT(base, off) = pattern(off, seed);
	}
}

struct inject_arg {
	char *addr;
	struct sigbus_record rec;
	int err;
};

static void *madvise_thread(void *p)
{
	struct inject_arg *a = p;
	int rc = 0;

	errno = 0;
	SIGBUS_SYSCALL(a->rec, rc = madvise(a->addr, 4096, MADV_HWPOISON));
	a->err = rc ? errno : 0;
	return NULL;
}

static void inject(const char *how, char *addr, const char *what, int repeat)
{
	struct sigbus_record rec;

	if (!strcmp(how, "madvise")) {
		struct inject_arg a = { .addr = addr };
		pthread_t t;

		pthread_create(&t, NULL, madvise_thread, &a);
		pthread_join(t, NULL);
		rec = a.rec;
		if (repeat) {
			/* It takes a reference to the page: refused, as stock. */
			CHECK(!rec.got && a.err == EFAULT,
			      "%s at +%#lx: MADV_HWPOISON of a poisoned page is refused (EFAULT; got %d, errno %d)",
			      what, (unsigned long)((uintptr_t)addr % hp), rec.got, a.err);
			return;
		}
		CHECK(rec.got && rec.code == BUS_MCEERR_AR,
		      "%s at +%#lx: BUS_MCEERR_AR to the injecting thread (got %d, code %d)",
		      what, (unsigned long)((uintptr_t)addr % hp), rec.got, rec.code);
		/* Every new base page is a first error: recovered, as upstream. */
		CHECK(a.err == 0, "%s at +%#lx: MADV_HWPOISON returns 0 (%s)",
		      what, (unsigned long)((uintptr_t)addr % hp),
		      a.err ? strerror(a.err) : "ok");
	} else {
		uint64_t pfn = pfn_of(addr);

		SIGBUS_TRY(rec, corrupt_pfn(pfn));
		if (repeat) {
			CHECK(!rec.got, "%s at pfn %#llx: reported once, no second SIGBUS",
			      what, (unsigned long long)pfn);
			return;
		}
		CHECK(rec.got && rec.code == BUS_MCEERR_AO,
		      "%s at pfn %#llx: BUS_MCEERR_AO to the early-kill task (got %d, code %d)",
		      what, (unsigned long long)pfn, rec.got, rec.code);
	}
	if (rec.got) {
		CHECK(rec.addr == addr, "  si_addr is the poisoned page (%p vs %p)",
		      rec.addr, addr);
		CHECK(rec.lsb == 12, "  si_addr_lsb is 12 (got %d)", rec.lsb);
	}
}

static long nr_hugepages(void)
{
	char path[128];

	snprintf(path, sizeof(path),
		 "/sys/kernel/mm/hugepages/hugepages-%lukB/nr_hugepages", hp >> 10);
	return read_long_file(path);
}

static long free_hugepages(void)
{
	char path[128];

	snprintf(path, sizeof(path),
		 "/sys/kernel/mm/hugepages/hugepages-%lukB/free_hugepages", hp >> 10);
	return read_long_file(path);
}

/* Unaligned hole punches: refused where they would zero a poisoned page. */
static void unaligned_punch_checks(int fd, uint64_t seed)
{
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	unsigned long bad = poff[npoison - 1], good = bad + 0x1000;
	int rc;

	if (m == MAP_FAILED) {
		CHECK(0, "mmap for the hole punch checks");
		return;
	}
	errno = 0;
	rc = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, bad + 0x800, 0x1000);
	CHECK(rc == -1 && errno == EHWPOISON,
	      "unaligned punch over part of a poisoned page: EHWPOISON (%s)",
	      strerror(errno));
	CHECK(verify(m, seed, 0, hp) == len, "  and the hugepage is unchanged");
	rc = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, good + 0x100, 0x200);
	CHECK(!rc && WORD_AT(m, good + 0x100) == 0 && WORD_AT(m, good + 0x2f8) == 0 &&
	      WORD_AT(m, good + 0xf8) == pattern(good + 0xf8, seed) &&
	      WORD_AT(m, good + 0x300) == pattern(good + 0x300, seed),
	      "unaligned punch over a healthy page of the poisoned hugepage zeroes its range");
	for (unsigned long off = good + 0x100; off < good + 0x300; off += 8)
		WORD_AT(m, off) = pattern(off, seed);
	if (len > hp) {
		rc = fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			       hp + 0x100000, 8192);
		CHECK(!rc && WORD_AT(m, hp + 0x100000) == 0 &&
		      WORD_AT(m, hp + 0x101ff8) == 0 &&
		      WORD_AT(m, hp + 0x102000) == pattern(hp + 0x102000, seed),
		      "unaligned punch into a healthy hugepage zeroes its range");
		/* Restore the pattern for the checks that follow. */
		for (unsigned long off = hp + 0x100000; off < hp + 0x102000; off += 8)
			WORD_AT(m, off) = pattern(off, seed);
	}
	munmap(m, len);
}

/* Allocate and touch most free memory; no page of it may be poisoned. */
static void pressure_check(const uint64_t *pfns)
{
	unsigned long bytes = (unsigned long)meminfo("MemFree") * 1024 / 100 * 85;
	unsigned long hits = 0, pages = bytes / 4096;
	uint64_t *map = malloc(pages * 8);
	char *mem;
	int pm;

	mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	pm = open("/proc/self/pagemap", O_RDONLY);
	if (mem == MAP_FAILED || !map || pm < 0) {
		CHECK(0, "allocate %lu MiB under pressure", bytes >> 20);
		return;
	}
	for (unsigned long i = 0; i < pages; i++)
		mem[i * 4096] = 1;
	if (pread(pm, map, pages * 8, (uintptr_t)mem / 4096 * 8) != (ssize_t)(pages * 8))
		perror("pagemap");
	for (unsigned long i = 0; i < pages; i++)
		for (int j = 0; j < npoison; j++)
			hits += (map[i] & ((1ULL << 55) - 1)) == pfns[j];
	CHECK(hits == 0, "%lu MiB allocated and touched: no page is a poisoned pfn",
	      bytes >> 20);
	for (int j = 0; j < npoison; j++)
		CHECK((kpageflags(pfns[j]) & (1ULL << KPF_HWPOISON)) &&
		      !(kpageflags(pfns[j]) & (1ULL << KPF_BUDDY)),
		      "after pressure: pfn %#llx still HWPOISON, not BUDDY",
		      (unsigned long long)pfns[j]);
	munmap(mem, bytes);
	close(pm);
	free(map);
}

static void refault_checks(int fd, char *base, uint64_t seed)
{
	struct sigbus_record rec;
	char *again, *priv;
	pid_t pid;
	int st;

	munmap(base, len);
	again = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(again != MAP_FAILED, "mmap again after munmap");
	if (again == MAP_FAILED)
		return;
	CHECK(verify(again, seed, 0, len) == len,
	      "healthy bytes read back through a new shared mapping");

	pid = fork();
	if (pid == 0)
		_exit(verify(again, seed, 0, len) == len ? 0 : 1);
	waitpid(pid, &st, 0);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "a forked child reads the healthy bytes of the shared mapping");

	/*
	 * Documented: a private mapping reads the kept hugepage; a write
	 * would copy it, poisoned pages included, and is refused instead.
	 * No COW reservation: the pool may have no spare hugepage.
	 */
	priv = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_NORESERVE, fd, 0);
	CHECK(priv != MAP_FAILED, "mmap MAP_PRIVATE");
	if (priv != MAP_FAILED) {
		unsigned long healthy = poff[0] + 4096;
		volatile uint64_t v = 0;

		SIGBUS_TRY(rec, v = WORD_AT(priv, healthy));
		CHECK(!rec.got && v == pattern(healthy, seed),
		      "MAP_PRIVATE read of a healthy page of the poisoned hugepage works");
		SIGBUS_TRY(rec, WORD_AT(priv, healthy) = 0);
		CHECK(rec.got && rec.lsb == __builtin_ctzl(hp) &&
		      WORD_AT(again, healthy) == pattern(healthy, seed),
		      "MAP_PRIVATE write to the poisoned hugepage: SIGBUS lsb %d, nothing written (got %d, lsb %d)",
		      __builtin_ctzl(hp), rec.got, rec.lsb);
		if (len > hp) {
			SIGBUS_TRY(rec, v = WORD_AT(priv, hp + 8));
			CHECK(!rec.got && v == pattern(hp + 8, seed),
			      "MAP_PRIVATE read of a healthy hugepage works");
		}
		munmap(priv, len);
	}
	munmap(again, len);
}

int main(int argc, char **argv)
{
	long nr_before, hwc_before, memfree_before;
	uint64_t pfns[64];
	const char *inj, *rel;
	struct sigbus_record rec;
	unsigned int huge_flag;
	char *base;
	int fd;

	if (argc < 5) {
		fprintf(stderr, "usage: %s 2M|1G NPAGES madvise|corrupt-pfn close|truncate|punch|madv-remove|none [HOLD_CMD]\n",
			argv[0]);
		return 2;
	}
	hp = !strcmp(argv[1], "1G") ? 1UL << 30 : 2UL << 20;
	huge_flag = (unsigned int)__builtin_ctzl(hp) << MFD_HUGE_SHIFT;
	len = hp == (1UL << 30) ? hp : 2 * hp;
	npoison = atoi(argv[2]);
	inj = argv[3];
	rel = argv[4];
	if (npoison < 1 || npoison > 64)
		return 2;
	for (int i = 0; i < npoison; i++)
		poff[i] = (i * (hp / npoison) + 0x3000) & ~4095UL;

	sigbus_install();
	if (!strcmp(inj, "corrupt-pfn"))
		prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 0);

	fd = memfd_create("keep", MFD_MF_KEEP_UE_MAPPED);
	CHECK(fd < 0 && errno == EINVAL, "MFD_MF_KEEP_UE_MAPPED without MFD_HUGETLB: EINVAL");

	nr_before = nr_hugepages();
	hwc_before = meminfo("HardwareCorrupted");
	fd = memfd_create("guest-ram-keep", MFD_HUGETLB | huge_flag | MFD_MF_KEEP_UE_MAPPED);
	CHECK(fd >= 0, "memfd_create(MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED) (%s)",
	      fd < 0 ? strerror(errno) : "ok");
	if (fd < 0 || ftruncate(fd, len))
		return 1;
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	fill(base, 1, 0);
	for (int i = 0; i < npoison; i++)
		pfns[i] = pfn_of(base + poff[i]);

	for (int i = 0; i < npoison; i++)
		inject(inj, base + poff[i], "error", 0);
	inject(inj, base + poff[0], "repeated error", 1);

	CHECK(verify(base, 1, 0, len) == len, "every healthy byte reads back its value");
	SIGBUS_TRY(rec, fill(base, 2, 1));
	CHECK(!rec.got && verify(base, 2, 0, len) == len,
	      "every healthy byte is writable");
	CHECK(nr_hugepages() == nr_before, "nr_hugepages unchanged (%ld)", nr_before);
	CHECK(meminfo("HardwareCorrupted") == hwc_before + 4 * npoison,
	      "HardwareCorrupted grew by %d kB (%ld -> %ld)", 4 * npoison,
	      hwc_before, meminfo("HardwareCorrupted"));
	for (int i = 0; i < npoison; i++)
		CHECK(kpageflags(pfns[i]) & (1ULL << KPF_HWPOISON),
		      "pfn %#llx is HWPOISON", (unsigned long long)pfns[i]);

	refault_checks(fd, base, 2);
	unaligned_punch_checks(fd, 2);

	if (argc > 5)
		CHECK(system(argv[5]) == 0, "while alive: %s", argv[5]);

	if (!strcmp(rel, "none"))
		return check_exit_status();

	memfree_before = meminfo("MemFree");
	if (!strcmp(rel, "truncate")) {
		CHECK(!ftruncate(fd, 0), "ftruncate(0)");
	} else if (!strcmp(rel, "punch")) {
		CHECK(!fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, hp),
		      "fallocate(PUNCH_HOLE) of the poisoned hugepage");
	} else if (!strcmp(rel, "madv-remove")) {
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

		CHECK(m != MAP_FAILED && !madvise(m, hp, MADV_REMOVE),
		      "MADV_REMOVE of the poisoned hugepage");
		munmap(m, len);
	}
	if (!strcmp(rel, "close"))
		close(fd);
	/* The module offlines from a worker: give it a moment. */
	for (int i = 0; i < 100 && nr_hugepages() != nr_before - 1; i++)
		usleep(100000);

	CHECK(nr_hugepages() == nr_before - 1,
	      "after %s: nr_hugepages dropped by one (%ld -> %ld)", rel,
	      nr_before, nr_hugepages());
	CHECK(meminfo("HardwareCorrupted") == hwc_before + 4 * npoison,
	      "HardwareCorrupted still %d kB above the start", 4 * npoison);
	{
		long want = (long)(hp >> 10) - 4 * npoison;
		long got = meminfo("MemFree") - memfree_before;

		/* With HVO the dissolve runs from a worker, after the pool drop. */
		for (int i = 0; i < 100 && got < want / 2; i++) {
			usleep(100000);
			got = meminfo("MemFree") - memfree_before;
		}

		/* Other allocations meanwhile cost a few hundred kB at most. */
		CHECK(got >= want / 2 && got <= want + 8192,
		      "MemFree grew by the hugepage minus the poisoned pages (%ld kB, want ~%ld)",
		      got, want);
	}
	for (int i = 0; i < npoison; i++) {
		uint64_t f = kpageflags(pfns[i]);

		/*
		 * The dissolve (with HVO from a worker, maybe still running)
		 * moves the poison flag from the folio to its base pages: in
		 * between, a base page reads neither HWPOISON nor HUGE.  Wait
		 * for the flag; BUDDY is never allowed, not even for a moment.
		 */
		for (int t = 0; t < 100 && !(f & (1ULL << KPF_HWPOISON)) &&
		     !(f & (1ULL << KPF_BUDDY)); t++) {
			usleep(100000);
			f = kpageflags(pfns[i]);
		}
		CHECK((f & (1ULL << KPF_HWPOISON)) && !(f & (1ULL << KPF_BUDDY)),
		      "pfn %#llx stays HWPOISON and out of the buddy allocator (flags %#llx)",
		      (unsigned long long)pfns[i], (unsigned long long)f);
	}
	if (getenv("MFR_PRESSURE"))
		pressure_check(pfns);
	if (strcmp(rel, "close")) {
		long free_before_close = free_hugepages();

		close(fd);
		/* Only the healthy hugepage (if any) is left to go back. */
		long left = strcmp(rel, "truncate") ? (long)(len / hp) - 1 : 0;

		CHECK(free_hugepages() == free_before_close + left,
		      "closing afterwards frees the %ld remaining healthy hugepage(s)",
		      left);
	}
	return check_exit_status();
}
