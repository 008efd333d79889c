// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * memcheck: the init-time memory checker of the make test-vmm guest.
 *
 * Fills most of the guest's free RAM with a pattern (each 8-byte word
 * holds its own address, scrambled), then verifies it pass after pass.
 * It prints on stdout (the serial console), one "MEMCHECK" line each:
 *   ready     the buffer is filled; "target" lines name guest physical
 *             addresses it uses, 0x5000 into a 2 MiB frame, for the host
 *             to poison (not 2 MiB aligned, so exactness shows);
 *   mce       every machine check record the guest kernel logged (its
 *             mce_record tracepoint): its kind (deferred: logged by the
 *             poller, no machine check; action-optional; action-required:
 *             a machine check that stopped an access; corrected), the
 *             address, the mode the vCPU was in, bank status;
 *   kmsg      the kernel's machine-check and memory-failure lines;
 *   sigbus    every SIGBUS it gets (kind, address, lsb): such a page is
 *             lost and left out of later passes;
 *   wrong     every word read back different from what was written;
 *   done      the totals, after PASSES_AFTER passes following the first
 *             machine check or signal (memcheck.passes=N on the kernel
 *             command line: N), or after WAIT seconds without one;
 *   touch     with memcheck.touch=N on the kernel command line, after
 *             done: N reads of the first target page from user mode and N
 *             from the guest kernel (through /dev/gpa_touch), each with
 *             what came of it; then "touched" with the totals.
 *
 * memcheck.target_min=GPA on the command line: targets at or above GPA.
 *
 *   memcheck WAIT [RESERVE_MB]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096UL
#define HUGE (2UL << 20)
#define PASSES_AFTER 2
#define MAGIC 0x6d656d636865636bULL
#define MCI_STATUS_UC (1ULL << 61)
#define MCI_STATUS_AR (1ULL << 55)		/* Intel only */
#define MCI_STATUS_DEFERRED (1ULL << 44)	/* AMD */
#define MCG_STATUS_EIPV (1ULL << 1)

static unsigned char *buf;
static size_t npages;
/* Per page: 1 once a SIGBUS named it, 2 while KVM writes it (memcheck.pv). */
static unsigned char *lost;
static sigjmp_buf on_sigbus;
static volatile sig_atomic_t in_verify;
static volatile sig_atomic_t in_touch;
static volatile sig_atomic_t events;	/* machine checks and signals seen */
static unsigned long nlost, nwrong, nmce, nsigbus;
static int mce_fd = -1, kmsg_fd = -1;
static uint64_t *gpas;	/* per page: its guest physical address */

static uint64_t expected(const uint64_t *p)
{
	return (uint64_t)(uintptr_t)p ^ MAGIC;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The guest physical address of a virtual one (root sees pfns). */
static uint64_t gpa_of(const void *va)
{
	static int fd = -1;
	uint64_t ent;
	off_t off = (uintptr_t)va / PAGE * sizeof(ent);

	if (fd < 0)
		fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0 || pread(fd, &ent, sizeof(ent), off) != sizeof(ent))
		return 0;
	if (!(ent & (1ULL << 63)))
		return 0;
	return (ent & ((1ULL << 55) - 1)) * PAGE + (uintptr_t)va % PAGE;
}

/* The guest physical address of an address in the buffer, 0 outside. */
static uint64_t gpa_in_buf(const void *addr)
{
	uintptr_t a = (uintptr_t)addr, b = (uintptr_t)buf;

	if (!gpas || a < b || a >= b + npages * PAGE)
		return 0;
	return gpas[(a - b) / PAGE] + a % PAGE;
}

static void mark_lost(const void *addr, int lsb)
{
	uintptr_t a = (uintptr_t)addr, b = (uintptr_t)buf, from, to;

	if (lsb < 12)
		lsb = 12;
	from = a & ~((1UL << lsb) - 1);
	to = from + (1UL << lsb);
	if (from < b)
		from = b;
	if (to > b + npages * PAGE)
		to = b + npages * PAGE;
	for (; from < to; from += PAGE)
		if (lost[(from - b) / PAGE] != 1) {
			lost[(from - b) / PAGE] = 1;
			nlost++;
		}
}

/*
 * Action optional arrives asynchronously; action required while we read
 * a lost page: skip that page from then on.  The line goes out in one
 * write(2), not through stdio: an action-optional signal can come while
 * the main loop is in the middle of a printf, whose buffer it would cut.
 */
