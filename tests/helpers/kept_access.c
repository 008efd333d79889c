// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kept_access: what each kernel path does with the poisoned 4 KiB page P
 * of a hugepage kept mapped (MFD_MF_KEEP_UE_MAPPED), and with a healthy
 * page H of the same hugepage.
 *
 *   kept_access 2M|1G madvise|mce [REQUEST_FILE]
 *     madvise  P is poisoned with MADV_HWPOISON: nothing traps a later
 *              read, so a kernel path that reads P would go unnoticed
 *              but for the checks on what it returns
 *     mce      the host injects a real action-optional machine check into
 *              P (request written to REQUEST_FILE, see tests/mce/run.sh):
 *              the kernel removes P from the direct map, so a kernel read
 *              of it is an oops the VM runner catches
 *
 * Checks:
 * - /proc/self/mem, process_vm_readv, process_vm_writev,
 *   ptrace(PTRACE_PEEKDATA), vmsplice and an O_DIRECT write from the
 *   mapping refuse P and serve H; pread() on the memfd stops short at P;
 *   an io_uring buffer over the hugepage is refused, one over H is not;
 *   process_vm_readv and io_uring buffers over the healthy runs of the
 *   hugepage before and after P are served, stopping short of P;
 * - FUTEX_WAKE_OP, an atomic on its second word, refuses a word of P
 *   (EFAULT) and serves one of H;
 * - a private mapping made before the error and one made after read H;
 *   a write to either, a copy-on-write that would read P, raises SIGBUS
 *   BUS_MCEERR_AR with the hugepage's si_addr_lsb and changes nothing;
 * - an unaligned hole punch that would zero part of P fails with
 *   EHWPOISON and changes nothing; one over healthy pages of the same
 *   hugepage zeroes its range.
 * The memfd is closed at the end (the hugepage is then offlined).  Prints
 * ok/not ok lines; exits 0 if all held.
 */
#include <errno.h>
#include <linux/futex.h>
#include <linux/io_uring.h>
#include <pthread.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "check.h"
#include "hwpoison.h"

#define P_OFF 0x3000UL		/* the poisoned page */
#define H_OFF 0x5000UL		/* a healthy page of the same hugepage */
#define FILLED 0x10000UL	/* bytes written at the start of each hugepage */

static unsigned long hp, len;
static char *base;
static int memfd;

static uint64_t pattern(unsigned long off)
{
	return (off + 1) * 0x9E3779B97F4A7C15ULL;
}

/* Do words [from, to) of @map hold their pattern? */
static int intact(char *map, unsigned long from, unsigned long to)
{
	for (unsigned long off = from; off < to; off += 8)
		if (WORD_AT(map, off) != pattern(off))
			return 0;
	return 1;
}

static void fill(unsigned long from, unsigned long to)
{
	for (unsigned long off = from; off < to; off += 8)
		WORD_AT(base, off) = pattern(off);
}

static void *madvise_thread(void *arg)
{
	struct sigbus_record *rec = arg;

	SIGBUS_TRY(*rec, madvise(base + P_OFF, 4096, MADV_HWPOISON));
	return NULL;
}

static void poison(const char *how, const char *request)
{
	uint64_t pfn = pfn_of(base + P_OFF);

	if (!strcmp(how, "madvise")) {
		struct sigbus_record rec = { 0 };
		pthread_t t;

		pthread_create(&t, NULL, madvise_thread, &rec);
		pthread_join(t, NULL);
		CHECK(rec.got && rec.lsb == 12, "MADV_HWPOISON of P: SIGBUS, lsb 12 (got %d, lsb %d)",
		      rec.got, rec.lsb);
	} else {
		mce_request(request, "ao", 0, pfn << 12);
	}
	CHECK(wait_hwpoison(pfn, 60), "P (pfn %#llx) is HWPOISON",
	      (unsigned long long)pfn);
}

static void check_proc_mem(void)
{
	int fd = open("/proc/self/mem", O_RDWR);
	uint64_t v = 0;
	ssize_t n;

	errno = 0;
	n = pread(fd, &v, 8, (uintptr_t)(base + P_OFF));
	CHECK(n == -1 && errno == EIO, "/proc/self/mem read of P: EIO (%zd, %s)",
	      n, strerror(errno));
	errno = 0;
	n = pwrite(fd, &v, 8, (uintptr_t)(base + P_OFF));
	CHECK(n == -1 && errno == EIO, "/proc/self/mem write to P: EIO (%zd, %s)",
	      n, strerror(errno));
	n = pread(fd, &v, 8, (uintptr_t)(base + H_OFF));
	CHECK(n == 8 && v == pattern(H_OFF), "/proc/self/mem read of H serves it");
	n = pwrite(fd, &v, 8, (uintptr_t)(base + H_OFF));
	CHECK(n == 8, "/proc/self/mem write to H");
	close(fd);
}

