/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Helpers shared by the hwpoison test programs: SIGBUS capture, page-frame
 * lookup, poison injection (MADV_HWPOISON or hwpoison-inject) and
 * /proc/kpageflags.  All of it needs root.
 */
#ifndef MFR_TEST_HWPOISON_H
#define MFR_TEST_HWPOISON_H

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MFD_HUGETLB
#define MFD_HUGETLB 0x0004U
#endif
#ifndef MFD_MF_KEEP_UE_MAPPED
#define MFD_MF_KEEP_UE_MAPPED 0x0020U	/* kernel-hooks/ uAPI */
#endif
#define MFD_HUGE_SHIFT 26

#define KPF_BUDDY 10
#define KPF_HWPOISON 19

/* The 64-bit word at byte @off of @base, read or written exactly once. */
#define WORD_AT(base, off) (*(volatile uint64_t *)((char *)(base) + (off)))

struct sigbus_record {
	int got;
	int code;
	void *addr;
	int lsb;
};

static __thread sigjmp_buf sigbus_env;
static __thread struct sigbus_record sigbus_last;
static __thread volatile sig_atomic_t sigbus_no_jump;

static void sigbus_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	sigbus_last.got = 1;
	sigbus_last.code = si->si_code;
	sigbus_last.addr = si->si_addr;
	sigbus_last.lsb = si->si_addr_lsb;
	if (!sigbus_no_jump)
		siglongjmp(sigbus_env, 1);
}

static inline void sigbus_install(void)
{
	struct sigaction sa = { .sa_sigaction = sigbus_handler,
				.sa_flags = SA_SIGINFO | SA_NODEFER };

	sigaction(SIGBUS, &sa, NULL);
}

/* Run fn(arg) in this thread; returns the SIGBUS it raised, if any. */
#define SIGBUS_TRY(rec, stmt)						\
	do {								\
		sigbus_last.got = 0;					\
		if (!sigsetjmp(sigbus_env, 1)) {			\
			stmt;						\
		}							\
		(rec) = sigbus_last;					\
	} while (0)

/*
 * Run a system call that raises SIGBUS on its way back to user space
 * (MADV_HWPOISON): the handler returns instead of jumping, so that the
 * call's return value and errno are kept.
 */
#define SIGBUS_SYSCALL(rec, stmt)					\
	do {								\
		sigbus_last.got = 0;					\
		sigbus_no_jump = 1;					\
		__asm__ __volatile__("" ::: "memory");			\
		stmt;							\
		/*							\
		 * glibc declares system call wrappers leaf functions:	\
		 * without this the compiler assumes the handler did	\
		 * not run and keeps got == 0.				\
		 */							\
		__asm__ __volatile__("" ::: "memory");			\
		sigbus_no_jump = 0;					\
		(rec) = sigbus_last;					\
	} while (0)

/* The page frame behind @addr, or 0 if no page is present there. */
static inline uint64_t pfn_present(void *addr)
{
	uint64_t ent = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0 || pread(fd, &ent, 8, (uintptr_t)addr / 4096 * 8) != 8) {
		perror("/proc/self/pagemap");
		exit(2);
	}
	close(fd);
	return (ent & (1ULL << 63)) ? ent & ((1ULL << 55) - 1) : 0;
}

/* The page frame behind @addr, which must be present. */
static inline uint64_t pfn_of(void *addr)
{
	uint64_t pfn = pfn_present(addr);

	if (!pfn) {
		fprintf(stderr, "%p not present\n", addr);
		exit(2);
	}
	return pfn;
}

static inline uint64_t kpageflags(uint64_t pfn)
{
	uint64_t flags = 0;
	int fd = open("/proc/kpageflags", O_RDONLY);

	if (fd < 0 || pread(fd, &flags, 8, pfn * 8) != 8) {
		perror("/proc/kpageflags");
		exit(2);
	}
	close(fd);
	return flags;
}