static void sigbus(int sig, siginfo_t *si, void *uc)
{
	char line[160];
	int n;

	(void)sig;
	(void)uc;
	nsigbus++;
	events++;
	n = snprintf(line, sizeof(line), "MEMCHECK sigbus kind=%s addr=%p lsb=%d gpa=0x%" PRIx64 "\n",
		     si->si_code == BUS_MCEERR_AR ? "action-required" :
		     si->si_code == BUS_MCEERR_AO ? "action-optional" : "other",
		     si->si_addr, si->si_addr_lsb, gpa_in_buf(si->si_addr));
	if (n > 0) {
		ssize_t w = write(STDOUT_FILENO, line, (size_t)n);

		(void)w;	/* nowhere to say it failed */
	}
	if (in_touch)
		siglongjmp(on_sigbus, 1);
	mark_lost(si->si_addr, si->si_addr_lsb);
	/* Action optional interrupts whatever page we were reading. */
	if (in_verify && si->si_code != BUS_MCEERR_AO)
		siglongjmp(on_sigbus, 1);
}

/*
 * New machine check records, from the mce_record tracepoint (the guest
 * kernel has no /dev/mcelog): "MCx: STATUS" and "ADDR/MISC/SYND: A/M/S".
 */
static void read_mce_trace(void)
{
	static char pending[8192];
	static size_t have;
	ssize_t n;
	char *line, *nl;

	if (mce_fd < 0)
		return;
	while ((n = read(mce_fd, pending + have, sizeof(pending) - 1 - have)) > 0) {
		have += n;
		pending[have] = 0;
		for (line = pending; (nl = strchr(line, '\n')); line = nl + 1) {
			unsigned long long status = 0, addr = 0, misc = 0, mcgcap = 0, mcgstatus = 0;
			unsigned long long rip = 0;
			unsigned int bank = 0, cs = 0;
			const char *kind;
			char *p;

			*nl = 0;
			if (!strstr(line, "mce_record"))
				continue;
			p = strstr(line, "MCGc/s: ");
			if (p)
				sscanf(p, "MCGc/s: %llx/%llx", &mcgcap, &mcgstatus);
			/* ", MCGc/s: cap/status" comes first: the bank has a digit. */
			for (p = line; (p = strstr(p, ", MC")); p++)
				if (sscanf(p, ", MC%u: %llx", &bank, &status) == 2)
					break;
			p = strstr(line, "ADDR/MISC");	/* up to 6.9 */
			if (p)
				sscanf(p, "ADDR/MISC%*[^ ] %llx/%llx", &addr, &misc);
			p = strstr(line, ", ADDR: ");	/* 6.10 on */
			if (p)
				sscanf(p, ", ADDR: %llx, MISC: %llx", &addr, &misc);
			p = strstr(line, "RIP: ");
			if (p)
				sscanf(p, "RIP: %x:<%llx>", &cs, &rip);
			/*
			 * Intel marks action required in the bank, AMD (and
			 * QEMU's AMD injection) by an exact instruction pointer.
			 */
			if (status & MCI_STATUS_DEFERRED)
				kind = "deferred";
			else if (!(status & MCI_STATUS_UC))
				kind = "corrected";
			else if (status & MCI_STATUS_AR || mcgstatus & MCG_STATUS_EIPV)
				kind = "action-required";
			else
				kind = "action-optional";
			nmce++;
			events++;
			/* n: the serial console may repeat a line cut by printk. */
			printf("MEMCHECK mce n=%lu kind=%s addr=0x%llx mode=%s status=0x%llx mcgstatus=0x%llx misc=0x%llx bank=%u\n",
			       nmce, kind, addr, !rip && !cs ? "-" : (cs & 3) == 3 ? "user" : "kernel",
			       status, mcgstatus, misc, bank);
		}
		have -= line - pending;
		memmove(pending, line, have);
	}
	fflush(stdout);
}

/* The kernel's lines about machine checks and memory failure. */
static void read_kmsg(void)
{
	char rec[2048];
	ssize_t n;

	if (kmsg_fd < 0)
		return;
	while ((n = read(kmsg_fd, rec, sizeof(rec) - 1)) != 0) {
		char *msg;

		if (n < 0) {
			if (errno == EPIPE)
				continue;	/* overwritten records */
			break;
		}
		rec[n] = 0;
		msg = strchr(rec, ';');
		msg = msg ? msg + 1 : rec;
		msg[strcspn(msg, "\n")] = 0;
		if (strstr(msg, "Hardware Error") || strstr(msg, "Memory failure") ||
		    strstr(msg, "Machine check") || strstr(msg, "mce:") ||
		    strstr(msg, "MCE"))
			printf("MEMCHECK kmsg %s\n", msg);
	}
	fflush(stdout);
}

