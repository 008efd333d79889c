// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kvm_kept: KVM never maps a poisoned 4 KiB page of a kept hugepage into a
 * guest, and never with a stage-2 entry that covers it; a guest access to it
 * is a stage-2 fault that KVM turns into SIGBUS BUS_MCEERR_AR at its exact
 * address, lsb 12, every time.  The guest is tests/helpers/tinyvm.h's; its
 * RAM is a kept memfd of two hugepages, A and B, at guest physical 2 MiB.
 *
 *   kvm_kept 2M|1G
 *     (1G: A only, one 1 GiB page is what a small test VM can spare.)
 *     The guest reads every 4 KiB page of A and B: the stage-2 page counts
 *     (KVM's debugfs pages_4k/pages_2m/pages_1g) show both mapped huge.
 *     Page P of A is poisoned (MADV_HWPOISON).  The guest reads every page
 *     of A but P, and B: 2 MiB, A is mapped by 511 4 KiB entries and B by
 *     one 2 MiB entry; 1 GiB, the 2 MiB of A that holds P by 511 4 KiB
 *     entries, the rest of A by 511 2 MiB entries.
 *     Then the guest reads P, three times: each time the vCPU thread gets
 *     SIGBUS BUS_MCEERR_AR at P's address with lsb 12 and KVM_RUN returns
 *     without reaching the guest's OUT, and the counts do not change (P was
 *     never mapped).
 *
 * Prints ok/not ok lines; exits 0 if all held.
 */
#include <signal.h>

#include "check.h"
#include "hwpoison.h"
#include "tinyvm.h"

#define P_OFF 0x3000UL

static struct tinyvm vm;
static unsigned long hp;

/* The guest reads one word of each 4 KiB page of [gpa, gpa + len), but @skip. */
static int guest_reads(uint64_t gpa, uint64_t len, uint64_t skip)
{
	uint64_t done;
	int err;

	/* In passes of at most 2 MiB: 512 reads per KVM_RUN. */
	for (done = 0; done < len; done += 2UL << 20) {
		tinyvm_params(&vm, gpa + done, skip, (2UL << 20) / 4096);
		err = tinyvm_pass(&vm);
		if (err)
			return err;
	}
	return 0;
}

struct counts {
	long k4, m2, g1;
};

static struct counts counts(void)
{
	struct counts c = {
		tinyvm_stage2_pages(&vm, "pages_4k"),
		tinyvm_stage2_pages(&vm, "pages_2m"),
		tinyvm_stage2_pages(&vm, "pages_1g"),
	};

	printf("# stage 2: pages_4k %ld, pages_2m %ld, pages_1g %ld\n", c.k4, c.m2, c.g1);
	return c;
}

int main(int argc, char **argv)
{
	uint64_t a_gpa = TINYVM_LOW, p_gpa;
	unsigned long nr;
	struct sigbus_record rec;
	struct counts before, split, after;
	char *ram;
	int fd, ret, err;

	if (argc != 2 || !(hp = strcmp(argv[1], "1G") ? (strcmp(argv[1], "2M") ? 0 : 2UL << 20) :
			   1UL << 30)) {
		fprintf(stderr, "usage: kvm_kept 2M|1G\n");
		return 2;
	}
	sigbus_install();
	tinyvm_create(&vm);
	CHECK(tinyvm_pass(&vm) == 0, "the guest runs and enables steal time");
	/* Guest RAM at a 1 GiB-aligned address for a 1 GiB hugepage. */
	if (hp == 1UL << 30)
		a_gpa = hp;
	nr = hp == 1UL << 30 ? 1 : 2;
	p_gpa = a_gpa + P_OFF;
	fd = memfd_create("guest-ram-kvm", MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED |
			  (__builtin_ctzl(hp) << MFD_HUGE_SHIFT));
	if (fd < 0 || ftruncate(fd, nr * hp)) {
		perror("memfd");
		return 2;
	}
	ram = mmap(NULL, nr * hp, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (ram == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	tinyvm_region(&vm, 1, a_gpa, nr * hp, ram);

	err = guest_reads(a_gpa, nr * hp, 0);
	CHECK(!err, "the guest read every page of its RAM (%s)", strerror(err));
	before = counts();
	if (hp == 2UL << 20)
		CHECK(before.m2 >= 2 && before.k4 < 512,
		      "both 2 MiB pages mapped by 2 MiB entries");
	else
		CHECK(before.g1 == 1, "the 1 GiB page mapped by a 1 GiB entry");

	SIGBUS_SYSCALL(rec, ret = madvise(ram + P_OFF, 4096, MADV_HWPOISON));
	CHECK(!ret && rec.got && rec.lsb == 12, "P kept after MADV_HWPOISON (lsb %d)", rec.lsb);

	err = guest_reads(a_gpa, hp, p_gpa);
	if (!err && nr == 2)
		err = guest_reads(a_gpa + hp, hp, 0);
	CHECK(!err, "the guest read every page but P (%s)", strerror(err));
	split = counts();
	if (hp == 2UL << 20) {
		CHECK(split.k4 - before.k4 == 511,
		      "A is mapped by 511 4 KiB entries, P by none (+%ld)", split.k4 - before.k4);
		CHECK(split.m2 == before.m2 - 1, "B keeps its 2 MiB entry (2 MiB: %ld -> %ld)",
		      before.m2, split.m2);
	} else {
		CHECK(split.k4 - before.k4 == 511,
		      "the 2 MiB of A that holds P: 511 4 KiB entries (+%ld)", split.k4 - before.k4);
		CHECK(split.m2 - before.m2 == 511,
		      "the rest of A: 511 2 MiB entries (+%ld)", split.m2 - before.m2);
		CHECK(split.g1 == 0, "no 1 GiB entry covers P (1 GiB: %ld)", split.g1);
	}

	for (int i = 0; i < 3; i++) {
		sigbus_no_jump = 1;
		sigbus_last.got = 0;
		err = guest_reads(p_gpa, 4096, 0);
		sigbus_no_jump = 0;
		CHECK(err && sigbus_last.got && sigbus_last.code == BUS_MCEERR_AR &&
		      sigbus_last.addr == ram + P_OFF && sigbus_last.lsb == 12,
		      "guest read of P #%d: KVM_RUN stopped (%s), SIGBUS %s at %s, lsb %d", i + 1,
		      strerror(err), sigbus_last.got ? (sigbus_last.code == BUS_MCEERR_AR ?
		      "BUS_MCEERR_AR" : "other") : "none",
		      sigbus_last.addr == ram + P_OFF ? "P's address" : "another address",
		      sigbus_last.lsb);
	}
	after = counts();
	CHECK(after.k4 == split.k4 && after.m2 == split.m2 && after.g1 == split.g1,
	      "P was never mapped: the counts did not change");

	munmap(ram, nr * hp);
	close(fd);
	return check_exit_status();
}
