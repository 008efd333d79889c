// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kept_hold FILE PAGE...: hold a kept 2 MiB hugepage whose 4 KiB pages
 * PAGE... are poisoned (MADV_HWPOISON, each recorded as kept), for another
 * program to work on: writes "PID ADDR PFN..." (the mapping's address and
 * the poisoned pages' frames, hex) to FILE, then waits to be killed.  The
 * hugepage is offlined when it dies.
 */
#include <errno.h>

#include "hwpoison.h"

#define HP (2UL << 20)

int main(int argc, char **argv)
{
	char tmp[4096];
	char *base;
	FILE *f;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: kept_hold FILE PAGE...\n");
		return 2;
	}
	sigbus_install();
	base = hugetlb_memfd_map("guest-ram-hold", HP, 1, &fd);
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
	f = fopen(tmp, "w");
	if (!f)
		return 2;
	fprintf(f, "%d %lx", getpid(), (unsigned long)base);
	for (int i = 2; i < argc; i++) {
		char *p = base + strtoul(argv[i], NULL, 0) * 4096;
		uint64_t pfn = pfn_of(p);
		struct sigbus_record rec;
		int ret;

		SIGBUS_SYSCALL(rec, ret = madvise(p, 4096, MADV_HWPOISON));
		if (ret || !rec.got || rec.lsb != 12) {
			fprintf(stderr, "kept_hold: page %s not kept (%d, lsb %d)\n", argv[i],
				ret, rec.lsb);
			return 1;
		}
		fprintf(f, " %llx", (unsigned long long)pfn);
	}
	fprintf(f, "\n");
	if (fclose(f) || rename(tmp, argv[1]))
		return 2;
	for (;;)
		pause();
}
