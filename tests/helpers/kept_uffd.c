// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kept_uffd: a kept poisoned hugepage (MFD_MF_KEEP_UE_MAPPED) behind a
 * userfaultfd MINOR registration, used the way a postcopy live-migration
 * destination uses one: the contents arrive through a first mapping of
 * the guest memfd, the guest's mapping is registered for MINOR faults and
 * each fault is resolved with UFFDIO_CONTINUE.
 *
 *   kept_uffd 2M|1G madvise|mce [MCE_DIR]
 *     madvise  page P is poisoned with MADV_HWPOISON through the first
 *              mapping (nothing traps a later load of it, so consuming it
 *              is make test-mce's part)
 *     mce      the host injects a real action-optional machine check into
 *              P (MCE_DIR/req-ao), then an action-required one while this
 *              task spins in user space with only the guest mapping
 *              (MCE_DIR/req-ar); see tests/mce/run.sh
 *
 * Checks: UFFDIO_CONTINUE maps the kept folio (stock kernels fail it with
 * EIO for any poisoned folio) and healthy words read back through the
 * guest mapping; with mce, consuming P there raises SIGBUS BUS_MCEERR_AR
 * at its address in that mapping with si_addr_lsb 12; UFFDIO_POISON of the
 * hugepage's range in the guest mapping makes a read there raise SIGBUS
 * with the hugepage's lsb, while another mapping still reads the kept
 * hugepage.  Prints ok/not ok lines; exits 0 if all held.
 */
#include <errno.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "check.h"
#include "hwpoison.h"

/* Linux 6.6 uAPI; Debian 12's headers are 6.1's. */
#ifndef UFFD_FEATURE_POISON
#define UFFD_FEATURE_POISON (1 << 14)
struct uffdio_poison {
	struct uffdio_range range;
	__u64 mode;
	__s64 updated;
};
#define UFFDIO_POISON _IOWR(UFFDIO, 0x08, struct uffdio_poison)
#endif

#define P_OFF 0x3000UL
#define FILLED 0x10000UL
#define AR_CPU 1

static unsigned long hp;
static int uffd;
static volatile int continues, continue_errors, stop;

static uint64_t pattern(unsigned long off)
{
	return (off + 1) * 0x5851F42D4C957F2DULL;
}

static int intact(char *map, unsigned long from, unsigned long to)
{
	for (unsigned long off = from; off < to; off += 8) {
		if (off / 4096 == P_OFF / 4096)
			continue;
		if (WORD_AT(map, off) != pattern(off))
			return 0;
	}
	return 1;
}

/* The migration thread: resolve each MINOR fault with UFFDIO_CONTINUE. */
static void *fault_thread(void *arg)
{
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };

	(void)arg;
	while (!stop) {
		struct uffdio_continue cont = { 0 };
		struct uffd_msg msg;

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (read(uffd, &msg, sizeof(msg)) != sizeof(msg))
			continue;
		if (msg.event != UFFD_EVENT_PAGEFAULT ||
		    !(msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_MINOR)) {
			continue_errors++;
			continue;
		}
		cont.range.start = msg.arg.pagefault.address & ~(hp - 1);
		cont.range.len = hp;
		if (ioctl(uffd, UFFDIO_CONTINUE, &cont)) {
			fprintf(stderr, "UFFDIO_CONTINUE: %s\n", strerror(errno));
			continue_errors++;
			/* Let the faulting thread go, or it would wait forever. */
			stop = 1;
		} else {
			continues++;
		}
	}
	return NULL;
}

static void *madvise_thread(void *addr)
{
	struct sigbus_record *rec = malloc(sizeof(*rec));

	SIGBUS_TRY(*rec, madvise(addr, 4096, MADV_HWPOISON));
	return rec;
}

static struct sigbus_record madvise_poison(char *addr)
{
	struct sigbus_record rec, *r;
	pthread_t t;

	pthread_create(&t, NULL, madvise_thread, addr);
	pthread_join(t, (void **)&r);
	rec = *r;
	free(r);
	return rec;
}

