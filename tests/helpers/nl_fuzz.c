// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * nl_fuzz: throw random and mutated requests at the "mfr" generic netlink
 * family (module/mfr.yaml) and check that every one is answered and that
 * the permission contract holds.
 *
 *   nl_fuzz [--count N] [--seed S] [--unprivileged]
 *           [--family NAME] [--group NAME]
 *
 * N messages (default 100000) are generated from seed S (printed; default
 * from the clock), each sent with NLM_F_REQUEST | NLM_F_ACK and followed
 * by reading until its ACK/error or its dump's NLMSG_DONE.  Generators:
 * random bytes after valid headers, random attribute streams, and
 * mutations of valid requests for every operation, with random header
 * damage on top.  Every 1000 messages the fuzzer tries to join the
 * "events" group (on a fresh socket) and probes status-get.
 *
 * Privileged: the ids returned by successful rule-adds are recorded, and
 * at the end every rule the fuzzer created is deleted again (and its own
 * HugeTLB memfd set back to the default policy if a memfd-set kept it), so
 * the module is left as found.  --unprivileged drops to uid/gid 65534
 * first (if root); then nothing but status-get may succeed, every admin
 * operation must be refused with EPERM and joining "events" must fail
 * with EPERM.
 *
 * --family/--group aim the fuzzer at another family (e.g. nlctrl/notify)
 * to test the fuzzer itself on a machine without mfr.ko.
 *
 * Ends with key=value lines.  Exit 0: all answered, contract held;
 * 1: a failure (details printed as "nl_fuzz: FAIL: ..."); 2: setup error.
 */
#include <errno.h>
#include <grp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "../../module/include/uapi/linux/mfr.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define PICK(a)		((a)[below(ARRAY_SIZE(a))])

#define NOBODY		65534
#define MSG_MAX		(70 * 1024)	/* one maximal (64 KiB) attribute and some more */
#define RX_MAX		(256 * 1024)	/* error ACKs echo the request; dump skbs are <= 32 KiB */
#define ANSWER_TIMEOUT_S 10
#define PERIOD		1000		/* messages between events joins and status probes */
#define LIVE_RULES_MAX	64		/* keeps rule-get dumps short */
#define TMPL_ATTRS	32
#define TMPL_STORE	(20 * 1024)
#define MAX_TOP_ATTRS	128
#define NOTES_MAX	20		/* failure details printed */

#define GENL_MIN_LEN	(NLMSG_HDRLEN + GENL_HDRLEN)
#define ALL_FLAGS_OK	(NLM_F_REQUEST | NLM_F_ACK | NLM_F_ECHO)

/* ---- options and state ---- */

static unsigned long long opt_count = 100000;
static unsigned long long opt_seed;
static bool opt_unpriv;
static const char *opt_family = MFR_FAMILY_NAME;
static const char *opt_group = MFR_MCGRP_EVENTS;

static bool is_mfr;			/* the real family: spec checks apply */
static uint16_t fam_id;
static uint32_t events_grp;		/* 0: the family has no such group */
static uint32_t op_flags[256];		/* from nlctrl: GENL_CMD_CAP_*, GENL_*ADMIN_PERM */
static uint16_t unused_ids[6];		/* generic netlink ids no family has */
static unsigned int n_unused_ids;

static int nl_fd = -1;
static uint32_t next_seq = 1;
static pid_t self_pid;
static int huge_fd = -1;		/* our HugeTLB memfd, a memfd-set target */
static int plain_fd = -1;		/* a shmem memfd: memfd-set must refuse it */
static ino_t huge_ino;

struct idset {
	uint32_t *v;
	size_t n, cap;
};

static struct idset created;		/* every id a rule-add of ours returned */
static struct idset live;		/* of those, the ones we believe still exist */
static struct idset preexisting;	/* rules found at start: never deleted */

static struct {
	unsigned long long sent, answered, dropped, unanswered, stray;
	unsigned long long replies, dumps_intr, extack, send_errors, rx_errors;
	unsigned long long accepted, acc_rule_add, acc_rule_del, acc_memfd_set;
	unsigned long long join_ok, join_eperm, join_other;
	unsigned long long probes_ok, probes_bad;
	unsigned long long cleanup_dels, cleanup_sets;
	unsigned long long violations;
	unsigned long long err[4096];	/* answers by errno, [0] = success */
	unsigned long long gen[4];	/* generators used */
} st;

static bool have_gen_start, have_gen_end;
static uint64_t gen_start, gen_end;
static uint64_t rules_start = UINT64_MAX;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A broken contract: counted, and the first few printed. */
static void fail(const char *fmt, ...)
{
	va_list ap;

	if (++st.violations > NOTES_MAX) {
		if (st.violations == NOTES_MAX + 1)
			printf("nl_fuzz: (further failures not shown)\n");
		return;
	}
	va_start(ap, fmt);
	printf("nl_fuzz: FAIL: ");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	fflush(stdout);
}

static void idset_add(struct idset *s, uint32_t id)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v) {
			perror("nl_fuzz: realloc");
			exit(2);
		}
	}
	s->v[s->n++] = id;
}

static bool idset_has(const struct idset *s, uint32_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == id)
			return true;
	return false;
}

static void idset_del(struct idset *s, uint32_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == id) {
			s->v[i] = s->v[--s->n];
			return;
		}
}

/* ---- deterministic randomness ---- */

static uint64_t rng;

/* xorshift64*: tiny, and the whole run replays from the printed seed. */
static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}

static void rnd_seed(uint64_t seed)
{
	/* splitmix64 spreads small seeds; xorshift must not start at 0. */
	uint64_t z = seed + 0x9E3779B97F4A7C15ULL;

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	rng = (z ^ (z >> 31)) ?: 1;
}

static uint32_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static bool chance(unsigned int percent)
{
	return below(100) < percent;
}

/* Values around every limit of the spec (budget, pid, fd) and of the types. */
static const uint32_t u32_edges[] = {
	0, 1, 2, 3, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000,
	1048575, 1048576, 1048577, 4194303, 4194304, 4194305,
	0x7fffffff, 0x80000000u, 0xfffffffeu, 0xffffffffu,
};

static const uint64_t u64_edges[] = {
	0, 1, 2, 0xffffffffULL, 0x100000000ULL, 0x7fffffffffffffffULL,
	0x8000000000000000ULL, 0xffffffffffffffffULL,
};

static uint32_t edge_u32(void)
{
	return chance(60) ? PICK(u32_edges) : (uint32_t)rnd();
}

static uint64_t edge_u64(void)
{
	return chance(60) ? PICK(u64_edges) : rnd();
}

/* ---- building messages ---- */

struct msg {
	size_t len;				/* bytes sent */
	int depth;				/* open nests */
	unsigned int n_top;
	size_t top[MAX_TOP_ATTRS];		/* offsets of top-level attributes */
	unsigned char buf[MSG_MAX] __attribute__((aligned(8)));
};

static struct nlmsghdr *nlh_of(struct msg *m)
{
	return (struct nlmsghdr *)m->buf;
}

static struct genlmsghdr *genl_of(struct msg *m)
{
	return (struct genlmsghdr *)(m->buf + NLMSG_HDRLEN);
}

static void msg_start(struct msg *m, uint16_t type, uint16_t flags, uint8_t cmd,
		      uint8_t version)
{
	memset(m->buf, 0, GENL_MIN_LEN);
	m->len = GENL_MIN_LEN;
	m->depth = 0;
	m->n_top = 0;
	nlh_of(m)->nlmsg_type = type;
	nlh_of(m)->nlmsg_flags = flags;
	genl_of(m)->cmd = cmd;
	genl_of(m)->version = version;
}

/* nlmsg_len says what was built; header mutations may lie afterwards. */
static void msg_finish(struct msg *m)
{
	nlh_of(m)->nlmsg_len = m->len;
}

static void put_nla_hdr(struct msg *m, size_t off, uint16_t nla_len, uint16_t type)
{
	struct nlattr h = { .nla_len = nla_len, .nla_type = type };

	memcpy(m->buf + off, &h, sizeof(h));
}

