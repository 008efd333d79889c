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
 * this process maps no kept memfd.  stage2 alternates the two regions.
 * Prints "p9 what=B config=C run=R rate=X" lines, X per second of the
 * guest clock (run 0 warms up), and for stage2 the counts
 * "p9 what=stage2 pages_4k=N pages_2m=N".
 */
#include <errno.h>
#include <linux/futex.h>
#include <linux/kvm.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "bench.h"

#define HP (2UL << 20)
#define MSR_KVM_STEAL_TIME 0x4b564d03
#define CODE_GPA 0x1000UL
#define STEAL_GPA 0x2000UL
#define PARAM_GPA 0x800UL	/* two u32: region to read, page to skip */
#define RAM_GPA (2UL << 20)	/* two hugepages of the kept memfd */

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

/* ---- a one-vCPU VM ---- */

static int kvm, vm, vcpu;
static struct kvm_run *run;
static char *low;		/* gpa 0..2 MiB: code, steal time, parameters */
static char *ram;		/* gpa 2..6 MiB: two kept hugepages */
static int ram_fd;

static void region(int slot, uint64_t gpa, uint64_t size, void *hva)
{
	struct kvm_userspace_memory_region r = {
		.slot = slot, .guest_phys_addr = gpa, .memory_size = size,
		.userspace_addr = (uintptr_t)hva,
	};

	if (ioctl(vm, KVM_SET_USER_MEMORY_REGION, &r)) {
		perror("KVM_SET_USER_MEMORY_REGION");
		exit(2);
	}
}

/*
 * 32-bit protected mode, flat, no paging: guest linear = physical.  The
 * parameters at PARAM_GPA: the region to read, the page in it to skip,
 * how many pages (1 for a bare round trip).
 *   mov ecx, MSR_KVM_STEAL_TIME; mov eax, STEAL_GPA | 1; xor edx, edx; wrmsr
 * loop:
 *   mov esi, [PARAM]; mov ebx, [PARAM + 4]; mov ecx, [PARAM + 8]
 * inner:
 *   cmp esi, ebx; je skip; mov eax, [esi]
 * skip:
 *   add esi, 4096; loop inner; out 0x10, al; jmp loop
 */
static const uint8_t guest_code[] = {
	0xb9, 0x03, 0x4d, 0x56, 0x4b,		/* mov ecx, 0x4b564d03 */
	0xb8, 0x01, 0x20, 0x00, 0x00,		/* mov eax, 0x2001 */
	0x31, 0xd2,				/* xor edx, edx */
	0x0f, 0x30,				/* wrmsr */
	/* loop: */
	0x8b, 0x35, 0x00, 0x08, 0x00, 0x00,	/* mov esi, [0x800] */
	0x8b, 0x1d, 0x04, 0x08, 0x00, 0x00,	/* mov ebx, [0x804] */
	0x8b, 0x0d, 0x08, 0x08, 0x00, 0x00,	/* mov ecx, [0x808] */
	/* inner: */
	0x39, 0xde,				/* cmp esi, ebx */
	0x74, 0x02,				/* je skip */
	0x8b, 0x06,				/* mov eax, [esi] */
	/* skip: */
	0x81, 0xc6, 0x00, 0x10, 0x00, 0x00,	/* add esi, 4096 */
	0xe2, 0xf2,				/* loop inner */
	0xe6, 0x10,				/* out 0x10, al */
	0xeb, 0xdc,				/* jmp loop */
};

/* What the guest reads on its next trip: @nr pages from @gpa, but @skip. */
static void guest_params(uint32_t gpa, uint32_t skip, uint32_t nr)
{
	uint32_t *p = (uint32_t *)(low + PARAM_GPA);

	p[0] = gpa;
	p[1] = skip;
	p[2] = nr;
}

static void vm_setup(bool with_ram)
{
	struct kvm_segment seg = {
		.base = 0, .limit = 0xffffffff, .present = 1, .dpl = 0,
		.db = 1, .s = 1, .g = 1,
	};
	struct kvm_sregs sregs;
	struct kvm_regs regs = { .rip = CODE_GPA, .rflags = 2 };
	int size;

	kvm = open("/dev/kvm", O_RDWR);
	if (kvm < 0) {
		perror("/dev/kvm");
		exit(2);
	}
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	low = mmap(NULL, HP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (vm < 0 || low == MAP_FAILED) {
		perror("KVM_CREATE_VM");
		exit(2);
	}
	memcpy(low + CODE_GPA, guest_code, sizeof(guest_code));
	region(0, 0, HP, low);
	if (with_ram) {
		ram = hugetlb_memfd("p9-guest-ram", HP, 2, true, &ram_fd);
		region(1, RAM_GPA, 2 * HP, ram);
	}
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	size = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	run = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, vcpu, 0);
	if (vcpu < 0 || run == MAP_FAILED || ioctl(vcpu, KVM_GET_SREGS, &sregs)) {
		perror("KVM_CREATE_VCPU");
		exit(2);
	}
	seg.type = 11;		/* code, execute/read, accessed */
	seg.selector = 8;
	sregs.cs = seg;
	seg.type = 3;		/* data, read/write, accessed */
	seg.selector = 16;
	sregs.ds = sregs.es = sregs.ss = sregs.fs = sregs.gs = seg;
	sregs.cr0 |= 1;		/* PE */
	if (ioctl(vcpu, KVM_SET_SREGS, &sregs) || ioctl(vcpu, KVM_SET_REGS, &regs)) {
		perror("KVM_SET_SREGS/REGS");
		exit(2);
	}
	/* A bare round trip until a region is set. */
	guest_params(0, 0, 1);
}

/* One trip into the guest, which leaves at its OUT. */
static void vcpu_trip(void)
{
	if (ioctl(vcpu, KVM_RUN, 0) || run->exit_reason != KVM_EXIT_IO) {
		fprintf(stderr, "p9: KVM_RUN: %s, exit reason %u\n", strerror(errno),
			run->exit_reason);
		exit(2);
	}
}

/* KVM's per-VM count of stage-2 pages of one size, from debugfs. */
static long stage2_pages(const char *what)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/kernel/debug/kvm/%d-%d/%s", getpid(), vm, what);
	return read_long_file(path);
}

static uint32_t region_gpa, skip_gpa;

static void stage2_trip(void)
{
	guest_params(region_gpa, skip_gpa, HP / 4096);
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
			vm_setup(false);
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
		return 0;
	}
	if (strcmp(argv[1], "stage2"))
		return 2;

	vm_setup(true);
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
	printf("p9 what=stage2 pages_4k=%ld pages_2m=%ld\n", stage2_pages("pages_4k"),
	       stage2_pages("pages_2m"));
	return 0;
}