static void verify_pass(void)
{
	static volatile size_t pg;

	for (pg = 0; pg < npages; pg++) {
		uint64_t *w = (uint64_t *)(buf + pg * PAGE);
		size_t i;

		if (lost[pg])
			continue;
		if (sigsetjmp(on_sigbus, 1)) {
			in_verify = 0;
			if (lost[pg] != 1) {	/* a SIGBUS for another address */
				lost[pg] = 1;
				nlost++;
			}
			continue;
		}
		in_verify = 1;
		for (i = 0; i < PAGE / sizeof(*w); i++) {
			uint64_t want = expected(&w[i]);

			if (w[i] != want) {
				nwrong++;
				printf("MEMCHECK wrong va=%p gpa=0x%" PRIx64 " got=0x%016" PRIx64 " want=0x%016" PRIx64 "\n",
				       (void *)&w[i], gpa_of(&w[i]), w[i], want);
				w[i] = want;
			}
		}
		in_verify = 0;
		if (pg % 4096 == 0) {
			read_mce_trace();
			read_kmsg();
		}
	}
}

static size_t mem_available_kb(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	size_t kb = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %zu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb;
}

static void print_hardware_corrupted(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "HardwareCorrupted:", 18))
			printf("MEMCHECK meminfo %s", line);
	if (f)
		fclose(f);
}

/*
 * memcheck.pv=1 on the kernel command line: point this vCPU's steal-time
 * and kvmclock areas (MSR_KVM_STEAL_TIME, MSR_KVM_SYSTEM_TIME_NEW, bit 0
 * enables) into the page at GPA, which the host then poisons: KVM keeps
 * writing there until it learns the page is bad.  The guest kernel goes
 * on reading its own areas, whose last values stay valid.
 */
static int pv_areas_into(uint64_t gpa)
{
	uint64_t steal = gpa | 1, clock = (gpa + 0x40) | 1;
	int fd = open("/dev/cpu/0/msr", O_WRONLY);
	int ok = fd >= 0 &&
		 pwrite(fd, &steal, sizeof(steal), 0x4b564d03) == sizeof(steal) &&
		 pwrite(fd, &clock, sizeof(clock), 0x4b564d01) == sizeof(clock);

	if (fd >= 0)
		close(fd);
	printf("MEMCHECK pv steal-time and kvmclock at gpa=0x%" PRIx64 ": %s\n",
	       gpa, ok ? "set" : strerror(errno));
	return ok ? 0 : -1;
}

/* The value of KEY=VALUE on the kernel command line, or DEF. */
static unsigned long long cmdline_value(const char *key, unsigned long long def)
{
	static char line[4096];
	char *p = line;
	size_t n = strlen(key);

	if (!line[0]) {
		FILE *f = fopen("/proc/cmdline", "r");

		if (!f || !fgets(line, sizeof(line), f))
			line[0] = 0;
		if (f)
			fclose(f);
	}
	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ') && p[n] == '=')
			return strtoull(p + n + 1, NULL, 0);
		p += n;
	}
	return def;
}

/*
 * After the error, read the poisoned page at GPA on purpose, TRIES times
 * from user mode (a mapping of it through /dev/gpa_touch) and TRIES times
 * from the guest kernel (gpa_touch's copy_mc_to_kernel()).  Each read
 * must end in a machine check (SIGBUS here, EIO from the kernel): one
 * that returns data went through to the page.
 */
static void touch(uint64_t gpa, unsigned int tries)
{
	/* Kept across siglongjmp() from the SIGBUS handler. */
	volatile unsigned int t, user = 0, kernel = 0;
	int fd = open("/dev/gpa_touch", O_RDONLY);
	char data[64];

	if (fd < 0) {
		printf("MEMCHECK touch /dev/gpa_touch: %s\n", strerror(errno));
		return;
	}
	for (t = 1; t <= tries; t++) {
		volatile uint64_t *p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, fd, gpa);

		if (p == MAP_FAILED) {
			printf("MEMCHECK touch user try=%u mmap: %s\n", t, strerror(errno));
		} else if (sigsetjmp(on_sigbus, 1)) {
			in_touch = 0;
			user++;
			printf("MEMCHECK touch user try=%u machine check (SIGBUS)\n", t);
		} else {
			uint64_t v;

			in_touch = 1;
			v = p[0];
			in_touch = 0;
			printf("MEMCHECK touch user try=%u read 0x%016" PRIx64 " (no machine check)\n", t, v);
		}
		if (p != MAP_FAILED)
			munmap((void *)p, PAGE);
		sleep(1);
		read_mce_trace();
		read_kmsg();
	}
	for (t = 1; t <= tries; t++) {
		ssize_t n = pread(fd, data, sizeof(data), gpa);

		if (n < 0 && errno == EIO) {
			kernel++;
			printf("MEMCHECK touch kernel try=%u machine check (EIO)\n", t);
		} else if (n < 0) {
			printf("MEMCHECK touch kernel try=%u: %s\n", t, strerror(errno));
		} else {
			printf("MEMCHECK touch kernel try=%u read %zd bytes (no machine check)\n", t, n);
		}
		sleep(1);
		read_mce_trace();
		read_kmsg();
	}
	close(fd);
	printf("MEMCHECK touched gpa=0x%" PRIx64 " user=%u/%u kernel=%u/%u\n",
	       gpa, user, tries, kernel, tries);
}