static uint16_t get_nla_len(const struct msg *m, size_t off)
{
	struct nlattr h;

	memcpy(&h, m->buf + off, sizeof(h));
	return h.nla_len;
}

/* One attribute with a true nla_len; silently skipped if it does not fit. */
static bool put_attr(struct msg *m, uint16_t type, const void *data, size_t len)
{
	size_t total = NLA_HDRLEN + len;

	if (total > 0xffff || NLA_ALIGN(total) > MSG_MAX - m->len)
		return false;
	if (!m->depth && m->n_top < MAX_TOP_ATTRS)
		m->top[m->n_top++] = m->len;
	put_nla_hdr(m, m->len, total, type);
	if (len)
		memcpy(m->buf + m->len + NLA_HDRLEN, data, len);
	memset(m->buf + m->len + total, 0, NLA_ALIGN(total) - total);
	m->len += NLA_ALIGN(total);
	return true;
}

static bool put_u32(struct msg *m, uint16_t type, uint32_t v)
{
	return put_attr(m, type, &v, sizeof(v));
}

static long nest_start(struct msg *m, uint16_t type)
{
	long off = m->len;

	if (!put_attr(m, type, NULL, 0))
		return -1;
	m->depth++;
	return off;
}

static void nest_end(struct msg *m, long off)
{
	size_t len = m->len - off;

	m->depth--;
	put_nla_hdr(m, off, len > 0xffff ? 0xffff : len,
		    ((struct nlattr *)(m->buf + off))->nla_type);
}

/* ---- netlink I/O ---- */

struct answer {
	int error;		/* 0 or a positive errno */
	unsigned int replies;	/* data messages before the end */
	bool intr;		/* a dump part had NLM_F_DUMP_INTR */
};

typedef void (*reply_fn)(const struct nlmsghdr *nlh, void *ctx);

static int nl_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = ANSWER_TIMEOUT_S };
	int one = 1, rcvbuf = 1 << 20;
	int fd;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -1;
	/* A missing answer must end as a failure, not a hang. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	/* Error answers then carry the module's extack messages and offsets. */
	setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	return fd;
}

/* Stamps a fresh sequence number (never 0: notifications use 0). */
static uint32_t msg_stamp(struct msg *m)
{
	if (!next_seq)
		next_seq = 1;
	nlh_of(m)->nlmsg_seq = next_seq;
	nlh_of(m)->nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	return next_seq++;
}

static int msg_send(const struct msg *m)
{
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	ssize_t n;

	do
		n = sendto(nl_fd, m->buf, m->len, 0, (struct sockaddr *)&kernel,
			   sizeof(kernel));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == m->len ? 0 : -EMSGSIZE;
}

/* An error ACK: the errno, and whether the module's extack said something. */
static void parse_error(const struct nlmsghdr *nlh, struct answer *a)
{
	const unsigned char *p = NLMSG_DATA(nlh);
	size_t len = nlh->nlmsg_len - NLMSG_HDRLEN, off;
	struct nlmsgerr e;

	if (len < sizeof(e)) {
		fail("short NLMSG_ERROR (%zu bytes)", len);
		a->error = EPROTO;
		return;
	}
	memcpy(&e, p, sizeof(e));
	a->error = -e.error;
	if (a->error < 0 || a->error >= 4096) {
		fail("NLMSG_ERROR with error %d", e.error);
		a->error = EPROTO;
	}
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return;
	/* TLVs follow the echoed request (or only its header if capped). */
	off = sizeof(int) + ((nlh->nlmsg_flags & NLM_F_CAPPED) ?
			     sizeof(struct nlmsghdr) : NLMSG_ALIGN(e.msg.nlmsg_len));
	while (off + NLA_HDRLEN <= len) {
		struct nlattr h;

		memcpy(&h, p + off, sizeof(h));
		if (h.nla_len < NLA_HDRLEN || h.nla_len > len - off)
			break;
		if ((h.nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_MSG) {
			st.extack++;
			if (h.nla_len == NLA_HDRLEN ||
			    p[off + h.nla_len - 1] != '\0')
				fail("extack message is not a C string");
		}
		off += NLA_ALIGN(h.nla_len);
	}
}

/*
 * Reads until the answer ending request seq: NLMSG_ERROR (ACK or error)
 * or NLMSG_DONE.  Messages with another seq (late answers, echoed
 * notifications) are counted as stray.  Returns 0, or -ETIMEDOUT.
 */
static int await_answer(uint32_t seq, reply_fn fn, void *ctx, struct answer *a)
{
	static unsigned char rx[RX_MAX] __attribute__((aligned(8)));

	memset(a, 0, sizeof(*a));
	for (;;) {
		struct iovec iov = { .iov_base = rx, .iov_len = sizeof(rx) };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n = recvmsg(nl_fd, &mh, 0);
		size_t off = 0;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return -ETIMEDOUT;
			/* ENOBUFS: the kernel dropped an answer for us. */
			st.rx_errors++;
			fail("recv: %s", strerror(errno));
			continue;
		}
		if (mh.msg_flags & MSG_TRUNC)
			fail("answer to seq %u truncated (%zd bytes)", seq, n);
		while ((size_t)n - off >= NLMSG_HDRLEN) {
			const struct nlmsghdr *nlh = (void *)(rx + off);

			if (nlh->nlmsg_len < NLMSG_HDRLEN || nlh->nlmsg_len > n - off) {
				fail("malformed answer (nlmsg_len %u)", nlh->nlmsg_len);
				break;
			}
			off += NLMSG_ALIGN(nlh->nlmsg_len);
			if (nlh->nlmsg_seq != seq) {
				st.stray++;
				continue;
			}
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				parse_error(nlh, a);
				return 0;
			}
			if (nlh->nlmsg_type == NLMSG_DONE) {
				int err = 0;

				if (nlh->nlmsg_len >= NLMSG_HDRLEN + sizeof(err))
					memcpy(&err, NLMSG_DATA(nlh), sizeof(err));
				a->error = err < 0 && err > -4096 ? -err : (err ? EPROTO : 0);
				return 0;
			}
			a->replies++;
			if (nlh->nlmsg_flags & NLM_F_DUMP_INTR)
				a->intr = true;
			if (fn)
				fn(nlh, ctx);
		}
	}
}

/* A request of our own (setup, probes, cleanup): the errno it got. */
static int request(struct msg *m, reply_fn fn, void *ctx)
{
	struct answer a;
	uint32_t seq;
	int err;

	msg_finish(m);
	seq = msg_stamp(m);
	err = msg_send(m);
	if (err)
		return -err;
	if (await_answer(seq, fn, ctx, &a))
		return ETIMEDOUT;
	return a.error;
}

/* ---- parsing answers ---- */

struct attr_iter {
	const unsigned char *p;
	size_t rem;
};

static void attr_iter_init(struct attr_iter *it, const void *data, size_t len)
{
	it->p = data;
	it->rem = len;
}

/* The next well-formed attribute; stops at the first malformed one. */
static bool attr_next(struct attr_iter *it, uint16_t *type, const unsigned char **pl,
		      size_t *plen)
{
	struct nlattr h;
	size_t step;

	if (it->rem < NLA_HDRLEN)
		return false;
	memcpy(&h, it->p, sizeof(h));
	if (h.nla_len < NLA_HDRLEN || h.nla_len > it->rem)
		return false;
	*type = h.nla_type & NLA_TYPE_MASK;
	*pl = it->p + NLA_HDRLEN;
	*plen = h.nla_len - NLA_HDRLEN;
	step = NLA_ALIGN(h.nla_len);
	if (step > it->rem)
		step = it->rem;
	it->p += step;
	it->rem -= step;
	return true;
}

/* u8/u16/u32/u64 and the variable-width "uint" of YNL. */
static bool attr_uint(const unsigned char *pl, size_t plen, uint64_t *v)
{
	uint8_t u8;
	uint16_t u16;
	uint32_t u32;

	switch (plen) {
	case 1:
		memcpy(&u8, pl, 1);
		*v = u8;
		return true;
	case 2:
		memcpy(&u16, pl, 2);
		*v = u16;
		return true;
	case 4:
		memcpy(&u32, pl, 4);
		*v = u32;
		return true;
	case 8:
		memcpy(v, pl, 8);
		return true;
	}
	return false;
}

