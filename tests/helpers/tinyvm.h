/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A one-vCPU KVM guest for the tests and benchmarks that look at what KVM
 * does with a kept hugepage: 32-bit protected mode, flat, no paging (guest
 * linear = guest physical).  Guest physical 0..2 MiB is anonymous memory
 * holding the code, the steal-time area and the parameters; the caller
 * adds its RAM as slot 1.  The guest enables steal time, then loops: read
 * one word of each 4 KiB page of @nr pages from @gpa, but @skip, and leave
 * with an OUT, so that each KVM_RUN is one pass.
 */
#ifndef MFR_TEST_TINYVM_H
#define MFR_TEST_TINYVM_H

#include <errno.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define TINYVM_LOW (2UL << 20)
#define TINYVM_CODE 0x1000UL
#define TINYVM_PARAM 0x800UL	/* u32 gpa, u32 skip, u32 nr */

/*
 *   mov ecx, MSR_KVM_STEAL_TIME; mov eax, 0x2000 | 1; xor edx, edx; wrmsr
 * loop:
 *   mov esi, [0x800]; mov ebx, [0x804]; mov ecx, [0x808]
 * inner:
 *   cmp esi, ebx; je skip; mov eax, [esi]
 * skip:
 *   add esi, 4096; loop inner; out 0x10, al; jmp loop
 */
static const uint8_t tinyvm_code[] = {
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

struct tinyvm {
	int kvm, vm, vcpu;
	struct kvm_run *run;
	char *low;
};

static inline void tinyvm_region(struct tinyvm *t, int slot, uint64_t gpa,
				 uint64_t size, void *hva)
{
	struct kvm_userspace_memory_region r = {
		.slot = slot, .guest_phys_addr = gpa, .memory_size = size,
		.userspace_addr = (uintptr_t)hva,
	};

	if (ioctl(t->vm, KVM_SET_USER_MEMORY_REGION, &r)) {
		perror("KVM_SET_USER_MEMORY_REGION");
		exit(2);
	}
}

/* What the guest reads on its next pass: @nr pages from @gpa, but @skip. */
static inline void tinyvm_params(struct tinyvm *t, uint32_t gpa, uint32_t skip,
				 uint32_t nr)
{
	uint32_t *p = (uint32_t *)(t->low + TINYVM_PARAM);

	p[0] = gpa;
	p[1] = skip;
	p[2] = nr;
}

static inline void tinyvm_create(struct tinyvm *t)
{
	struct kvm_segment seg = {
		.base = 0, .limit = 0xffffffff, .present = 1, .dpl = 0,
		.db = 1, .s = 1, .g = 1,
	};
	struct kvm_regs regs = { .rip = TINYVM_CODE, .rflags = 2 };
	struct kvm_sregs sregs;
	int size;

	t->kvm = open("/dev/kvm", O_RDWR);
	if (t->kvm < 0) {
		perror("/dev/kvm");
		exit(2);
	}
	t->vm = ioctl(t->kvm, KVM_CREATE_VM, 0);
	t->low = mmap(NULL, TINYVM_LOW, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t->vm < 0 || t->low == MAP_FAILED) {
		perror("KVM_CREATE_VM");
		exit(2);
	}
	memcpy(t->low + TINYVM_CODE, tinyvm_code, sizeof(tinyvm_code));
	tinyvm_region(t, 0, 0, TINYVM_LOW, t->low);
	t->vcpu = ioctl(t->vm, KVM_CREATE_VCPU, 0);
	size = ioctl(t->kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	t->run = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, t->vcpu, 0);
	if (t->vcpu < 0 || t->run == MAP_FAILED || ioctl(t->vcpu, KVM_GET_SREGS, &sregs)) {
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
	if (ioctl(t->vcpu, KVM_SET_SREGS, &sregs) || ioctl(t->vcpu, KVM_SET_REGS, &regs)) {
		perror("KVM_SET_SREGS/REGS");
		exit(2);
	}
	/* A bare round trip until a region is set. */
	tinyvm_params(t, 0, 0, 1);
}

/* One pass; returns 0 if the guest got to its OUT, else KVM_RUN's errno. */
static inline int tinyvm_pass(struct tinyvm *t)
{
	if (ioctl(t->vcpu, KVM_RUN, 0))
		return errno;
	if (t->run->exit_reason != KVM_EXIT_IO) {
		fprintf(stderr, "tinyvm: exit reason %u\n", t->run->exit_reason);
		exit(2);
	}
	return 0;
}

/* KVM's per-VM count of stage-2 pages of one size (debugfs), -1 if none. */
static inline long tinyvm_stage2_pages(struct tinyvm *t, const char *what)
{
	char path[256];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/kvm/%d-%d/%s", getpid(), t->vm, what);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

#endif