/*
 * Ranges: GUP takes the healthy base pages of the leaf (PMD or PUD) in
 * blocks that must stop short of P, then serves the pages after it.
 */
static void check_process_vm_ranges(void)
{
	static char buf[FILLED];
	struct iovec local = { buf, P_OFF + 0x2000 }, remote = { base, P_OFF + 0x2000 };
	ssize_t n;

	n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	CHECK(n == (ssize_t)P_OFF && !memcmp(buf, base, P_OFF),
	      "process_vm_readv from the hugepage's start over P stops at P (%zd of %#lx)",
	      n, P_OFF + 0x2000);
	local.iov_len = remote.iov_len = FILLED - P_OFF - 4096;
	remote.iov_base = base + P_OFF + 4096;
	n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	CHECK(n == (ssize_t)(FILLED - P_OFF - 4096) &&
	      !memcmp(buf, base + P_OFF + 4096, FILLED - P_OFF - 4096),
	      "process_vm_readv from the page after P serves the rest (%zd of %#lx)",
	      n, FILLED - P_OFF - 4096);
}

static void check_process_vm(void)
{
	uint64_t v = 0;
	struct iovec local = { &v, 8 }, remote = { base + P_OFF, 8 };
	ssize_t n;

	errno = 0;
	n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	CHECK(n == -1 && errno == EFAULT, "process_vm_readv of P: EFAULT (%zd, %s)",
	      n, strerror(errno));
	errno = 0;
	n = process_vm_writev(getpid(), &local, 1, &remote, 1, 0);
	CHECK(n == -1 && errno == EFAULT, "process_vm_writev to P: EFAULT (%zd, %s)",
	      n, strerror(errno));
	remote.iov_base = base + H_OFF;
	n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	CHECK(n == 8 && v == pattern(H_OFF), "process_vm_readv of H serves it");
	n = process_vm_writev(getpid(), &local, 1, &remote, 1, 0);
	CHECK(n == 8, "process_vm_writev to H");
	check_process_vm_ranges();
}