/* The attributes of a generic netlink reply, or false if not one. */
static bool genl_attrs(const struct nlmsghdr *nlh, struct attr_iter *it)
{
	if (nlh->nlmsg_len < GENL_MIN_LEN)
		return false;
	attr_iter_init(it, (const unsigned char *)nlh + GENL_MIN_LEN,
		       nlh->nlmsg_len - GENL_MIN_LEN);
	return true;
}

/* First attribute of that type in a reply, as an unsigned number. */
static bool reply_uint(const struct nlmsghdr *nlh, uint16_t want, uint64_t *v)
{
	const unsigned char *pl;
	struct attr_iter it;
	uint16_t type;
	size_t plen;

	if (nlh->nlmsg_type != fam_id || !genl_attrs(nlh, &it))
		return false;
	while (attr_next(&it, &type, &pl, &plen))
		if (type == want)
			return attr_uint(pl, plen, v);
	return false;
}

/* ---- the family, from nlctrl ---- */

struct family_ctx {
	bool found;
	uint16_t id;
	uint32_t grp;
};

static void parse_ops(const unsigned char *data, size_t len)
{
	const unsigned char *pl, *opl;
	struct attr_iter it, op;
	size_t plen, oplen;
	uint16_t type;

	attr_iter_init(&it, data, len);
	while (attr_next(&it, &type, &pl, &plen)) {
		uint64_t id = 256, flags = 0, v;

		attr_iter_init(&op, pl, plen);
		while (attr_next(&op, &type, &opl, &oplen)) {
			if (type == CTRL_ATTR_OP_ID && attr_uint(opl, oplen, &v))
				id = v;
			if (type == CTRL_ATTR_OP_FLAGS && attr_uint(opl, oplen, &v))
				flags = v;
		}
		if (id < 256)
			op_flags[id] = flags;
	}
}

static uint32_t find_group(const unsigned char *data, size_t len)
{
	const unsigned char *pl, *gpl;
	struct attr_iter it, g;
	size_t plen, gplen;
	uint16_t type;

	attr_iter_init(&it, data, len);
	while (attr_next(&it, &type, &pl, &plen)) {
		uint64_t id = 0;
		bool match = false;

		attr_iter_init(&g, pl, plen);
		while (attr_next(&g, &type, &gpl, &gplen)) {
			if (type == CTRL_ATTR_MCAST_GRP_ID)
				attr_uint(gpl, gplen, &id);
			if (type == CTRL_ATTR_MCAST_GRP_NAME && gplen == strlen(opt_group) + 1 &&
			    !memcmp(gpl, opt_group, gplen))
				match = true;
		}
		if (match)
			return id;
	}
	return 0;
}

static void on_family(const struct nlmsghdr *nlh, void *ctx)
{
	struct family_ctx *f = ctx;
	const unsigned char *pl;
	struct attr_iter it;
	uint16_t type;
	size_t plen;
	uint64_t v;

	if (nlh->nlmsg_type != GENL_ID_CTRL || !genl_attrs(nlh, &it))
		return;
	while (attr_next(&it, &type, &pl, &plen)) {
		if (type == CTRL_ATTR_FAMILY_ID && attr_uint(pl, plen, &v)) {
			f->found = true;
			f->id = v;
		} else if (type == CTRL_ATTR_OPS) {
			parse_ops(pl, plen);
		} else if (type == CTRL_ATTR_MCAST_GROUPS) {
			f->grp = find_group(pl, plen);
		}
	}
}

static int resolve_family(void)
{
	static struct msg m;
	struct family_ctx f = { 0 };
	int err;

	msg_start(&m, GENL_ID_CTRL, NLM_F_REQUEST | NLM_F_ACK, CTRL_CMD_GETFAMILY, 2);
	put_attr(&m, CTRL_ATTR_FAMILY_NAME, opt_family, strlen(opt_family) + 1);
	err = request(&m, on_family, &f);
	if (err == ENOENT || (!err && !f.found)) {
		fprintf(stderr, "nl_fuzz: generic netlink family \"%s\" not found%s\n",
			opt_family, is_mfr ? " (is mfr.ko loaded?)" : "");
		return -1;
	}
	if (err) {
		fprintf(stderr, "nl_fuzz: nlctrl getfamily %s: %s\n", opt_family, strerror(err));
		return -1;
	}
	fam_id = f.id;
	events_grp = f.grp;
	return 0;
}

static void on_family_id(const struct nlmsghdr *nlh, void *ctx)
{
	uint8_t *used = ctx;
	const unsigned char *pl;
	struct attr_iter it;
	uint16_t type;
	size_t plen;
	uint64_t v;

	if (nlh->nlmsg_type != GENL_ID_CTRL || !genl_attrs(nlh, &it))
		return;
	while (attr_next(&it, &type, &pl, &plen))
		if (type == CTRL_ATTR_FAMILY_ID && attr_uint(pl, plen, &v) && v < 65536)
			used[v / 8] |= 1 << (v % 8);
}

/*
 * Ids for the wrong-nlmsg_type mutation.  Only ids no family has: random
 * requests to real families (devlink, ethtool, ...) as root could change
 * the machine.  nlctrl (read-only) and control types are used as well.
 */
static int find_unused_ids(void)
{
	static uint8_t used[65536 / 8];
	static struct msg m;
	int err;

	msg_start(&m, GENL_ID_CTRL, NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP,
		  CTRL_CMD_GETFAMILY, 2);
	err = request(&m, on_family_id, used);
	if (err) {
		fprintf(stderr, "nl_fuzz: nlctrl family dump: %s\n", strerror(err));
		return -1;
	}
	for (uint32_t id = GENL_ID_CTRL + 1; id < 0x10000 && n_unused_ids < 4; id++)
		if (!(used[id / 8] & (1 << (id % 8))))
			unused_ids[n_unused_ids++] = id;
	if (!(used[0xffff / 8] & 0x80))
		unused_ids[n_unused_ids++] = 0xffff;
	return 0;
}

/* The op table the spec promises, checked against what the kernel says. */
static const struct {
	uint8_t cmd;
	uint32_t flags;
} spec_ops[] = {
	{ MFR_CMD_STATUS_GET, GENL_CMD_CAP_DO },
	{ MFR_CMD_RULE_ADD, GENL_CMD_CAP_DO | GENL_ADMIN_PERM },
	{ MFR_CMD_RULE_DEL, GENL_CMD_CAP_DO | GENL_ADMIN_PERM },
	{ MFR_CMD_RULE_GET, GENL_CMD_CAP_DUMP | GENL_ADMIN_PERM },
	{ MFR_CMD_MEMFD_GET, GENL_CMD_CAP_DUMP | GENL_ADMIN_PERM },
	{ MFR_CMD_MEMFD_SET, GENL_CMD_CAP_DO | GENL_ADMIN_PERM },
	{ MFR_CMD_POISON_GET, GENL_CMD_CAP_DUMP | GENL_ADMIN_PERM },
	{ MFR_CMD_RULE_REPLACE, GENL_CMD_CAP_DO | GENL_ADMIN_PERM },
};

static void check_op_table(void)
{
	const uint32_t mask = GENL_CMD_CAP_DO | GENL_CMD_CAP_DUMP |
			      GENL_ADMIN_PERM | GENL_UNS_ADMIN_PERM;

	for (unsigned int cmd = 0; cmd < 256; cmd++) {
		uint32_t want = 0;

		for (size_t i = 0; i < ARRAY_SIZE(spec_ops); i++)
			if (spec_ops[i].cmd == cmd)
				want = spec_ops[i].flags;
		if ((op_flags[cmd] & mask) != want)
			fail("op table: cmd %u has flags %#x, the spec says %#x",
			     cmd, op_flags[cmd] & mask, want);
	}
}

