// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * stock_mapped_poison: a poisoned HugeTLB folio that memory_failure() could
 * not unmap (tests/kmod/mfr_immap_hold.ko holds the memfd's i_mmap_rwsem,
 * so its trylock fails) is handled as by a kernel without the hook series,
 * when no policy module is loaded: the series refuses GUP and copy-on-write
 * for kept hugepages only.
 *
 *   stock_mapped_poison HOLD_FILE
 *     HOLD_FILE is the module's debugfs file.  A 2 MiB memfd without the
 *     policy, mapped shared and, before the error, private (read, so that
 *     it maps the same folio).  MADV_HWPOISON of page P fails with EBUSY
 *     and raises the hugepage-sized SIGBUS of a page it could not unmap;
 *     then the hugepage is still mapped: a healthy word reads back,
 *     process_vm_readv() of P (GUP) succeeds, and a write through the
 *     private mapping copies the hugepage (no SIGBUS) and lands in the copy
 *     only.  Under MADV_HWPOISON nothing traps the reads of P: the checks
 *     are on what the calls return.
 *
 * Prints ok/not ok lines; exits 0 if all held.
 */
#include <errno.h>
#include <sys/uio.h>

#include "check.h"
#include "hwpoison.h"

#define HP (2UL << 20)
#define P_OFF 0x3000UL
#define H_OFF 0x5000UL

static void hold(const char *path, int fd)
{
	FILE *f = fopen(path, "w");

	if (!f || fprintf(f, "%d\n", fd) < 0 || fclose(f)) {
		perror(path);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	struct sigbus_record rec;
	struct iovec local, remote;
	char buf[4096], *shared, *priv;
	volatile char v;
	int fd, ret, err;
	ssize_t n;

	if (argc != 2) {
		fprintf(stderr, "usage: stock_mapped_poison HOLD_FILE\n");
		return 2;
	}
	sigbus_install();
	shared = hugetlb_memfd_map("stock-mapped-poison", HP, 0, &fd);
	priv = mmap(NULL, HP, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (priv == MAP_FAILED) {
		perror("mmap private");
		return 2;
	}
	v = priv[H_OFF];
	(void)v;

	hold(argv[1], fd);
	SIGBUS_SYSCALL(rec, ret = madvise(shared + P_OFF, 4096, MADV_HWPOISON));
	err = errno;
	hold(argv[1], -1);
	CHECK(ret < 0 && err == EBUSY,
	      "MADV_HWPOISON could not unmap the hugepage: EBUSY (%d, %s)", ret,
	      ret ? strerror(err) : "no error");
	CHECK(rec.got && rec.lsb == 21,
	      "and the poisoning thread got the hugepage-sized SIGBUS (got %d, lsb %d)",
	      rec.got, rec.lsb);

	SIGBUS_TRY(rec, v = shared[H_OFF]);
	CHECK(!rec.got && v == 0x5a, "the hugepage is still mapped: a healthy word reads back");

	local.iov_base = buf;
	local.iov_len = sizeof(buf);
	remote.iov_base = shared + P_OFF;
	remote.iov_len = 4096;
	n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	CHECK(n == 4096, "process_vm_readv() of P takes it through GUP, as stock (%zd, %s)",
	      n, n < 0 ? strerror(errno) : "ok");

	SIGBUS_TRY(rec, priv[H_OFF] = 0x77);
	CHECK(!rec.got, "a write through the private mapping copies the hugepage, no SIGBUS (lsb %d)",
	      rec.lsb);
	CHECK(priv[H_OFF] == 0x77 && shared[H_OFF] == 0x5a && priv[H_OFF + 1] == 0x5a,
	      "the write landed in the copy only, the copy holds the rest");

	munmap(priv, HP);
	munmap(shared, HP);
	close(fd);
	return check_exit_status();
}
