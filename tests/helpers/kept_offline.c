// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kept_offline: memory offline meets a kept hugepage.
 *
 * A kept 2 MiB memfd of NR hugepages, in ZONE_MOVABLE (a movablecore=
 * boot); one base page of a hugepage K is poisoned (MADV_HWPOISON), and
 * another hugepage of the memfd lies earlier in K's memory block, so that
 * offlining the block migrates that one and walks over K as memory
 * hot-remove does (do_migrate_range()).  Expected: the offline fails
 * (EBUSY: K is in use and cannot migrate) within the time limit, and K is
 * still kept: every healthy word reads back, and K is still mapped at
 * the same frame with its poisoned page HWPOISON.  The 2 MiB pool's free
 * pages are released before the offline; the caller puts the pool back.  A stock-like unmap of
 * K (hwpoison entries) would raise SIGBUS with lsb 21 on every byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "hwpoison.h"

#define HP (2UL << 20)
#define NR 8
#define POISON_OFF 0x3000UL
#define OFFLINE_LIMIT 60	/* seconds */
#define POOL "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"

static uint64_t pattern(unsigned long off)
{
	return 0x6b65707400000000ULL ^ off;
}

static void *poison_thread(void *addr)
{
	struct sigbus_record rec;

	SIGBUS_TRY(rec, madvise(addr, 4096, MADV_HWPOISON));
	return (void *)(long)(rec.got && rec.addr == addr && rec.lsb == 12);
}

static int write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");

	return f && fprintf(f, "%ld\n", v) > 0 && !fclose(f);
}

static unsigned long block_bytes(void)
{
	FILE *f = fopen("/sys/devices/system/memory/block_size_bytes", "r");
	unsigned long v = 0;

	if (!f || fscanf(f, "%lx", &v) != 1) {
		perror("block_size_bytes");
		exit(2);
	}
	fclose(f);
	return v;
}

static int block_is_movable(unsigned long block)
{
	char path[96], zones[128] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/memory/memory%lu/valid_zones", block);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(zones, sizeof(zones), f))
		zones[0] = 0;
	fclose(f);
	return !strncmp(zones, "Movable", 7);
}

/*
 * Writes "offline" to the block's state in a child; returns the write's
 * errno (0 if it succeeded), or -1 if it had not ended within the limit.
 */
static int offline_block(unsigned long block, double *seconds)
{
	struct timespec t0, t1;
	int status = 0, pipefd[2], err = -1;
	pid_t pid;

	if (pipe(pipefd))
		exit(2);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (!pid) {
		char path[96];
		int fd, e = 0;

		snprintf(path, sizeof(path), "/sys/devices/system/memory/memory%lu/state", block);
		fd = open(path, O_WRONLY);
		if (fd < 0 || write(fd, "offline", 7) != 7)
			e = errno;
		if (write(pipefd[1], &e, sizeof(e)) != sizeof(e))
			_exit(1);
		_exit(0);
	}
	close(pipefd[1]);
	for (int i = 0; i < OFFLINE_LIMIT * 10; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			if (read(pipefd[0], &err, sizeof(err)) != sizeof(err))
				err = -1;
			break;
		}
		usleep(100000);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	close(pipefd[0]);
	if (err == -1)
		kill(pid, SIGKILL);	/* reaped by the caller's exit */
	return err;
}

int main(void)
{
	unsigned long bs = block_bytes(), block = 0, k = NR, off;
	uint64_t pfn[NR];
	struct sigbus_record rec;
	int fd, err, bad_words = 0, sigbus_healthy = 0;
	double seconds;
	pthread_t t;
	char *base;
	void *ok;

	sigbus_install();
	fd = memfd_create("kept-offline", MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED);
	if (fd < 0 || ftruncate(fd, NR * HP)) {
		perror("memfd");
		return 2;
	}
	base = mmap(NULL, NR * HP, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	for (off = 0; off < NR * HP; off += 8)
		WORD_AT(base, off) = pattern(off);

	/* K: a hugepage with another one of the memfd below it in its block. */
	for (int i = 0; i < NR; i++)
		pfn[i] = pfn_of(base + i * HP);
	for (int i = 0; i < NR && k == NR; i++) {
		unsigned long b = pfn[i] * 4096 / bs;

		if (!block_is_movable(b))
			continue;
		for (int j = 0; j < NR; j++)
			if (j != i && pfn[j] * 4096 / bs == b && pfn[j] < pfn[i]) {
				k = i;
				block = b;
				break;
			}
	}
	CHECK(k < NR, "premise: two of the memfd's hugepages in one ZONE_MOVABLE memory block");
	if (k == NR)
		return check_exit_status();
	printf("# hugepage %lu at pfn %#llx, memory block %lu\n", k,
	       (unsigned long long)pfn[k], block);

	pthread_create(&t, NULL, poison_thread, base + k * HP + POISON_OFF);
	pthread_join(t, &ok);
	CHECK(ok, "MADV_HWPOISON of one base page of hugepage %lu: SIGBUS, lsb 12", k);

	/*
	 * No free hugepage may stay in the block: 6.12's hugetlb dequeue does
	 * not skip isolated pageblocks, so the offline would migrate the
	 * memfd's other hugepages into free ones of the same block, again
	 * and again (stock behaviour, seen here: 3584 pages every 0.3 s).
	 * The caller puts the pool back.
	 */
	if (!write_long(POOL, 0)) {
		perror(POOL);
		return 2;
	}
	err = offline_block(block, &seconds);
	CHECK(err > 0, "offlining memory block %lu fails (%s) within %d s (%.1f s)",
	      block, err > 0 ? strerror(err) : err ? "still running" : "it succeeded",
	      OFFLINE_LIMIT, seconds);

	/* Still kept: only the poisoned page is lost. */
	for (off = k * HP; off < (k + 1) * HP; off += 8) {
		uint64_t v = 0;

		if (off / 4096 == (k * HP + POISON_OFF) / 4096)
			continue;
		SIGBUS_TRY(rec, v = WORD_AT(base, off));
		if (rec.got) {
			if (!sigbus_healthy++)
				printf("# SIGBUS at +%#lx, lsb %d\n", off, rec.lsb);
		} else if (v != pattern(off)) {
			bad_words++;
		}
	}
	CHECK(!sigbus_healthy, "after the offline attempt, no SIGBUS on the 511 healthy base pages of the kept hugepage (%d)",
	      sigbus_healthy);
	CHECK(!bad_words, "every healthy word reads back (%d wrong)", bad_words);
	/* MADV_HWPOISON poisons nothing a load would trap: look at the frames. */
	CHECK(pfn_present(base + k * HP) == pfn[k],
	      "the kept hugepage is still mapped at the same frame");
	CHECK(kpageflags(pfn[k] + POISON_OFF / 4096) & (1ULL << KPF_HWPOISON),
	      "its poisoned page is still HWPOISON");
	bad_words = 0;
	for (int i = 0; i < NR; i++)
		for (off = i * HP; i != (int)k && off < (i + 1) * HP; off += 4096)
			bad_words += WORD_AT(base, off) != pattern(off);
	CHECK(!bad_words, "the other hugepages (one of them migrated) read back (%d wrong)",
	      bad_words);
	munmap(base, NR * HP);
	close(fd);
	return check_exit_status();
}