static bool op_has(uint8_t cmd, bool dump)
{
	return op_flags[cmd] & (dump ? GENL_CMD_CAP_DUMP : GENL_CMD_CAP_DO);
}

static bool op_admin(uint8_t cmd)
{
	return op_flags[cmd] & (GENL_ADMIN_PERM | GENL_UNS_ADMIN_PERM);
}

/* Dump-only ops are asked with NLM_F_DUMP; everything else as a do. */
static bool op_dump(uint8_t cmd)
{
	return op_has(cmd, true) && !op_has(cmd, false);
}

/* ---- random attribute payloads ---- */

/* Strings for globs and cgroup paths: metacharacters and path tricks. */
static const char *const str_pool[] = {
	"", "*", "?", "[", "[!", "[a-", "[]]", "[!]*", "\\", "\\*", "**?**",
	"nl_fuzz*", "nl_fuzz-?", "memfd:*", "/", "//", "/.", "/..", "/../..",
	"/nonexistent", "/init.scope", "/sys", "%s%s%n", "\xff\xfe\x80",
};

/* Lengths around max-len 249 (name-glob) and 4095 (cgroup-path). */
static const size_t str_lens[] = {
	1, 2, 248, 249, 250, 251, 255, 256, 1024, 4094, 4095, 4096, 4097, 8191,
};

static const size_t blob_lens[] = { 0, 1, 3, 4, 7, 8, 9, 16, 255, 256, 4096 };

/*
 * A string payload of at most cap bytes: usually NUL-terminated, else
 * unterminated or with a NUL inside (NLA_NUL_STRING wants exactly one,
 * at the end).
 */
static size_t gen_string(unsigned char *out, size_t cap)
{
	static const char fill[] = "*?[]!-/.ab\\";
	size_t n;

	if (cap < 2)
		return 0;
	if (chance(50)) {
		const char *s = PICK(str_pool);

		n = strlen(s);
		memcpy(out, s, n < cap - 1 ? n : cap - 1);
	} else {
		char c = chance(50) ? 'a' : fill[below(sizeof(fill) - 1)];

		n = PICK(str_lens);
		if (n > cap - 1)
			n = cap - 1;
		for (size_t i = 0; i < n; i++)
			out[i] = chance(90) ? c : fill[below(sizeof(fill) - 1)];
	}
	if (n > cap - 1)
		n = cap - 1;
	switch (below(10)) {
	case 0:
		return n;			/* unterminated */
	case 1:
		out[below(n + 1)] = '\0';	/* NUL inside */
		out[n] = 'x';
		return n + 1;
	default:
		out[n] = '\0';
		return n + 1;
	}
}

/* Any payload: integers of each width, blobs, strings, huge strings. */
static size_t gen_payload(unsigned char *out, size_t cap)
{
	static const size_t widths[] = { 1, 2, 4, 8 };
	size_t n;

	switch (below(6)) {
	case 0: {
		uint64_t v = edge_u64();

		n = PICK(widths);
		if (n == 4) {
			uint32_t v32 = edge_u32();

			memcpy(out, &v32, 4);
		} else {
			memcpy(out, &v, n);
		}
		return n;
	}
	case 1:
		n = chance(30) ? below(64) : PICK(blob_lens);
		if (n > cap)
			n = cap;
		for (size_t i = 0; i < n; i++)
			out[i] = rnd();
		return n;
	case 2:
		return gen_string(out, cap);
	case 3:
		out[0] = '\0';			/* empty string, or nothing */
		return chance(50) ? 1 : 0;
	case 4:
		/* Huge: past every max-len, up to what nla_len can say. */
		n = chance(80) ? 4096 + below(4096) : 0xffff - NLA_HDRLEN - below(8);
		if (n > cap)
			n = cap;
		memset(out, chance(50) ? 'A' : '*', n);
		if (n && chance(50))
			out[n - 1] = '\0';
		return n;
	default: {
		uint32_t v = edge_u32();

		memcpy(out, &v, 4);
		return 4;
	}
	}
}

static int attr_max(uint8_t cmd)
{
	switch (cmd) {
	case MFR_CMD_STATUS_GET:
		return MFR_A_STATUS_MAX;
	case MFR_CMD_RULE_ADD:
	case MFR_CMD_RULE_DEL:
	case MFR_CMD_RULE_GET:
		return MFR_A_RULE_MAX;
	case MFR_CMD_POISON_GET:
		return MFR_A_POISON_MAX;
	default:
		return MFR_A_MEMFD_MAX;
	}
}

/* A random attribute type of the set, 0 and past the end included. */
static uint16_t random_type(uint8_t cmd)
{
	uint16_t type = below(attr_max(cmd) + 4);

	if (chance(8))
		type |= NLA_F_NESTED;
	if (chance(8))
		type |= NLA_F_NET_BYTEORDER;
	return type;
}

/* ---- generator 1: random bytes after valid headers ---- */

static void gen_random_bytes(struct msg *m)
{
	static const size_t lens[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 64, 255, 256, 4096 };
	size_t n = chance(50) ? PICK(lens) : below(chance(80) ? 512 : 8192);
	uint8_t fillc = rnd();
	int style = below(4);

	msg_start(m, fam_id, NLM_F_REQUEST | NLM_F_ACK | (chance(20) ? NLM_F_DUMP : 0),
		  below(21), rnd());
	for (size_t i = 0; i < n && m->len < MSG_MAX; i++)
		m->buf[m->len++] = style ? (uint8_t)rnd() : fillc;
}

/* ---- generator 2: structurally valid attribute streams ---- */

static void put_random_attr(struct msg *m, uint8_t cmd, int depth)
{
	static unsigned char pl[0x10000];
	uint16_t type = random_type(cmd);

	/* Nested garbage: attributes inside attributes, a few levels deep. */
	if (depth < 3 && chance(12)) {
		long off = nest_start(m, chance(70) ? type | NLA_F_NESTED : type);
		int n = below(5);

		if (off < 0)
			return;
		while (n--)
			put_random_attr(m, cmd, depth + 1);
		nest_end(m, off);
		return;
	}
	put_attr(m, type, pl, gen_payload(pl, sizeof(pl) - NLA_HDRLEN - 8));
}

static void dup_last_attr(struct msg *m)
{
	size_t off, len;

	if (!m->n_top)
		return;
	off = m->top[m->n_top - 1];
	len = m->len - off;
	if (len > MSG_MAX - m->len)
		return;
	if (m->n_top < MAX_TOP_ATTRS)
		m->top[m->n_top++] = m->len;
	memmove(m->buf + m->len, m->buf + off, len);
	m->len += len;
}

/* The message ends inside its last attribute: nla_len > what is left. */
static void truncate_last_attr(struct msg *m)
{
	size_t off;
	uint16_t alen;

	if (!m->n_top)
		return;
	off = m->top[m->n_top - 1];
	alen = get_nla_len(m, off);
	if (alen > 1)
		m->len = off + 1 + below(alen - 1);
}

/* nla_len points past the end of the message. */
static void overlong_last_attr(struct msg *m)
{
	size_t off, len;
	struct nlattr h;

	if (!m->n_top)
		return;
	off = m->top[m->n_top - 1];
	len = m->len - off + 1 + below(64);
	memcpy(&h, m->buf + off, sizeof(h));
	put_nla_hdr(m, off, chance(20) || len > 0xffff ? 0xffff : len, h.nla_type);
}

static const uint8_t mfr_ops[] = {
	MFR_CMD_STATUS_GET, MFR_CMD_RULE_ADD, MFR_CMD_RULE_DEL, MFR_CMD_RULE_GET,
	MFR_CMD_MEMFD_GET, MFR_CMD_MEMFD_SET, MFR_CMD_POISON_GET,
};