/* hwpoison-inject: the path real asynchronous errors take (no AR). */
/*
 * Write @pfn to hwpoison-inject's corrupt-pfn (memory_failure() without a
 * reference and without MF_ACTION_REQUIRED, the path of a scrubber's
 * error); returns the errno memory_failure() answered, 0 if it recovered.
 */
static inline int corrupt_pfn_errno(uint64_t pfn)
{
	char buf[32];
	int fd = open("/sys/kernel/debug/hwpoison/corrupt-pfn", O_WRONLY);
	int n = snprintf(buf, sizeof(buf), "%#llx\n", (unsigned long long)pfn);
	int err = 0;

	if (fd < 0) {
		perror("corrupt-pfn (modprobe hwpoison_inject?)");
		exit(2);
	}
	if (write(fd, buf, n) != n)
		err = errno;
	close(fd);
	return err;
}

static inline void corrupt_pfn(uint64_t pfn)
{
	int err = corrupt_pfn_errno(pfn);

	if (err)
		fprintf(stderr, "corrupt-pfn write: %s\n", strerror(err));
}

/*
 * Ask the host for a real machine check (tests/mce/run.sh serves the
 * request through QEMU's monitor): writes "ao|ar CPU 0xPHYS" to @path.
 */
static inline void mce_request(const char *path, const char *mode, int cpu,
			       uint64_t phys)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f || fprintf(f, "%s %d %#llx\n", mode, cpu,
			  (unsigned long long)phys) < 0 ||
	    fclose(f) || rename(tmp, path)) {
		perror(path);
		exit(2);
	}
}

/*
 * A HugeTLB memfd of one hugepage of @hp bytes (2 or 1024 MiB), with
 * MFD_MF_KEEP_UE_MAPPED if @keep, mapped shared and filled with 0x5a.
 */
static inline char *hugetlb_memfd_map(const char *name, unsigned long hp,
				      int keep, int *fd)
{
	char *base;

	*fd = memfd_create(name, MFD_HUGETLB | (keep ? MFD_MF_KEEP_UE_MAPPED : 0) |
			  (__builtin_ctzl(hp) << MFD_HUGE_SHIFT));
	if (*fd < 0 || ftruncate(*fd, hp)) {
		perror("memfd_create/ftruncate");
		exit(2);
	}
	base = mmap(NULL, hp, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	memset(base, 0x5a, hp);
	return base;
}

/*
 * Whether the kernel log records on @fd (/dev/kmsg, non-blocking) not read
 * yet include memory_failure()'s outcome for @pfn ("Memory failure:
 * 0x...: recovery action for ...").
 */
static inline int hwpoison_handled(int fd, uint64_t pfn)
{
	char rec[2048], want[64];
	ssize_t n;

	snprintf(want, sizeof(want), "Memory failure: %#llx: ", (unsigned long long)pfn);
	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;	/* overwritten records: go on */
		rec[n] = 0;
		if (strstr(rec, want) && strstr(rec, "recovery action"))
			return 1;
	}
	return 0;
}

/*
 * Wait until @pfn is HWPoison and memory_failure() is done with it: an
 * asynchronous (action-optional) machine check sets the flag before the
 * kernel decides what to do with the page, and a test that acts in
 * between sees neither the old page nor the handled one.  The kernel log
 * is read from its start once, then only its new records.
 */
static inline int wait_hwpoison(uint64_t pfn, int seconds)
{
	int i, fd, found = 0;

	for (i = 0; i < seconds * 10; i++) {
		if (kpageflags(pfn) & (1ULL << KPF_HWPOISON))
			break;
		usleep(100000);
	}
	if (i == seconds * 10)
		return 0;
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (fd < 0) {
		perror("/dev/kmsg");
		return 0;
	}
	for (; i < seconds * 10 && !found; i++) {
		found = hwpoison_handled(fd, pfn);
		if (!found)
			usleep(100000);
	}
	close(fd);
	return found;
}

static inline long read_long_file(const char *path)
{
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f || fscanf(f, "%ld", &v) != 1) {
		perror(path);
		exit(2);
	}
	fclose(f);
	return v;
}

#endif
