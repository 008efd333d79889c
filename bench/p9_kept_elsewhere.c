// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * P9, what a kept poisoned page costs those who have nothing to do with it,
 * and what it costs the guest it belongs to:
 *
 *   futex   FUTEX_WAKE_OP_PRIVATE on an anonymous word, nobody waiting: the
 *           in-place update every process's futexes make;
 *   vcpu    KVM_RUN round trips of a one-vCPU VM whose guest enabled steal
 *           time and leaves at once with an OUT: each KVM_RUN loads the
 *           vCPU and records steal time;
 *   stage2  a guest loop reading one word of each 4 KiB page of a 2 MiB
 *           page of its RAM, a kept hugepage with a poisoned page (skipped)
 *           against a healthy one, KVM's stage-2 page counts read first.
 *
 *   p9_kept_elsewhere futex|vcpu|stage2 SECONDS RUNS
 *
 * futex and vcpu alternate windows without and with a kept poisoned
 * hugepage held by another process (MFD_MF_KEEP_UE_MAPPED, MADV_HWPOISON);
 * this process maps no kept memfd.  Then, config "marked", this process
 * maps one, as a protected guest's VMM does.  stage2 alternates the two
 * regions.
 * Prints "p9 what=B config=C run=R rate=X" lines, X per second of the
 * guest clock (run 0 warms up), and for stage2 the counts
 * "p9 what=stage2 pages_4k=N pages_2m=N".
 */
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "bench.h"
#include "tinyvm.h"

#define HP (2UL << 20)
#define RAM_GPA TINYVM_LOW	/* two hugepages of the kept memfd */

/* ---- the kept poisoned hugepage elsewhere ---- */

static pid_t holder;

static void kept_elsewhere_start(void)
{
	int pipefd[2];
	char c;

	if (pipe(pipefd))
		exit(2);
	holder = fork();
	if (!holder) {
		struct sigbus_record rec;
		int fd;
		char *p = hugetlb_memfd("p9-kept-elsewhere", HP, 1, true, &fd);

		SIGBUS_SYSCALL(rec, madvise(p + 0x3000, 4096, MADV_HWPOISON));
		if (!rec.got || rec.lsb != 12) {
			fprintf(stderr, "p9: the hugepage elsewhere was not kept (lsb %d)\n",
				rec.lsb);
			exit(2);
		}
		if (write(pipefd[1], "k", 1) != 1)
			exit(2);
		pause();
		exit(0);
	}
	if (read(pipefd[0], &c, 1) != 1) {
		fprintf(stderr, "p9: no kept hugepage elsewhere\n");
		exit(2);
	}
	close(pipefd[0]);
	close(pipefd[1]);
}

static void kept_elsewhere_stop(void)
{
	kill(holder, SIGKILL);
	waitpid(holder, NULL, 0);
}

/* ---- futex ---- */

static uint32_t futex_word, futex_dummy;

static void futex_op(void)
{
	syscall(SYS_futex, &futex_dummy, FUTEX_WAKE_OP_PRIVATE, 0, (void *)0,
		&futex_word, FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_EQ, 0));
}

/* ---- a one-vCPU VM (tests/helpers/tinyvm.h) ---- */

static struct tinyvm vm;
static char *ram;		/* gpa 2..6 MiB: two kept hugepages */
static int ram_fd;

static void vcpu_trip(void)
{
	int err = tinyvm_pass(&vm);

	if (err) {
		fprintf(stderr, "p9: KVM_RUN: %s\n", strerror(err));
		exit(2);
	}
}

static uint32_t region_gpa, skip_gpa;

static void stage2_trip(void)
{
	tinyvm_params(&vm, region_gpa, skip_gpa, HP / 4096);
	vcpu_trip();
}

/* ---- measuring ---- */

/* Operations per second of @op over a window of @seconds. */
static double rate(void (*op)(void), double seconds)
{
	double t0 = now(), t;
	unsigned long n = 0;

	do {
		for (int i = 0; i < 16; i++)
			op();
		n += 16;
		t = now();
	} while (t - t0 < seconds);
	return n / (t - t0);
}

int main(int argc, char **argv)
{
	double seconds;
	int runs, r;

	if (argc != 4) {
		fprintf(stderr, "usage: p9_kept_elsewhere futex|vcpu|stage2 SECONDS RUNS\n");
		return 2;
	}
	seconds = atof(argv[2]);
	runs = atoi(argv[3]);
	sigbus_install();

	if (!strcmp(argv[1], "futex") || !strcmp(argv[1], "vcpu")) {
		bool futex = argv[1][0] == 'f';

		if (!futex) {
			tinyvm_create(&vm);
			vcpu_trip();	/* the WRMSR: steal time on */
		}
		for (r = 0; r < runs; r++) {
			printf("p9 what=%s config=none run=%d rate=%.1f\n", argv[1], r,
			       rate(futex ? futex_op : vcpu_trip, seconds));
			kept_elsewhere_start();
			printf("p9 what=%s config=kept-elsewhere run=%d rate=%.1f\n", argv[1], r,
			       rate(futex ? futex_op : vcpu_trip, seconds));
			kept_elsewhere_stop();
			fflush(stdout);
		}
		/*
		 * Last, since it lasts: this process maps a kept memfd itself,
		 * as the VMM of a protected guest does, and its updates go
		 * through GUP.
		 */
		hugetlb_memfd("p9-marked", HP, 1, true, &ram_fd);
		for (r = 0; r < runs; r++)
			printf("p9 what=%s config=marked run=%d rate=%.1f\n", argv[1], r,
			       rate(futex ? futex_op : vcpu_trip, seconds));
		return 0;
	}
	if (strcmp(argv[1], "stage2"))
		return 2;

	tinyvm_create(&vm);
	ram = hugetlb_memfd("p9-guest-ram", HP, 2, true, &ram_fd);
	tinyvm_region(&vm, 1, RAM_GPA, 2 * HP, ram);
	vcpu_trip();
	/* Fault both hugepages into the guest whole, then poison one page of the first. */
	region_gpa = RAM_GPA;
	skip_gpa = 0;
	stage2_trip();
	region_gpa = RAM_GPA + HP;
	stage2_trip();
	{
		struct sigbus_record rec;

		SIGBUS_SYSCALL(rec, madvise(ram + 0x3000, 4096, MADV_HWPOISON));
		if (!rec.got || rec.lsb != 12) {
			fprintf(stderr, "p9: the guest's hugepage was not kept (lsb %d)\n", rec.lsb);
			return 2;
		}
	}
	for (r = 0; r < runs; r++) {
		region_gpa = RAM_GPA;
		skip_gpa = RAM_GPA + 0x3000;
		printf("p9 what=stage2 config=poisoned run=%d rate=%.1f\n", r,
		       rate(stage2_trip, seconds));
		region_gpa = RAM_GPA + HP;
		skip_gpa = 0;
		printf("p9 what=stage2 config=healthy run=%d rate=%.1f\n", r,
		       rate(stage2_trip, seconds));
		fflush(stdout);
	}
	printf("p9 what=stage2 pages_4k=%ld pages_2m=%ld\n",
	       tinyvm_stage2_pages(&vm, "pages_4k"), tinyvm_stage2_pages(&vm, "pages_2m"));
	return 0;
}