static void gen_attr_stream(struct msg *m)
{
	uint8_t cmd = chance(75) ? PICK(mfr_ops) : below(21);
	bool dump = op_dump(cmd) != chance(10);
	int n = below(13);

	msg_start(m, fam_id, NLM_F_REQUEST | NLM_F_ACK | (dump ? NLM_F_DUMP : 0), cmd,
		  MFR_FAMILY_VERSION);
	for (int i = 0; i < n; i++) {
		if (i && chance(15))
			dup_last_attr(m);
		else
			put_random_attr(m, cmd, 0);
	}
	switch (below(10)) {
	case 0:
		truncate_last_attr(m);
		break;
	case 1:
		overlong_last_attr(m);
		break;
	}
}

/* ---- generator 3: valid requests per operation, then mutated ---- */

struct tattr {
	uint16_t type;		/* NLA_F_* bits included */
	uint16_t len;
	uint32_t off;		/* payload in tmpl.store */
};

struct tmpl {
	uint8_t cmd;
	bool dump;
	int n;
	struct tattr a[TMPL_ATTRS];
	size_t used;
	unsigned char store[TMPL_STORE];
};

static bool t_add(struct tmpl *t, uint16_t type, const void *data, size_t len)
{
	if (t->n == TMPL_ATTRS || len > TMPL_STORE - t->used || len > 0xffff - NLA_HDRLEN)
		return false;
	memcpy(t->store + t->used, data, len);
	t->a[t->n++] = (struct tattr){ .type = type, .len = len, .off = t->used };
	t->used += len;
	return true;
}

/* New payload for attribute i (the old bytes stay unused in the store). */
static void t_set(struct tmpl *t, int i, const void *data, size_t len)
{
	if (len > TMPL_STORE - t->used)
		return;
	memcpy(t->store + t->used, data, len);
	t->a[i].off = t->used;
	t->a[i].len = len;
	t->used += len;
}

static void t_u32(struct tmpl *t, uint16_t type, uint32_t v)
{
	t_add(t, type, &v, sizeof(v));
}

/* YNL "uint": 4 or 8 bytes on the wire, both must be accepted. */
static void t_uint(struct tmpl *t, uint16_t type, uint64_t v)
{
	uint32_t v32 = v;

	if (v == v32 && chance(50))
		t_add(t, type, &v32, sizeof(v32));
	else
		t_add(t, type, &v, sizeof(v));
}

static void t_str(struct tmpl *t, uint16_t type, const char *s)
{
	t_add(t, type, s, strlen(s) + 1);
}

/* A random string (see gen_string) generated in place. */
static void t_gen_str(struct tmpl *t, uint16_t type)
{
	size_t room = TMPL_STORE - t->used, n;

	if (t->n == TMPL_ATTRS || room < 2)
		return;
	n = gen_string(t->store + t->used, room > 0xff00 ? 0xff00 : room);
	t->a[t->n++] = (struct tattr){ .type = type, .len = n, .off = t->used };
	t->used += n;
}

static void tmpl_rule_add(struct tmpl *t)
{
	unsigned int mask = below(64);	/* every combination of the six */
	char glob[32];

	if (mask & 1) {
		snprintf(glob, sizeof(glob), "nl_fuzz-%u-*", below(1000));
		if (chance(70))
			t_str(t, MFR_A_RULE_NAME_GLOB, glob);
		else
			t_gen_str(t, MFR_A_RULE_NAME_GLOB);
	}
	if (mask & 2)
		t_uint(t, MFR_A_RULE_CGROUP_ID, chance(70) ? 1 : edge_u64());
	if (mask & 4) {
		if (chance(70))
			t_str(t, MFR_A_RULE_CGROUP_PATH, "/");
		else
			t_gen_str(t, MFR_A_RULE_CGROUP_PATH);
	}
	if (mask & 8)
		t_u32(t, MFR_A_RULE_UID, chance(50) ? NOBODY : edge_u32());
	if (mask & 16)
		t_u32(t, MFR_A_RULE_ACTION, chance(70) ? below(2) : edge_u32());
	if (mask & 32)
		t_u32(t, MFR_A_RULE_BUDGET, chance(70) ? below(1048577) : edge_u32());
}

static void tmpl_rule_del(struct tmpl *t)
{
	uint32_t id;

	if (live.n && chance(60))
		id = live.v[below(live.n)];
	else
		id = edge_u32();
	t_u32(t, MFR_A_RULE_ID, id);
}

static void tmpl_memfd_set(struct tmpl *t)
{
	unsigned int mask = chance(60) ? 15 : below(16);
	uint32_t fd;

	if (mask & 1)
		t_u32(t, MFR_A_MEMFD_PID, chance(60) ? (uint32_t)self_pid : edge_u32());
	if (mask & 2) {
		if (huge_fd >= 0 && chance(40))
			fd = huge_fd;
		else if (chance(60))
			fd = below(11);
		else
			fd = edge_u32();
		t_u32(t, MFR_A_MEMFD_FD, fd);
	}
	if (mask & 4)
		t_u32(t, MFR_A_MEMFD_POLICY, chance(80) ? below(2) : edge_u32());
	if (mask & 8)
		t_u32(t, MFR_A_MEMFD_BUDGET, chance(60) ? below(1048577) : edge_u32());
}

/* Returns true if the template must go out unmutated. */
static bool tmpl_build(struct tmpl *t)
{
	t->n = 0;
	t->used = 0;
	/* Too many rules of ours: delete one, cleanly, to keep dumps short. */
	if (live.n >= LIVE_RULES_MAX) {
		t->cmd = MFR_CMD_RULE_DEL;
		t->dump = false;
		t_u32(t, MFR_A_RULE_ID, live.v[below(live.n)]);
		return true;
	}
	t->cmd = PICK(mfr_ops);
	switch (t->cmd) {
	case MFR_CMD_RULE_ADD:
		tmpl_rule_add(t);
		break;
	case MFR_CMD_RULE_DEL:
		tmpl_rule_del(t);
		break;
	case MFR_CMD_MEMFD_SET:
		tmpl_memfd_set(t);
		break;
	}
	t->dump = t->cmd == MFR_CMD_RULE_GET || t->cmd == MFR_CMD_MEMFD_GET ||
		  t->cmd == MFR_CMD_POISON_GET;
	return false;
}

static void tmpl_mutate(struct tmpl *t)
{
	static const size_t lens[] = { 0, 1, 2, 3, 5, 7, 8, 9, 16 };
	static unsigned char pl[8192];
	int i = t->n ? (int)below(t->n) : -1;
	unsigned int what = below(8);
	uint32_t v;
	size_t n;

	if (i < 0)
		what = 6;
	switch (what) {
	case 0:				/* drop */
		t->a[i] = t->a[--t->n];
		break;
	case 1:				/* duplicate, maybe with another value */
		if (t->n < TMPL_ATTRS) {
			t->a[t->n++] = t->a[i];
			if (chance(50)) {
				v = edge_u32();
				t_set(t, t->n - 1, &v, 4);
			}
		}
		break;
	case 2:				/* out-of-range value */
		if (chance(50)) {
			v = edge_u32();
			t_set(t, i, &v, 4);
		} else {
			uint64_t v64 = edge_u64();

			t_set(t, i, &v64, 8);
		}
		break;
	case 3:				/* another type */
		t->a[i].type = random_type(t->cmd);
		break;
	case 4:				/* another length */
		n = PICK(lens);
		memcpy(pl, t->store + t->a[i].off, t->a[i].len < n ? t->a[i].len : n);
		for (size_t j = t->a[i].len; j < n; j++)
			pl[j] = rnd();
		t_set(t, i, pl, n);
		break;
	case 5:				/* flag bits */
		t->a[i].type |= chance(50) ? NLA_F_NESTED : NLA_F_NET_BYTEORDER;
		break;
	case 6:				/* an extra attribute */
		n = gen_payload(pl, sizeof(pl));
		t_add(t, random_type(t->cmd), pl, n);
		break;
	case 7:				/* wrong kind: u32 <-> string */
		if (t->a[i].len == 4 || t->a[i].len == 8)
			t_set(t, i, pl, gen_string(pl, sizeof(pl)));
		else {
			v = edge_u32();
			t_set(t, i, &v, 4);
		}
		break;
	}
}