static char *map_shared(int fd)
{
	char *m = mmap(NULL, hp, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return m;
}

/*
 * Spin in user space until the SIGBUS: an action-required machine check
 * is only recoverable when it interrupts user mode.
 */
static __attribute__((noinline)) void spin(void)
{
	while (!sigbus_last.got)
		;
}

static struct sigbus_record consume_by_mce(char *addr, const char *dir)
{
	struct sigbus_record rec;
	char path[4096];
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(AR_CPU, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		exit(2);
	}
	snprintf(path, sizeof(path), "%s/req-ar", dir);
	alarm(60);
	SIGBUS_TRY(rec, (mce_request(path, "ar", AR_CPU, pfn_of(addr) << 12), spin()));
	alarm(0);
	return rec;
}

int main(int argc, char **argv)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { 0 };
	struct uffdio_poison upoison = { 0 };
	struct sigbus_record rec;
	char *src, *guest, *other;
	unsigned int huge_flag;
	const char *how;
	pthread_t t;
	uint64_t pfn;
	int fd;

	if (argc < 3 || (strcmp(argv[1], "2M") && strcmp(argv[1], "1G")) ||
	    (strcmp(argv[2], "madvise") && strcmp(argv[2], "mce")) ||
	    (!strcmp(argv[2], "mce") && argc < 4)) {
		fprintf(stderr, "usage: kept_uffd 2M|1G madvise|mce [MCE_DIR]\n");
		return 2;
	}
	hp = !strcmp(argv[1], "1G") ? 1UL << 30 : 2UL << 20;
	how = argv[2];
	huge_flag = (unsigned int)__builtin_ctzl(hp) << MFD_HUGE_SHIFT;
	sigbus_install();

	fd = memfd_create("guest-ram-postcopy",
			  MFD_HUGETLB | huge_flag | MFD_MF_KEEP_UE_MAPPED);
	if (fd < 0 || ftruncate(fd, hp)) {
		perror("memfd_create");
		return 2;
	}

	/* The incoming pages land through the first mapping; one is bad. */
	src = map_shared(fd);
	for (unsigned long off = 0; off < FILLED; off += 8)
		WORD_AT(src, off) = pattern(off);
	pfn = pfn_of(src + P_OFF);
	if (!strcmp(how, "madvise")) {
		rec = madvise_poison(src + P_OFF);
		CHECK(rec.got && rec.lsb == 12, "MADV_HWPOISON of P: SIGBUS, lsb 12");
	} else {
		char path[4096];

		snprintf(path, sizeof(path), "%s/req-ao", argv[3]);
		mce_request(path, "ao", 0, pfn << 12);
	}
	CHECK(wait_hwpoison(pfn, 60), "P (pfn %#llx) is HWPOISON",
	      (unsigned long long)pfn);
	munmap(src, hp);

	/* The guest's mapping: every first touch is a MINOR fault. */
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	api.features = UFFD_FEATURE_MINOR_HUGETLBFS | UFFD_FEATURE_POISON;
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		fprintf(stderr, "userfaultfd with MINOR_HUGETLBFS and POISON: %s\n",
			strerror(errno));
		return 2;
	}
	guest = map_shared(fd);
	reg.range.start = (uintptr_t)guest;
	reg.range.len = hp;
	reg.mode = UFFDIO_REGISTER_MODE_MINOR;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		perror("UFFDIO_REGISTER MINOR");
		return 2;
	}
	pthread_create(&t, NULL, fault_thread, NULL);

	CHECK(intact(guest, 0, FILLED), "healthy words read back through the MINOR-registered mapping");
	/* The fault thread counts after UFFDIO_CONTINUE woke this one. */
	for (int i = 0; i < 100 && !continues && !continue_errors; i++)
		usleep(10000);
	CHECK(continues == 1 && !continue_errors,
	      "one MINOR fault, resolved by UFFDIO_CONTINUE on the kept folio (%d, %d errors)",
	      continues, continue_errors);
	CHECK(pfn_of(guest + P_OFF) == pfn, "the guest mapping maps the kept folio");
	/*
	 * Mapped now: no more faults to resolve.  The fault thread must not
	 * run on the CPU that takes the action-required machine check, which
	 * is only recoverable in user mode.
	 */
	stop = 1;
	pthread_join(t, NULL);

	if (!strcmp(how, "madvise")) {
		/* Nothing traps a load of P here; MADV_HWPOISON cannot pin it. */
		errno = 0;
		rec = madvise_poison(guest + P_OFF);
		CHECK(!rec.got, "MADV_HWPOISON of P again through the guest mapping: refused, no SIGBUS");
	} else {
		rec = consume_by_mce(guest + P_OFF, argv[3]);
		CHECK(rec.got && rec.code == BUS_MCEERR_AR && rec.addr == guest + P_OFF &&
		      rec.lsb == 12,
		      "consuming P through the guest mapping: SIGBUS AR at its address, lsb 12 (got %d, code %d, %p vs %p, lsb %d)",
		      rec.got, rec.code, rec.addr, (void *)(guest + P_OFF), rec.lsb);
	}

	/* UFFDIO_POISON marks the guest mapping's hugepage, not the folio. */
	madvise(guest, hp, MADV_DONTNEED);
	upoison.range.start = (uintptr_t)guest;
	upoison.range.len = hp;
	CHECK(!ioctl(uffd, UFFDIO_POISON, &upoison), "UFFDIO_POISON of the hugepage's range (%s)",
	      strerror(errno));
	{
		volatile uint64_t v;

		SIGBUS_TRY(rec, v = WORD_AT(guest, 0x5000));
		(void)v;
	}
	CHECK(rec.got && rec.code == BUS_MCEERR_AR && rec.lsb == __builtin_ctzl(hp),
	      "a read there raises SIGBUS AR with lsb %d (got %d, code %d, lsb %d)",
	      __builtin_ctzl(hp), rec.got, rec.code, rec.lsb);
	other = map_shared(fd);
	CHECK(intact(other, 0, FILLED) && pfn_of(other + P_OFF) == pfn,
	      "another mapping still reads the kept hugepage");

	munmap(other, hp);
	munmap(guest, hp);
	close(uffd);
	close(fd);
	return check_exit_status();
}