/* What the vCPU offers for recovery: MCG_SER_P is bit 24. */
static void print_mcg_cap(void)
{
	int fd = open("/dev/cpu/0/msr", O_RDONLY);
	uint64_t cap;

	if (fd < 0 || pread(fd, &cap, sizeof(cap), 0x179) != sizeof(cap)) {
		printf("MEMCHECK mcg_cap unknown (no msr device)\n");
	} else {
		printf("MEMCHECK mcg_cap=0x%" PRIx64 " banks=%u ser=%d\n", cap,
		       (unsigned int)(cap & 0xff), (int)(cap >> 24 & 1));
	}
	if (fd >= 0)
		close(fd);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_sigaction = sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER };
	double wait, start, first_event = 0;
	size_t reserve_mb, i, j, bytes, targets = 0;
	unsigned long passes = 0, passes_after = 0;
	uint64_t target_min = cmdline_value("memcheck.target_min", 0), first_target = 0;
	unsigned long long passes_wanted = cmdline_value("memcheck.passes", PASSES_AFTER);

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: memcheck WAIT_SECONDS [RESERVE_MB]\n");
		return 2;
	}
	wait = atof(argv[1]);
	reserve_mb = argc > 2 ? strtoul(argv[2], NULL, 0) : 48;
	setvbuf(stdout, NULL, _IOLBF, 0);

	print_mcg_cap();
	sigaction(SIGBUS, &sa, NULL);
	/* Action-optional errors reach us at once, not on next access. */
	if (prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 0))
		perror("MEMCHECK prctl PR_MCE_KILL");
	/* /init enabled the tracepoint. */
	mce_fd = open("/sys/kernel/tracing/trace_pipe", O_RDONLY | O_NONBLOCK);
	if (mce_fd < 0)
		perror("MEMCHECK trace_pipe");
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg_fd >= 0)
		lseek(kmsg_fd, 0, SEEK_END);

	bytes = mem_available_kb() * 1024;
	if (bytes <= reserve_mb << 20) {
		fprintf(stderr, "MEMCHECK only %zu kB available\n", bytes >> 10);
		return 1;
	}
	bytes = (bytes - (reserve_mb << 20)) & ~(HUGE - 1);
	npages = bytes / PAGE;
	lost = calloc(npages, 1);
	/* No THP: the guest's own pages stay 4 KiB, as the host sees them. */
	buf = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED || !lost) {
		perror("MEMCHECK mmap");
		return 1;
	}
	madvise(buf, bytes, MADV_NOHUGEPAGE);
	start = now();
	for (i = 0; i < bytes / 8; i++) {
		uint64_t *w = (uint64_t *)buf + i;

		*w = expected(w);
	}
	if (mlock(buf, bytes))
		perror("MEMCHECK mlock");
	gpas = calloc(npages, sizeof(*gpas));
	for (i = 0; gpas && i < npages; i++)
		gpas[i] = gpa_of(buf + i * PAGE);
	printf("MEMCHECK ready bytes=%zu pages=%zu fill=%.1fs\n", bytes, npages, now() - start);
	/* Targets from the middle of the buffer on, then from its start. */
	for (j = 0; j < npages && targets < 4; j++) {
		uint64_t gpa;

		i = (npages / 2 + j) % npages;
		gpa = gpas ? gpas[i] : 0;
		if (gpa && gpa % HUGE == 0x5000 && gpa >= target_min) {
			printf("MEMCHECK target gpa=0x%" PRIx64 " va=%p\n", gpa, (void *)(buf + i * PAGE));
			/* The first target holds KVM's areas: not checked. */
			if (!targets && cmdline_value("memcheck.pv", 0) && !pv_areas_into(gpa))
				lost[i] = 2;
			if (!targets)
				first_target = gpa;
			targets++;
		}
	}
	if (!targets)
		printf("MEMCHECK no target page found\n");
	fflush(stdout);

	start = now();
	for (;;) {
		verify_pass();
		read_mce_trace();
		read_kmsg();
		passes++;
		if (events && !first_event) {
			first_event = now();
			printf("MEMCHECK first event after pass %lu\n", passes);
		}
		if (first_event && ++passes_after > passes_wanted)
			break;
		if (!first_event && now() - start > wait) {
			printf("MEMCHECK no machine check within %.0fs\n", wait);
			break;
		}
	}
	print_hardware_corrupted();
	printf("MEMCHECK done passes=%lu wrong=%lu lost_pages=%lu mce=%lu sigbus=%lu\n",
	       passes, nwrong, nlost, nmce, nsigbus);
	if (first_target && cmdline_value("memcheck.touch", 0))
		touch(first_target, cmdline_value("memcheck.touch", 0));
	return 0;
}