/* Bit flips and damaged lengths in the serialized message. */
static void mutate_bytes(struct msg *m)
{
	int k = 1 + below(4);

	while (k--) {
		size_t pos, off;

		switch (below(4)) {
		case 0:
		case 1:
			/* Mostly the attributes; sometimes cmd/version/reserved. */
			if (m->len > GENL_MIN_LEN && chance(90))
				pos = GENL_MIN_LEN + below(m->len - GENL_MIN_LEN);
			else
				pos = NLMSG_HDRLEN + below(GENL_HDRLEN);
			m->buf[pos] ^= 1 << below(8);
			break;
		case 2:
			if (!m->n_top)
				break;
			off = m->top[below(m->n_top)];
			if (off + NLA_HDRLEN <= m->len) {
				static const uint16_t lens[] = { 0, 1, 3, 4, 5, 8, 0xffff };
				uint16_t len = get_nla_len(m, off);
				struct nlattr h;

				memcpy(&h, m->buf + off, sizeof(h));
				len = chance(50) ? PICK(lens) : len + (chance(50) ? 1 : -1);
				put_nla_hdr(m, off, len, h.nla_type);
			}
			break;
		case 3:
			if (m->len > GENL_MIN_LEN)
				m->len -= 1 + below(m->len - GENL_MIN_LEN < 8 ?
						    m->len - GENL_MIN_LEN : 8);
			break;
		}
	}
}

static void gen_template(struct msg *m)
{
	static struct tmpl t;
	bool clean = tmpl_build(&t);
	int k = clean || chance(40) ? 0 : 1 + below(3);

	while (k--)
		tmpl_mutate(&t);
	msg_start(m, fam_id, NLM_F_REQUEST | NLM_F_ACK | (t.dump ? NLM_F_DUMP : 0), t.cmd,
		  MFR_FAMILY_VERSION);
	for (int i = 0; i < t.n; i++)
		put_attr(m, t.a[i].type, t.store + t.a[i].off, t.a[i].len);
	if (!clean && chance(20))
		mutate_bytes(m);
}

/* ---- header damage, on top of any generator ---- */

static uint16_t wrong_type(void)
{
	switch (below(3)) {
	case 0:
		return below(NLMSG_MIN_TYPE);		/* control messages */
	case 1:
		if (fam_id != GENL_ID_CTRL)
			return GENL_ID_CTRL;		/* nlctrl: read-only */
		/* fall through */
	default:
		return n_unused_ids ? unused_ids[below(n_unused_ids)] : 0;
	}
}

static void mutate_header(struct msg *m)
{
	struct nlmsghdr *h = nlh_of(m);
	size_t lo;

	switch (below(8)) {
	case 0:
		h->nlmsg_flags = (uint16_t)rnd();
		break;
	case 1:		/* dump on a do op, do on a dump op */
		if ((h->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP)
			h->nlmsg_flags &= ~NLM_F_DUMP;
		else
			h->nlmsg_flags |= NLM_F_DUMP;
		break;
	case 2:
		h->nlmsg_type = wrong_type();
		break;
	case 3:		/* shorter than a header: the kernel drops it */
		h->nlmsg_len = below(NLMSG_HDRLEN);
		break;
	case 4:		/* longer than sent: dropped too */
		h->nlmsg_len = chance(20) ? 0xffffffffu : m->len + 1 + below(4096);
		break;
	case 5:
		/*
		 * Shorter than sent, by less than a header: the kernel reads
		 * a shorter message and nothing after it (a longer leftover
		 * would be parsed as a second message of random bytes).
		 */
		lo = m->len > NLMSG_HDRLEN + 15 ? m->len - 15 : NLMSG_HDRLEN;
		if (m->len > lo)
			h->nlmsg_len = lo + below(m->len - lo);
		break;
	case 6:
		genl_of(m)->reserved = 1 + below(0xffff);
		break;
	case 7:
		h->nlmsg_pid = rnd();
		break;
	}
}

/* ---- what the kernel makes of a message ---- */

struct view {
	bool answer;		/* nlmsg_len is sane: the kernel will answer */
	bool family;		/* it goes to the fuzzed family */
	bool genl;		/* it holds a whole genlmsghdr */
	bool clean_hdr;		/* genl_header_check() passes */
	bool dump;
	uint8_t cmd;
	uint32_t len;		/* bytes the kernel parses */
};

static struct view classify(const struct msg *m)
{
	const struct nlmsghdr *h = (const void *)m->buf;
	const struct genlmsghdr *g = (const void *)(m->buf + NLMSG_HDRLEN);
	uint16_t flags = h->nlmsg_flags;
	struct view v = { 0 };

	v.answer = h->nlmsg_len >= NLMSG_HDRLEN && h->nlmsg_len <= m->len;
	v.family = h->nlmsg_type == fam_id;
	v.len = h->nlmsg_len;
	v.genl = v.len >= GENL_MIN_LEN;
	v.cmd = g->cmd;
	v.dump = (flags & NLM_F_DUMP) == NLM_F_DUMP;
	if (v.dump)
		flags &= ~NLM_F_DUMP;
	v.clean_hdr = v.genl && !g->reserved && !(flags & ~ALL_FLAGS_OK);
	return v;
}

/* Values of every u32 attribute of that type (the kernel keeps the last). */
static bool last_u32(const struct msg *m, size_t len, uint16_t want, uint32_t *v)
{
	const unsigned char *pl;
	struct attr_iter it;
	bool found = false;
	uint16_t type;
	size_t plen;

	attr_iter_init(&it, m->buf + GENL_MIN_LEN, len - GENL_MIN_LEN);
	while (attr_next(&it, &type, &pl, &plen))
		if (type == want && plen >= 4) {
			memcpy(v, pl, 4);
			found = true;
		}
	return found;
}

/* Would this rule-del hit a rule that existed before we started? */
static bool hits_preexisting(const struct msg *m)
{
	struct view v = classify(m);
	const unsigned char *pl;
	struct attr_iter it;
	uint16_t type;
	size_t plen;
	uint32_t id;

	/*
	 * rule-replace from root: one that succeeds replaces every rule, the
	 * suite's included, and its generation step is not one the accounting
	 * can attribute.  Its input is checked by t-rule-replace; here root
	 * never sends it (nobody does, and gets EPERM).
	 */
	if (!opt_unpriv && v.family && v.genl && v.cmd == MFR_CMD_RULE_REPLACE)
		return true;
	if (!preexisting.n || !v.family || !v.genl || v.cmd != MFR_CMD_RULE_DEL)
		return false;
	attr_iter_init(&it, m->buf + GENL_MIN_LEN, m->len - GENL_MIN_LEN);
	while (attr_next(&it, &type, &pl, &plen)) {
		if (type != MFR_A_RULE_ID || plen < 4)
			continue;
		memcpy(&id, pl, 4);
		if (idset_has(&preexisting, id) ||
		    idset_has(&preexisting, __builtin_bswap32(id)))
			return true;
	}
	return false;
}

/* ---- one fuzz message ---- */

struct fuzz_ctx {
	const struct view *v;
	bool has_rule_id;
	uint32_t rule_id;
};

static void on_fuzz_reply(const struct nlmsghdr *nlh, void *ctx)
{
	struct fuzz_ctx *c = ctx;
	uint64_t id;

	st.replies++;
	if (c->v->family && c->v->cmd == MFR_CMD_RULE_ADD &&
	    reply_uint(nlh, MFR_A_RULE_ID, &id) && id <= UINT32_MAX) {
		c->has_rule_id = true;
		c->rule_id = id;
	}
}

static bool is_write(uint8_t cmd)
{
	return cmd == MFR_CMD_RULE_ADD || cmd == MFR_CMD_RULE_DEL || cmd == MFR_CMD_MEMFD_SET;
}

static const char *errname(int err)
{
	const char *s = err ? strerrorname_np(err) : "OK";

	return s ? s : "?";
}

static void account(const struct msg *m, const struct view *v, const struct answer *a,
		    const struct fuzz_ctx *c)
{
	bool ok = !a->error;
	uint32_t id;

	if (!v->family)
		return;
	if (ok && !v->dump && is_write(v->cmd)) {
		st.accepted++;
		if (v->cmd == MFR_CMD_RULE_ADD) {
			st.acc_rule_add++;
			if (!c->has_rule_id) {
				fail("rule-add (seq %u) succeeded without MFR_A_RULE_ID",
				     ((const struct nlmsghdr *)m->buf)->nlmsg_seq);
			} else {
				idset_add(&created, c->rule_id);
				idset_add(&live, c->rule_id);
			}
		} else if (v->cmd == MFR_CMD_RULE_DEL) {
			st.acc_rule_del++;
			if (last_u32(m, v->len, MFR_A_RULE_ID, &id))
				idset_del(&live, id);
		} else {
			st.acc_memfd_set++;
		}
	}
	if (!opt_unpriv)
		return;

	/*
	 * Unprivileged: nothing but status-get may succeed.  A known admin op
	 * with a clean header must be refused with EPERM; unknown cmds and
	 * damaged headers fail earlier in the genetlink core (EOPNOTSUPP,
	 * EINVAL), before any permission check, and are only required to fail.
	 */
	if ((ok || a->replies) && !(v->cmd == MFR_CMD_STATUS_GET && !v->dump && v->genl))
		fail("unprivileged cmd %u (%s) accepted: %s, %u replies", v->cmd,
		     v->dump ? "dump" : "do", errname(a->error), a->replies);
	if (v->clean_hdr && op_has(v->cmd, v->dump) && op_admin(v->cmd) && a->error != EPERM)
		fail("unprivileged cmd %u (%s): %s, want EPERM", v->cmd,
		     v->dump ? "dump" : "do", errname(a->error));
}

static void fuzz_one(void)
{
	static struct msg m;
	struct fuzz_ctx c = { 0 };
	struct answer a;
	struct view v;
	unsigned int g;
	uint32_t seq;
	int tries = 0, err;

	do {
		g = below(100);
		g = g < 15 ? 0 : g < 40 ? 1 : 2;
		st.gen[g]++;
		if (g == 0)
			gen_random_bytes(&m);
		else if (g == 1)
			gen_attr_stream(&m);
		else
			gen_template(&m);
		msg_finish(&m);
		if (chance(15))
			mutate_header(&m);
	} while (hits_preexisting(&m) && ++tries < 100);
	seq = msg_stamp(&m);
	v = classify(&m);
	c.v = &v;

	err = msg_send(&m);
	if (err) {
		st.send_errors++;
		fail("send (seq %u, %zu bytes): %s", seq, m.len, strerror(-err));
		return;
	}
	st.sent++;
	if (!v.answer) {
		/* netlink_rcv_skb() silently drops a bad nlmsg_len. */
		st.dropped++;
		return;
	}
	if (await_answer(seq, on_fuzz_reply, &c, &a)) {
		st.unanswered++;
		fail("no answer within %ds to seq %u (type %u cmd %u flags %#x len %u)",
		     ANSWER_TIMEOUT_S, seq, nlh_of(&m)->nlmsg_type, v.cmd,
		     nlh_of(&m)->nlmsg_flags, v.len);
		return;
	}
	st.answered++;
	st.err[a.error]++;
	if (a.intr)
		st.dumps_intr++;
	account(&m, &v, &a, &c);
}

/* ---- periodic: events join, status probe ---- */

static void try_join_events(void)
{
	int fd, grp = events_grp;

	if (!events_grp)
		return;
	/* A fresh socket: notifications must not mix with the answers. */
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0) {
		fail("socket: %s", strerror(errno));
		return;
	}
	if (!setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp))) {
		st.join_ok++;
		if (opt_unpriv)
			fail("unprivileged join of \"%s\" succeeded", opt_group);
	} else if (errno == EPERM) {
		st.join_eperm++;
		if (!opt_unpriv && !geteuid())
			fail("root could not join \"%s\": EPERM", opt_group);
	} else {
		st.join_other++;
		fail("join of \"%s\": %s", opt_group, strerror(errno));
	}
	close(fd);
}