static void check_ptrace(void)
{
	long p, h;
	int st, err;
	pid_t pid = fork();

	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		raise(SIGSTOP);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	errno = 0;
	p = ptrace(PTRACE_PEEKDATA, pid, base + P_OFF, NULL);
	err = errno;
	errno = 0;
	h = ptrace(PTRACE_PEEKDATA, pid, base + H_OFF, NULL);
	CHECK(p == -1 && err == EIO, "ptrace(PEEKDATA) of P: EIO (%s)", strerror(err));
	CHECK(!errno && (uint64_t)h == pattern(H_OFF), "ptrace(PEEKDATA) of H serves it");
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

static void check_vmsplice(void)
{
	struct iovec iov = { base + P_OFF, 4096 };
	static char buf[4096];
	int pfd[2];
	ssize_t n;

	if (pipe(pfd)) {
		CHECK(0, "pipe");
		return;
	}
	errno = 0;
	n = vmsplice(pfd[1], &iov, 1, SPLICE_F_NONBLOCK);
	CHECK(n == -1 && errno == EFAULT, "vmsplice of P: EFAULT (%zd, %s)", n,
	      strerror(errno));
	iov.iov_base = base + H_OFF;
	n = vmsplice(pfd[1], &iov, 1, SPLICE_F_NONBLOCK);
	CHECK(n == 4096 && read(pfd[0], buf, 4096) == 4096 &&
	      !memcmp(buf, base + H_OFF, 4096), "vmsplice of H serves it (%zd)", n);
	close(pfd[0]);
	close(pfd[1]);
}

/* O_DIRECT from the mapping to a loop device backed by a tmpfs file. */
static void check_odirect(void)
{
	char dev[64] = "", cmd[256], *buf = NULL;
	char file[] = "/tmp/kept_access.XXXXXX";
	int bfd = mkstemp(file), fd = -1;
	FILE *p;
	ssize_t n;

	if (bfd < 0 || ftruncate(bfd, 1 << 20)) {
		CHECK(0, "backing file for the loop device");
		return;
	}
	close(bfd);
	snprintf(cmd, sizeof(cmd), "losetup -f --show %s", file);
	p = popen(cmd, "r");
	if (!p || !fgets(dev, sizeof(dev), p) || pclose(p)) {
		CHECK(0, "losetup -f --show (CONFIG_BLK_DEV_LOOP?)");
		unlink(file);
		return;
	}
	dev[strcspn(dev, "\n")] = 0;
	fd = open(dev, O_RDWR | O_DIRECT);
	if (fd < 0 || posix_memalign((void **)&buf, 4096, 4096)) {
		CHECK(0, "open %s O_DIRECT", dev);
		goto out;
	}
	errno = 0;
	n = pwrite(fd, base + P_OFF, 4096, 0);
	CHECK(n == -1 && errno == EFAULT, "O_DIRECT write from P: EFAULT (%zd, %s)",
	      n, strerror(errno));
	n = pwrite(fd, base + H_OFF, 4096, 4096);
	CHECK(n == 4096 && pread(fd, buf, 4096, 4096) == 4096 &&
	      !memcmp(buf, base + H_OFF, 4096), "O_DIRECT write from H (%zd)", n);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	snprintf(cmd, sizeof(cmd), "losetup -d %s", dev);
	if (system(cmd))
		CHECK(0, "%s", cmd);
	unlink(file);
}

static void check_pread(void)
{
	static char buf[FILLED];
	ssize_t n;

	n = pread(memfd, buf, sizeof(buf), 0);
	CHECK(n == (ssize_t)P_OFF && !memcmp(buf, base, P_OFF),
	      "pread() of the memfd stops short at P (%zd of %lu)", n, FILLED);
	errno = 0;
	n = pread(memfd, buf, 4096, P_OFF);
	CHECK(n == -1 && errno == EIO, "pread() of P: EIO (%zd, %s)", n,
	      strerror(errno));
	n = pread(memfd, buf, 4096, H_OFF);
	CHECK(n == 4096 && !memcmp(buf, base + H_OFF, 4096), "pread() of H");
}

static void check_io_uring(void)
{
	struct io_uring_params params = { 0 };
	struct iovec iov = { base, hp };
	int ring = syscall(__NR_io_uring_setup, 4, &params);
	long rc;

	if (ring < 0) {
		CHECK(0, "io_uring_setup (%s)", strerror(errno));
		return;
	}
	errno = 0;
	rc = syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, &iov, 1);
	CHECK(rc < 0, "io_uring buffer over the poisoned hugepage refused (%ld, %s)",
	      rc, strerror(errno));
	if (!rc)
		syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_BUFFERS, NULL, 0);
	iov.iov_base = base + H_OFF;
	iov.iov_len = 4096;
	rc = syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, &iov, 1);
	CHECK(!rc, "io_uring buffer over H registers (%s)", rc ? strerror(errno) : "ok");
	if (!rc)
		syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_BUFFERS, NULL, 0);
	/* The pages before P, and the rest of the leaf after it. */
	iov.iov_base = base;
	iov.iov_len = P_OFF;
	rc = syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, &iov, 1);
	CHECK(!rc, "io_uring buffer up to P registers (%s)", rc ? strerror(errno) : "ok");
	if (!rc)
		syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_BUFFERS, NULL, 0);
	iov.iov_base = base + P_OFF + 4096;
	iov.iov_len = hp - P_OFF - 4096;
	rc = syscall(__NR_io_uring_register, ring, IORING_REGISTER_BUFFERS, &iov, 1);
	CHECK(!rc, "io_uring buffer from the page after P to the hugepage's end registers (%s)",
	      rc ? strerror(errno) : "ok");
	if (!rc)
		syscall(__NR_io_uring_register, ring, IORING_UNREGISTER_BUFFERS, NULL, 0);
	close(ring);
}

/* No copy-on-write reservation: the pool may have no spare hugepage. */
/*
 * FUTEX_WAKE_OP read-modify-writes its second word in place, an atomic the
 * kernel could not recover from on poison: refused in P (EFAULT), done in
 * H.  Nobody waits, so each call wakes no one.
 */
static void check_futex(void)
{
	uint32_t *p = (uint32_t *)(base + P_OFF + 64);
	uint32_t *h = (uint32_t *)(base + H_OFF + 64);
	int op = FUTEX_OP(FUTEX_OP_SET, 7, FUTEX_OP_CMP_EQ, 0);
	uint64_t saved = WORD_AT(base, H_OFF + 64);
	uint32_t first = 0;
	long rc;

	errno = 0;
	rc = syscall(SYS_futex, &first, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1, p, op);
	CHECK(rc == -1 && errno == EFAULT,
	      "FUTEX_WAKE_OP on a word of P: EFAULT (got %ld, %s)", rc, strerror(errno));
	rc = syscall(SYS_futex, &first, FUTEX_WAKE_OP_PRIVATE, 1, (void *)1, h, op);
	CHECK(rc == 0 && *h == 7, "FUTEX_WAKE_OP on a word of H: done (got %ld, word %u)",
	      rc, *h);
	WORD_AT(base, H_OFF + 64) = saved;
}

static char *map_private(void)
{
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_NORESERVE, memfd, 0);

	if (m == MAP_FAILED) {
		perror("mmap MAP_PRIVATE");
		exit(2);
	}
	return m;
}

