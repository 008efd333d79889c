// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * kept_futex: the futex operations that update their word in place never
 * write into the poisoned 4 KiB page P of a kept hugepage, whatever races
 * them.  P is poisoned with MADV_HWPOISON, so an update that reached it
 * would succeed silently: the checks read P back.
 *
 *   kept_futex 2M|1G remap SECONDS
 *     One thread loops FUTEX_WAKE_OP_PRIVATE (FUTEX_OP_SET 7, then
 *     FUTEX_OP_OR 7) on a word at P's offset of a window X; another flips
 *     X between a healthy HugeTLB memfd and the kept one with
 *     mmap(MAP_FIXED), not prefaulted.  P's word is never 7; the healthy
 *     memfd's word did become 7 (the operation ran), and the operation
 *     failed with EFAULT while X showed the kept memfd.
 *   kept_futex 2M|1G exit ROUNDS
 *     Each round a child maps the kept memfd, three threads loop the
 *     operation on P's word and a fourth calls exit_group() meanwhile.
 *     P's word is never 7.
 *   kept_futex 2M|1G ops
 *     FUTEX_WAKE_OP_PRIVATE and FUTEX_WAKE_OP (shared) on P fail with
 *     EFAULT, on a healthy page H of the same hugepage succeed;
 *     FUTEX_LOCK_PI_PRIVATE on P fails with EFAULT, on H takes the lock;
 *     a thread that exits with a robust-list entry in P and one in H after
 *     it leaves P unchanged and ends the walk there (H's entry keeps its
 *     owner), as for a word that is not mapped.  P never changes.
 *
 * Prints ok/not ok lines; exits 0 if all held.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "check.h"
#include "hwpoison.h"

#define P_OFF 0x3000UL		/* the poisoned page */
#define H_OFF 0x5000UL		/* a healthy page of the same hugepage */
#define WORD 0x40UL		/* the futex word's offset in its page */
#define UNTOUCHED 0x5a5a5a5aU	/* what hugetlb_memfd_map() wrote */

static unsigned long hp;
static char *kept;		/* the kept memfd, mapped for good */
static int kept_fd;

static long futex(void *uaddr, int op, int val, void *val2, void *uaddr2,
		  int val3)
{
	return syscall(SYS_futex, uaddr, op, val, val2, uaddr2, val3);
}

/* FUTEX_WAKE_OP on @word, waking nobody on a private dummy word. */
static long wake_op(uint32_t *word, int private, int setop)
{
	static uint32_t dummy;

	return futex(&dummy, private ? FUTEX_WAKE_OP_PRIVATE : FUTEX_WAKE_OP,
		     0, (void *)0, word, FUTEX_OP(setop, 7, FUTEX_OP_CMP_EQ, 0));
}

static uint32_t *word_at(char *base, unsigned long page)
{
	return (uint32_t *)(base + page + WORD);
}

static void kept_with_poison(void)
{
	struct sigbus_record rec;
	int ret;

	kept = hugetlb_memfd_map("guest-ram-futex", hp, 1, &kept_fd);
	SIGBUS_SYSCALL(rec, ret = madvise(kept + P_OFF, 4096, MADV_HWPOISON));
	CHECK(ret == 0 && rec.got && rec.lsb == 12,
	      "P poisoned and kept: MADV_HWPOISON %d, SIGBUS lsb %d", ret, rec.lsb);
}

/* ---- remap: the mapping changes between a check and the update ---- */

static atomic_int stop;
static char *window;
static atomic_long ok_healthy, efault_kept, other;

static void *remapper(void *healthy_fd)
{
	int fds[2] = { *(int *)healthy_fd, kept_fd };
	unsigned long i;

	for (i = 0; !atomic_load(&stop); i++)
		if (mmap(window, hp, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			 fds[i & 1], 0) == MAP_FAILED) {
			perror("mmap MAP_FIXED");
			exit(2);
		}
	return NULL;
}

static void *waker(void *arg)
{
	int setop = arg ? FUTEX_OP_OR : FUTEX_OP_SET;

	while (!atomic_load(&stop)) {
		long r = wake_op(word_at(window, P_OFF), 1, setop);

		if (r >= 0)
			atomic_fetch_add(&ok_healthy, 1);
		else if (errno == EFAULT)
			atomic_fetch_add(&efault_kept, 1);
		else
			atomic_fetch_add(&other, 1);
	}
	return NULL;
}