struct status {
	uint64_t generation;
	uint64_t rules;
};

static void on_status(const struct nlmsghdr *nlh, void *ctx)
{
	struct status *s = ctx;

	if (!reply_uint(nlh, MFR_A_STATUS_GENERATION, &s->generation))
		s->generation = 0;
	if (!reply_uint(nlh, MFR_A_STATUS_RULES, &s->rules))
		s->rules = UINT64_MAX;
}

/* A clean status-get: the module must still answer it, with a generation. */
static bool status_probe(struct status *s)
{
	static struct msg m;
	int err;

	if (!is_mfr)
		return false;
	s->generation = 0;
	msg_start(&m, fam_id, NLM_F_REQUEST | NLM_F_ACK, MFR_CMD_STATUS_GET,
		  MFR_FAMILY_VERSION);
	err = request(&m, on_status, s);
	if (err || !s->generation) {
		st.probes_bad++;
		fail("status-get after %llu messages: %s%s", st.sent, errname(err),
		     err ? "" : " (no generation)");
		return false;
	}
	st.probes_ok++;
	return true;
}

/* ---- setup and cleanup ---- */

static unsigned long long cap_eff(void)
{
	unsigned long long caps = ~0ULL;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return caps;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &caps) == 1)
			break;
	fclose(f);
	return caps;
}

static int drop_privileges(void)
{
	if (!getuid() || !geteuid()) {
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY)) {
			fprintf(stderr, "nl_fuzz: dropping to uid %d: %s\n", NOBODY,
				strerror(errno));
			return -1;
		}
	}
	/* The kernel checks capabilities, not uids. */
	if (cap_eff()) {
		fprintf(stderr, "nl_fuzz: --unprivileged but capabilities %#llx are left\n",
			cap_eff());
		return -1;
	}
	return 0;
}

/*
 * A HugeTLB memfd among fds 0..10, so memfd-set on our own pid reaches the
 * module's checks and its success path, not only EBADF; and a shmem memfd
 * it must refuse.  Created before the fuzzer adds rules, and only if no
 * rule exists: a rule could keep it, a state change
 * outside the generation accounting.  rules is UINT64_MAX if unknown.
 */
static void open_memfds(uint64_t rules)
{
	struct stat sb;

	if (rules) {
		printf("nl_fuzz: %s rules installed: no HugeTLB memfd of our own\n",
		       rules == UINT64_MAX ? "maybe" : "some");
		return;
	}
	huge_fd = memfd_create("nl_fuzz", MFD_HUGETLB);
	if (huge_fd >= 0 && !fstat(huge_fd, &sb))
		huge_ino = sb.st_ino;
	plain_fd = memfd_create("nl_fuzz_plain", 0);
}

static void on_rule_id(const struct nlmsghdr *nlh, void *ctx)
{
	uint64_t id;

	if (reply_uint(nlh, MFR_A_RULE_ID, &id) && id <= UINT32_MAX)
		idset_add(ctx, id);
}

static int dump_rules(struct idset *ids)
{
	static struct msg m;

	ids->n = 0;
	msg_start(&m, fam_id, NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP, MFR_CMD_RULE_GET,
		  MFR_FAMILY_VERSION);
	return request(&m, on_rule_id, ids);
}

static int rule_del(uint32_t id)
{
	static struct msg m;

	msg_start(&m, fam_id, NLM_F_REQUEST | NLM_F_ACK, MFR_CMD_RULE_DEL, MFR_FAMILY_VERSION);
	put_u32(&m, MFR_A_RULE_ID, id);
	return request(&m, NULL, NULL);
}

/* Delete the rules we created that still exist; check the others survived. */
static void cleanup_rules(void)
{
	struct idset present = { 0 };
	int err;

	err = dump_rules(&present);
	if (err) {
		fail("cleanup: rule-get dump: %s", errname(err));
		return;
	}
	for (size_t i = 0; i < created.n; i++) {
		uint32_t id = created.v[i];

		if (!idset_has(&present, id) || idset_has(&preexisting, id))
			continue;
		idset_del(&present, id);	/* an id created twice: one del */
		err = rule_del(id);
		if (err)
			fail("cleanup: rule-del %u: %s", id, errname(err));
		else
			st.cleanup_dels++;
	}
	for (size_t i = 0; i < preexisting.n; i++)
		if (!idset_has(&present, preexisting.v[i]))
			fail("rule %u existed before the run and is gone", preexisting.v[i]);
	free(present.v);
}

