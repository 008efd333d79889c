// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * memfd_script: hold a named 2 MiB HugeTLB memfd and run a script of steps
 * on it, so that shell tests can drive the mfr netlink family around a
 * live workload.
 *
 *   memfd_script [--keep] NAME NR_HUGEPAGES STEP...
 *     --keep          create it with MFD_MF_KEEP_UE_MAPPED
 *     ready:FILE      write "PID FD INODE" to FILE (atomically)
 *     wait:FILE       wait until FILE exists
 *     poison:PAGE     MADV_HWPOISON 4 KiB page PAGE (from another thread)
 *                     and print the SIGBUS the thread got:
 *                     "sigbus PAGE code=AR|AO|none lsb=N exact=0|1"
 *     read:PAGE       read a word of 4 KiB page PAGE: "read PAGE ok" or
 *                     "read PAGE sigbus lsb=N"
 *     sleep:MS        sleep MS milliseconds (to pace a storm of errors)
 *     truncate        ftruncate(0)
 *     close           munmap and close
 *
 * The memfd is filled with a pattern first.  Exits 0 unless a step could
 * not be run (the printed outcomes are for the caller to check).
 */
#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>

#include "hwpoison.h"

#define HPAGE (2UL << 20)

static char *base;
static unsigned long len;
static int fd = -1;

struct poison_arg {
	char *addr;
	struct sigbus_record rec;
	int ret;
};

static void *poison_thread(void *p)
{
	struct poison_arg *a = p;

	SIGBUS_TRY(a->rec, a->ret = madvise(a->addr, 4096, MADV_HWPOISON));
	return NULL;
}

static const char *code_name(const struct sigbus_record *rec)
{
	if (!rec->got)
		return "none";
	return rec->code == BUS_MCEERR_AR ? "AR" :
	       rec->code == BUS_MCEERR_AO ? "AO" : "other";
}

static int step_poison(unsigned long page)
{
	struct poison_arg a = { .addr = base + page * 4096 };
	pthread_t t;

	pthread_create(&t, NULL, poison_thread, &a);
	pthread_join(t, NULL);
	printf("sigbus %lu code=%s lsb=%d exact=%d\n", page, code_name(&a.rec),
	       a.rec.lsb, a.rec.got && a.rec.addr == a.addr);
	return 0;
}

static int step_read(unsigned long page)
{
	struct sigbus_record rec;
	volatile uint64_t v = 0;

	SIGBUS_TRY(rec, v = *(volatile uint64_t *)(base + page * 4096 + 8));
	(void)v;
	if (rec.got)
		printf("read %lu sigbus lsb=%d\n", page, rec.lsb);
	else
		printf("read %lu ok\n", page);
	return 0;
}

static int step_ready(const char *file)
{
	char tmp[4096];
	struct stat st;
	FILE *f;

	fstat(fd, &st);
	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%d %d %lu\n", getpid(), fd, (unsigned long)st.st_ino);
	fclose(f);
	return rename(tmp, file);
}

static int step_wait(const char *file)
{
	while (access(file, F_OK))
		usleep(20000);
	return 0;
}

static int run_step(const char *step)
{
	unsigned long page, ms;

	if (!strncmp(step, "ready:", 6))
		return step_ready(step + 6);
	if (!strncmp(step, "wait:", 5))
		return step_wait(step + 5);
	if (sscanf(step, "poison:%lu", &page) == 1 && page < len / 4096)
		return step_poison(page);
	if (sscanf(step, "read:%lu", &page) == 1 && page < len / 4096)
		return step_read(page);
	if (sscanf(step, "sleep:%lu", &ms) == 1) {
		struct timespec ts = { .tv_sec = ms / 1000,
				       .tv_nsec = (long)(ms % 1000) * 1000000 };

		return nanosleep(&ts, NULL);
	}
	if (!strcmp(step, "truncate"))
		return ftruncate(fd, 0);
	if (!strcmp(step, "close")) {
		munmap(base, len);
		base = NULL;
		return close(fd);
	}
	errno = EINVAL;
	return -1;
}

int main(int argc, char **argv)
{
	unsigned int flags = MFD_HUGETLB | (21U << MFD_HUGE_SHIFT);
	int i = 1;

	if (argc > 1 && !strcmp(argv[1], "--keep")) {
		flags |= MFD_MF_KEEP_UE_MAPPED;
		i++;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: memfd_script [--keep] NAME NR_HUGEPAGES STEP...\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigbus_install();

	fd = memfd_create(argv[i], flags);
	len = strtoul(argv[i + 1], NULL, 0) * HPAGE;
	if (fd < 0 || !len || ftruncate(fd, len)) {
		perror("memfd_script: memfd_create/ftruncate");
		return 1;
	}
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		perror("memfd_script: mmap");
		return 1;
	}
	for (unsigned long off = 0; off < len; off += 8)
		*(uint64_t *)(base + off) = off;

	for (i += 2; i < argc; i++) {
		if (run_step(argv[i])) {
			fprintf(stderr, "memfd_script: step %s: %s\n", argv[i],
				strerror(errno));
			return 1;
		}
	}
	return 0;
}