static int mode_remap(int seconds)
{
	int healthy_fd;
	char *healthy = hugetlb_memfd_map("healthy-futex", hp, 0, &healthy_fd);
	pthread_t r, w[2];

	kept_with_poison();
	window = mmap(NULL, hp * 2, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	window = (char *)(((uintptr_t)window + hp - 1) & ~(hp - 1));
	pthread_create(&r, NULL, remapper, &healthy_fd);
	pthread_create(&w[0], NULL, waker, NULL);
	pthread_create(&w[1], NULL, waker, (void *)1);
	sleep(seconds);
	atomic_store(&stop, 1);
	pthread_join(r, NULL);
	pthread_join(w[0], NULL);
	pthread_join(w[1], NULL);

	printf("# %ld succeeded, %ld EFAULT, %ld other errors\n",
	       atomic_load(&ok_healthy), atomic_load(&efault_kept), atomic_load(&other));
	CHECK(*word_at(kept, P_OFF) == UNTOUCHED,
	      "P's word is untouched after the race (%#x)", *word_at(kept, P_OFF));
	CHECK(*word_at(healthy, P_OFF) == 7 || *word_at(healthy, P_OFF) == (UNTOUCHED | 7),
	      "the healthy memfd's word was updated (%#x): the operation ran",
	      *word_at(healthy, P_OFF));
	CHECK(atomic_load(&efault_kept) > 0,
	      "the operation failed with EFAULT while the window showed the kept memfd");
	CHECK(atomic_load(&other) == 0, "no other error");
	return check_exit_status();
}

/* ---- exit: a fatal signal pending while the update runs ---- */

static void *exit_loop(void *arg)
{
	(void)arg;
	for (;;)
		wake_op(word_at(kept, P_OFF), 1, FUTEX_OP_SET);
	return NULL;
}

static int mode_exit(int rounds)
{
	int i, status, bad = 0;

	kept_with_poison();
	for (i = 0; i < rounds; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			pthread_t t;
			struct timespec ts = { 0, 1000000 * (1 + i % 20) };

			for (int j = 0; j < 3; j++)
				pthread_create(&t, NULL, exit_loop, NULL);
			nanosleep(&ts, NULL);
			syscall(SYS_exit_group, 0);
		}
		waitpid(pid, &status, 0);
		if (*word_at(kept, P_OFF) != UNTOUCHED)
			bad++;
	}
	CHECK(!bad, "P's word untouched after %d rounds of exit_group() racing the update (%#x)",
	      rounds, *word_at(kept, P_OFF));
	return check_exit_status();
}

/* ---- ops: each kind of update, and the robust list ---- */

/*
 * A thread that dies holding two robust futexes: the list's first entry in
 * P, the second in H.  Entries and lock words are in the kept hugepage
 * (futex_offset 8), so the walk reads P's entry with a plain load.
 */
#define ROBUST_OFF 0x100UL

static uint32_t *robust_word(unsigned long page)
{
	return (uint32_t *)(kept + page + ROBUST_OFF + 8);
}

static void *robust_owner(void *arg)
{
	static struct robust_list_head head;
	struct robust_list *ep = (void *)(kept + P_OFF + ROBUST_OFF);
	struct robust_list *eh = (void *)(kept + H_OFF + ROBUST_OFF);
	uint32_t tid = syscall(SYS_gettid);

	(void)arg;
	head.futex_offset = 8;
	head.list_op_pending = NULL;
	head.list.next = ep;
	ep->next = eh;
	eh->next = &head.list;
	*robust_word(P_OFF) = tid;
	*robust_word(H_OFF) = tid;
	syscall(SYS_set_robust_list, &head, sizeof(head));
	return (void *)(uintptr_t)tid;
}

static int mode_ops(void)
{
	uint32_t *p, *h;
	pthread_t t;
	void *tid;
	long r;

	kept_with_poison();
	p = word_at(kept, P_OFF);
	h = word_at(kept, H_OFF);

	r = wake_op(p, 1, FUTEX_OP_SET);
	CHECK(r < 0 && errno == EFAULT, "FUTEX_WAKE_OP_PRIVATE on P: EFAULT (%ld, %s)",
	      r, strerror(errno));
	r = wake_op(p, 0, FUTEX_OP_ADD);
	CHECK(r < 0 && errno == EFAULT, "FUTEX_WAKE_OP (shared) on P: EFAULT (%ld, %s)",
	      r, strerror(errno));
	r = wake_op(h, 1, FUTEX_OP_SET);
	CHECK(r == 0 && *h == 7, "FUTEX_WAKE_OP_PRIVATE on H updates it (%ld, %#x)", r, *h);

	r = futex(p, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	CHECK(r < 0 && errno == EFAULT, "FUTEX_LOCK_PI_PRIVATE on P: EFAULT (%ld, %s)",
	      r, strerror(errno));
	*h = 0;
	r = futex(h, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	CHECK(r == 0 && (*h & FUTEX_TID_MASK) == (uint32_t)syscall(SYS_gettid),
	      "FUTEX_LOCK_PI_PRIVATE on H takes it (%ld, %#x)", r, *h);
	r = futex(h, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0);
	CHECK(r == 0, "FUTEX_UNLOCK_PI_PRIVATE on H (%ld)", r);

	pthread_create(&t, NULL, robust_owner, NULL);
	pthread_join(t, &tid);
	CHECK(*robust_word(P_OFF) == (uint32_t)(uintptr_t)tid,
	      "the robust-list walk at exit left P's lock word as it was (%#x)",
	      *robust_word(P_OFF));
	CHECK(*robust_word(H_OFF) == (uint32_t)(uintptr_t)tid,
	      "and ended there: H's entry after it keeps its owner, no OWNER_DIED (%#x)",
	      *robust_word(H_OFF));

	CHECK(*p == UNTOUCHED, "P's word never changed (%#x)", *p);
	return check_exit_status();
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: kept_futex 2M|1G remap SECONDS | exit ROUNDS | ops\n");
		return 2;
	}
	hp = strcmp(argv[1], "1G") ? 2UL << 20 : 1UL << 30;
	sigbus_install();
	if (!strcmp(argv[2], "remap") && argc == 4)
		return mode_remap(atoi(argv[3]));
	if (!strcmp(argv[2], "exit") && argc == 4)
		return mode_exit(atoi(argv[3]));
	if (!strcmp(argv[2], "ops"))
		return mode_ops();
	fprintf(stderr, "kept_futex: unknown mode %s\n", argv[2]);
	return 2;
}