static void check_private(char *priv, const char *when)
{
	struct sigbus_record rec;
	volatile uint64_t v = 0;

	SIGBUS_TRY(rec, v = WORD_AT(priv, H_OFF));
	CHECK(!rec.got && v == pattern(H_OFF), "private mapping made %s: H reads back",
	      when);
	SIGBUS_TRY(rec, WORD_AT(priv, H_OFF) = 1);
	CHECK(rec.got && rec.code == BUS_MCEERR_AR && rec.lsb == __builtin_ctzl(hp),
	      "private mapping made %s: a write (copy-on-write) raises SIGBUS AR, lsb %d (got %d, code %d, lsb %d)",
	      when, __builtin_ctzl(hp), rec.got, rec.code, rec.lsb);
	CHECK(intact(priv, H_OFF, H_OFF + 4096) && intact(base, H_OFF, H_OFF + 4096),
	      "private mapping made %s: nothing was copied or changed", when);
}

static int punch(unsigned long off, unsigned long n)
{
	errno = 0;
	return fallocate(memfd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, n);
}

static void check_punch(void)
{
	int rc;

	rc = punch(P_OFF - 0x800, 0x1000);
	CHECK(rc == -1 && errno == EHWPOISON,
	      "unaligned punch over part of P: EHWPOISON (%s)", strerror(errno));
	CHECK(intact(base, P_OFF - 0x800, P_OFF), "  and changes nothing");
	if (len > hp) {
		/* Two partial hugepages: the first meets P, the second not. */
		rc = punch(P_OFF - 0x800, hp - P_OFF + 0x1800);
		CHECK(rc == -1 && errno == EHWPOISON,
		      "unaligned punch from P into the next hugepage: EHWPOISON (%s)",
		      strerror(errno));
		CHECK(intact(base, P_OFF - 0x800, P_OFF) && intact(base, hp, hp + 0x1000),
		      "  and changes neither hugepage");
	}
	rc = punch(H_OFF + 0x100, 0x1200);
	CHECK(!rc && WORD_AT(base, H_OFF + 0x100) == 0 &&
	      WORD_AT(base, H_OFF + 0x12f8) == 0 &&
	      WORD_AT(base, H_OFF + 0xf8) == pattern(H_OFF + 0xf8) &&
	      WORD_AT(base, H_OFF + 0x1300) == pattern(H_OFF + 0x1300),
	      "unaligned punch over healthy pages of the poisoned hugepage zeroes its range (%s)",
	      rc ? strerror(errno) : "ok");
	fill(H_OFF, H_OFF + 0x2000);
}

int main(int argc, char **argv)
{
	char *priv_before, *priv_after;
	unsigned int huge_flag;

	if (argc < 3 || (strcmp(argv[1], "2M") && strcmp(argv[1], "1G")) ||
	    (strcmp(argv[2], "madvise") && strcmp(argv[2], "mce")) ||
	    (!strcmp(argv[2], "mce") && argc < 4)) {
		fprintf(stderr, "usage: kept_access 2M|1G madvise|mce [REQUEST_FILE]\n");
		return 2;
	}
	hp = !strcmp(argv[1], "1G") ? 1UL << 30 : 2UL << 20;
	len = hp == (1UL << 30) ? hp : 2 * hp;
	huge_flag = (unsigned int)__builtin_ctzl(hp) << MFD_HUGE_SHIFT;
	sigbus_install();

	memfd = memfd_create("guest-ram-access",
			     MFD_HUGETLB | huge_flag | MFD_MF_KEEP_UE_MAPPED);
	if (memfd < 0 || ftruncate(memfd, len)) {
		perror("memfd_create");
		return 2;
	}
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	for (unsigned long h = 0; h < len; h += hp)
		fill(h, h + FILLED);
	priv_before = map_private();
	CHECK(WORD_AT(priv_before, H_OFF) == pattern(H_OFF),
	      "a private mapping reads H before the error");

	poison(argv[2], argc > 3 ? argv[3] : NULL);

	check_proc_mem();
	check_process_vm();
	check_ptrace();
	check_vmsplice();
	check_odirect();
	check_pread();
	check_io_uring();
	check_futex();

	check_private(priv_before, "before the error");
	priv_after = map_private();
	check_private(priv_after, "after the error");
	munmap(priv_before, len);
	munmap(priv_after, len);

	check_punch();

	CHECK(intact(base, 0, P_OFF) && intact(base, P_OFF + 4096, FILLED),
	      "every healthy word written reads back");
	CHECK(pfn_of(base) == pfn_of(base + P_OFF) - P_OFF / 4096,
	      "the hugepage is still mapped at the same frame");
	munmap(base, len);
	close(memfd);
	return check_exit_status();
}