struct memfd_ctx {
	bool kept;
};

/*
 * Our memfd is known by its inode alone: a record's pid is the owner that
 * memfd-set named, and the fuzzer names random pids (pid 1, a parent...)
 * for its own fd.  HugeTLB inode numbers are unique among live inodes.
 */
static void on_memfd(const struct nlmsghdr *nlh, void *ctx)
{
	struct memfd_ctx *c = ctx;
	uint64_t ino;

	if (reply_uint(nlh, MFR_A_MEMFD_INODE, &ino) && ino == huge_ino)
		c->kept = true;
}

/* If a memfd-set left our memfd kept, set it back to the default policy. */
static void cleanup_memfd(void)
{
	static struct msg m;
	struct memfd_ctx c = { 0 };
	int err;

	msg_start(&m, fam_id, NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP, MFR_CMD_MEMFD_GET,
		  MFR_FAMILY_VERSION);
	err = request(&m, on_memfd, &c);
	if (err) {
		fail("cleanup: memfd-get dump: %s", errname(err));
		return;
	}
	if (!c.kept)
		return;
	msg_start(&m, fam_id, NLM_F_REQUEST | NLM_F_ACK, MFR_CMD_MEMFD_SET, MFR_FAMILY_VERSION);
	put_u32(&m, MFR_A_MEMFD_PID, self_pid);
	put_u32(&m, MFR_A_MEMFD_FD, huge_fd);
	put_u32(&m, MFR_A_MEMFD_POLICY, MFR_POLICY_DEFAULT);
	err = request(&m, NULL, NULL);
	if (err)
		fail("cleanup: memfd-set default: %s", errname(err));
	else
		st.cleanup_sets++;
}

/* ---- report ---- */

/* Ids as ranges: "3-9,12". */
static void print_ids(const char *key, const struct idset *s)
{
	printf("%s=", key);
	for (size_t i = 0; i < s->n; i++) {
		size_t j = i;

		while (j + 1 < s->n && s->v[j + 1] == s->v[j] + 1)
			j++;
		printf("%s%u", i ? "," : "", s->v[i]);
		if (j > i)
			printf("-%u", s->v[j]);
		i = j;
	}
	printf("\n");
}

static void report(double elapsed)
{
	printf("seed=%llu\n", opt_seed);
	printf("mode=%s\n", opt_unpriv ? "unprivileged" : "privileged");
	printf("family=%s\nfamily_id=%u\n", opt_family, fam_id);
	printf("sent=%llu\nanswered=%llu\n", st.sent, st.answered);
	printf("dropped_bad_nlmsg_len=%llu\nunanswered=%llu\n", st.dropped, st.unanswered);
	printf("stray=%llu\nreplies=%llu\ndumps_interrupted=%llu\nextack_msgs=%llu\n",
	       st.stray, st.replies, st.dumps_intr, st.extack);
	printf("gen_random_bytes=%llu\ngen_attr_stream=%llu\ngen_template=%llu\n",
	       st.gen[0], st.gen[1], st.gen[2]);
	for (int e = 0; e < 4096; e++)
		if (st.err[e])
			printf("errno_%s=%llu\n", errname(e), st.err[e]);
	printf("accepted_changes=%llu\n", st.accepted);
	printf("accepted_rule_add=%llu\naccepted_rule_del=%llu\naccepted_memfd_set=%llu\n",
	       st.acc_rule_add, st.acc_rule_del, st.acc_memfd_set);
	print_ids("rule_ids", &created);
	printf("events_join_ok=%llu\nevents_join_eperm=%llu\nevents_join_other=%llu\n",
	       st.join_ok, st.join_eperm, st.join_other);
	printf("status_probes_ok=%llu\nstatus_probes_failed=%llu\n", st.probes_ok, st.probes_bad);
	printf("cleanup_dels=%llu\ncleanup_sets=%llu\n", st.cleanup_dels, st.cleanup_sets);
	if (have_gen_start)
		printf("generation_start=%llu\nrules_start=%llu\n",
		       (unsigned long long)gen_start, (unsigned long long)rules_start);
	if (have_gen_end)
		printf("generation_end=%llu\n", (unsigned long long)gen_end);
	printf("elapsed_s=%.1f\n", elapsed);
	printf("failures=%llu\n", st.violations);
	printf("result=%s\n", st.violations ? "FAIL" : "PASS");
}

static void usage(void)
{
	fprintf(stderr, "usage: nl_fuzz [--count N] [--seed S] [--unprivileged] "
			"[--family NAME] [--group NAME]\n");
	exit(2);
}

static unsigned long long parse_num(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || !*s || *end || *s == '-')
		usage();
	return v;
}

static void parse_args(int argc, char **argv)
{
	bool seeded = false;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--unprivileged")) {
			opt_unpriv = true;
		} else if (i + 1 < argc && !strcmp(a, "--count")) {
			opt_count = parse_num(argv[++i]);
		} else if (i + 1 < argc && !strcmp(a, "--seed")) {
			opt_seed = parse_num(argv[++i]);
			seeded = true;
		} else if (i + 1 < argc && !strcmp(a, "--family")) {
			opt_family = argv[++i];
		} else if (i + 1 < argc && !strcmp(a, "--group")) {
			opt_group = argv[++i];
		} else {
			usage();
		}
	}
	if (!seeded) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		opt_seed = (unsigned long long)ts.tv_sec * 1000003ULL ^ ts.tv_nsec ^ getpid();
	}
	is_mfr = !strcmp(opt_family, MFR_FAMILY_NAME);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double start;
	int err;

	parse_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("seed=%llu\n", opt_seed);
	rnd_seed(opt_seed);

	/* Before any socket: the kernel checks the opener's creds too. */
	if (opt_unpriv && drop_privileges())
		return 2;
	self_pid = getpid();
	nl_fd = nl_open();
	if (nl_fd < 0) {
		fprintf(stderr, "nl_fuzz: netlink socket: %s\n", strerror(errno));
		return 2;
	}
	if (resolve_family() || find_unused_ids())
		return 2;
	if (!events_grp)
		fail("family \"%s\" has no \"%s\" multicast group", opt_family, opt_group);
	if (is_mfr)
		check_op_table();

	if (!opt_unpriv) {
		/* Rules from before the run are ours to keep, not to delete. */
		err = dump_rules(&preexisting);
		if (err && is_mfr) {
			fprintf(stderr, "nl_fuzz: rule-get dump: %s\n", errname(err));
			return 2;
		}
		if (err)
			preexisting.n = 0;
		print_ids("preexisting_rules", &preexisting);
	}
	if (is_mfr) {
		struct status s;

		have_gen_start = status_probe(&s);
		gen_start = s.generation;
		rules_start = have_gen_start ? s.rules : UINT64_MAX;
	} else {
		rules_start = 0;
	}
	open_memfds(rules_start);
	printf("nl_fuzz: family %s id %u, group %s id %u, hugetlb memfd fd %d, shmem memfd fd %d\n",
	       opt_family, fam_id, opt_group, events_grp, huge_fd, plain_fd);

	start = now();
	for (unsigned long long i = 0; i < opt_count; i++) {
		if (i % PERIOD == 0) {
			struct status s;

			try_join_events();
			if (i)
				status_probe(&s);
		}
		fuzz_one();
	}

	if (!opt_unpriv && is_mfr) {
		cleanup_rules();
		if (st.acc_memfd_set && huge_fd >= 0)
			cleanup_memfd();
	} else if (opt_unpriv && created.n) {
		fail("unprivileged run created rules it cannot delete");
	}
	if (is_mfr) {
		struct status s;

		have_gen_end = status_probe(&s);
		gen_end = s.generation;
	}
	report(now() - start);
	return st.violations ? 1 : 0;
}
