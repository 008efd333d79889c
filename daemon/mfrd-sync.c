// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Keeping the store equal to what mfr.ko reports: each notification is
 * recorded (and then logged), and the memfd-get and poison-get dumps are
 * replayed into the store at start, after a module (re)load, after lost
 * events (ENOBUFS) and after a generation gap.  Upserts keyed on (boot,
 * pfn) make a replay harmless, so the store never holds a page twice.
 *
 * Which events are already in the store, and when a batch calls for a
 * reconcile, follows the module's generations: mfrd-generations.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mfrd.h"
#include "mfrd-clock.h"
#include "mfrd-log.h"
#include "output.h"
#include "mfrd-grow.h"

/*
 * Events read in one transaction: one fsync for a burst.  Bounded in time
 * too: during a storm the socket never runs dry, and a batch that went on
 * would starve the watchdog (systemd killed mfrd so in the e2e storm) and
 * hold the journal entries back.
 */
#define BATCH_MAX	512
#define BATCH_USEC	(250 * 1000)

/* ---- memfd cache: the owner data poison events lack ---- */

static struct mfrd_memfd *memfd_find(struct mfrd *d, uint64_t inode)
{
	for (size_t i = 0; i < d->nmemfds; i++)
		if (d->memfds[i].inode == inode)
			return &d->memfds[i];
	return NULL;
}

static void memfd_free(struct mfrd_memfd *m)
{
	free(m->name);
	free(m->comm);
	free(m->cgroup_path);
}

static char *dup_attr(const struct nlattr *nla)
{
	char *s;

	if (!nla)
		return NULL;
	s = strdup(nla_get_string(nla));
	if (!s)
		abort();
	return s;
}

/* Add or refresh the memfd of a memfd-get record or memfd event. */
static void memfd_put(struct mfrd *d, struct nlattr **tb)
{
	struct mfrd_memfd *m, *v;
	uint64_t inode;

	if (!tb[MFR_A_MEMFD_INODE])
		return;
	inode = mfr_genl_get_uint(tb[MFR_A_MEMFD_INODE]);
	m = memfd_find(d, inode);
	if (!m) {
		v = mfrd_grow(d->memfds, &d->memfds_cap, d->nmemfds, sizeof(*v));
		if (!v)
			abort();
		d->memfds = v;
		m = &v[d->nmemfds++];
	} else {
		memfd_free(m);
	}
	*m = (struct mfrd_memfd){
		.inode = inode,
		.name = dup_attr(tb[MFR_A_MEMFD_NAME]),
		.comm = dup_attr(tb[MFR_A_MEMFD_COMM]),
		.cgroup_path = dup_attr(tb[MFR_A_MEMFD_CGROUP_PATH]),
		.pid = tb[MFR_A_MEMFD_PID] ?
		       nla_get_u32(tb[MFR_A_MEMFD_PID]) : 0,
		.has_cgroup_id = tb[MFR_A_MEMFD_CGROUP_ID] != NULL,
		.cgroup_id = tb[MFR_A_MEMFD_CGROUP_ID] ?
			mfr_genl_get_uint(tb[MFR_A_MEMFD_CGROUP_ID]) : 0,
	};
}

static void memfd_forget(struct mfrd *d, uint64_t inode)
{
	struct mfrd_memfd *m = memfd_find(d, inode);

	if (!m)
		return;
	memfd_free(m);
	*m = d->memfds[--d->nmemfds];
}

void mfrd_memfds_clear(struct mfrd *d)
{
	for (size_t i = 0; i < d->nmemfds; i++)
		memfd_free(&d->memfds[i]);
	free(d->memfds);
	d->memfds = NULL;
	d->nmemfds = d->memfds_cap = 0;
}

static int memfd_cb(uint8_t cmd, const struct mfr_attr_set *set,
		    struct nlattr **tb, void *arg)
{
	(void)cmd;
	(void)set;
	memfd_put(arg, tb);
	return 0;
}

/* Dump memfd-get into the cache (merging: evicted memfds stay known). */
static int memfds_dump(struct mfrd *d)
{
	int ret = mfr_genl_dump(d->req, MFR_CMD_MEMFD_GET, memfd_cb, d);
	char *why;

	if (ret) {
		why = mfrd_genl_error_text(d->req, ret);
		mfrd_logf(LOG_ERR, NULL, "memfd-get dump failed: %s", why);
		free(why);
	}
	return ret;
}

/* ---- journal entries ---- */

/* Journal field of each attribute; pfns and offsets in hex. */
static const char *const poison_fields[MFR_A_POISON_MAX + 1] = {
	[MFR_A_POISON_PFN] = "MFR_PFN",
	[MFR_A_POISON_HEAD_PFN] = "MFR_HEAD_PFN",
	[MFR_A_POISON_FOLIO_SIZE] = "MFR_FOLIO_SIZE",
	[MFR_A_POISON_INODE] = "MFR_INODE",
	[MFR_A_POISON_OFFSET] = "MFR_OFFSET",
	[MFR_A_POISON_STATE] = "MFR_STATE",
	[MFR_A_POISON_TIMES_CONSUMED] = "MFR_TIMES_CONSUMED",
	/* page-consumed: the task signalled, not the memfd's owner */
	[MFR_A_POISON_PID] = "MFR_SIGNALLED_PID",
	[MFR_A_POISON_COMM] = "MFR_SIGNALLED_COMM",
	[MFR_A_POISON_SIGNAL_CODE] = "MFR_SIGNAL",
	[MFR_A_POISON_BUDGET] = "MFR_BUDGET",
	[MFR_A_POISON_RAW_PAGES_ISOLATED] = "MFR_ISOLATED",
	[MFR_A_POISON_HEALTHY_PAGES_RETURNED] = "MFR_RETURNED",
	[MFR_A_POISON_GENERATION] = "MFR_GENERATION",
};

static const char *const memfd_fields[MFR_A_MEMFD_MAX + 1] = {
	[MFR_A_MEMFD_INODE] = "MFR_INODE",
	[MFR_A_MEMFD_NAME] = "MFR_MEMFD",
	[MFR_A_MEMFD_PID] = "MFR_PID",
	[MFR_A_MEMFD_COMM] = "MFR_COMM",
	[MFR_A_MEMFD_CGROUP_ID] = "MFR_CGROUP_ID",
	[MFR_A_MEMFD_CGROUP_PATH] = "MFR_CGROUP",
	[MFR_A_MEMFD_SIZE] = "MFR_SIZE",
	[MFR_A_MEMFD_HUGEPAGE_SIZE] = "MFR_HUGEPAGE_SIZE",
	[MFR_A_MEMFD_POLICY] = "MFR_POLICY",
	[MFR_A_MEMFD_BUDGET] = "MFR_BUDGET",
	[MFR_A_MEMFD_RAW_PAGES_POISONED] = "MFR_POISONED",
	[MFR_A_MEMFD_STATE] = "MFR_STATE",
	[MFR_A_MEMFD_RULE_ID] = "MFR_RULE",
	[MFR_A_MEMFD_GENERATION] = "MFR_GENERATION",
};

static bool is_hex(const struct mfr_attr_set *set, unsigned int attr)
{
	return set == &mfr_attr_sets[MFR_SET_POISON] &&
	       (attr == MFR_A_POISON_PFN || attr == MFR_A_POISON_HEAD_PFN ||
		attr == MFR_A_POISON_OFFSET);
}

/* Every attribute as a field: enums by name, strings escaped. */
static void add_attr_fields(struct mfrd_log *l, const struct mfr_attr_set *set,
			    struct nlattr **tb, const char *const *fields)
{
	const char *name;
	unsigned int i;
	uint64_t v;
	char *s;

	for (i = 1; i <= set->max; i++) {
		if (!tb[i] || !fields[i])
			continue;
		if (set->attrs[i].type == MFR_ATTR_STRING) {
			s = attr_text(set, i, tb[i], false);
			mfrd_log_field(l, fields[i], "%s", s ?: "");
			free(s);
			continue;
		}
		v = mfr_genl_get_uint(tb[i]);
		name = set->attrs[i].values ?
		       mfr_enum_name(set->attrs[i].values, v) : NULL;
		if (name)
			mfrd_log_field(l, fields[i], "%s", name);
		else if (is_hex(set, i))
			mfrd_log_field(l, fields[i], "0x%" PRIx64, v);
		else
			mfrd_log_field(l, fields[i], "%" PRIu64, v);
	}
}

static void add_owner_fields(struct mfrd_log *l, const struct mfrd_memfd *m)
{
	if (!m)
		return;
	if (m->name)
		mfrd_log_field(l, "MFR_MEMFD", "%s", m->name);
	if (m->pid)
		mfrd_log_field(l, "MFR_PID", "%u", m->pid);
	if (m->comm)
		mfrd_log_field(l, "MFR_COMM", "%s", m->comm);
	if (m->cgroup_path)
		mfrd_log_field(l, "MFR_CGROUP", "%s", m->cgroup_path);
	if (m->has_cgroup_id)
		mfrd_log_field(l, "MFR_CGROUP_ID", "%" PRIu64, m->cgroup_id);
}

/* "guest-ram (pid 123 qemu)", or "inode 1043" when the owner is unknown. */
static char *owner_text(const struct mfrd_memfd *m, uint64_t inode)
{
	char *s;
	int r;

	if (!m || !m->name)
		r = asprintf(&s, "inode %" PRIu64, inode);
	else if (m->pid)
		r = asprintf(&s, "%s (pid %u %s)", m->name, m->pid,
			     m->comm ?: "?");
	else
		r = asprintf(&s, "%s", m->name);
	if (r < 0)
		abort();
	return s;
}

/* An attribute for people ("0x1234", "2M", "keep"); "?" if absent. */
struct texts {
	char *v[MFR_SPEC_MAX_ATTR + 1];
};

static const char *txt(struct texts *t, const struct mfr_attr_set *set,
		       struct nlattr **tb, unsigned int attr)
{
	if (!tb[attr])
		return "?";
	if (!t->v[attr])
		t->v[attr] = attr_text(set, attr, tb[attr], false);
	return t->v[attr] ?: "?";
}

static void texts_free(struct texts *t)
{
	for (size_t i = 0; i <= MFR_SPEC_MAX_ATTR; i++)
		free(t->v[i]);
}

static const char *event_msgid(uint8_t cmd)
{
	switch (cmd) {
	case MFR_CMD_MEMFD_KEPT_NTF: return MFRD_MSGID_MEMFD_KEPT;
	case MFR_CMD_MEMFD_EVICTED_NTF: return MFRD_MSGID_MEMFD_EVICTED;
	case MFR_CMD_PAGE_POISONED_NTF: return MFRD_MSGID_PAGE_POISONED;
	case MFR_CMD_PAGE_CONSUMED_NTF: return MFRD_MSGID_PAGE_CONSUMED;
	case MFR_CMD_BUDGET_EXCEEDED_NTF: return MFRD_MSGID_BUDGET_EXCEEDED;
	case MFR_CMD_FOLIO_PENDING_NTF: return MFRD_MSGID_FOLIO_PENDING;
	case MFR_CMD_FOLIO_OFFLINED_NTF: return MFRD_MSGID_FOLIO_OFFLINED;
	default: return NULL;
	}
}

static void memfd_message(struct mfrd_log *l, uint8_t cmd,
			  const struct mfr_attr_set *set, struct nlattr **tb,
			  const char *owner)
{
	struct texts t = { 0 };

	if (cmd == MFR_CMD_MEMFD_KEPT_NTF)
		mfrd_log_message(l, "memfd %s, inode %s, keeps poisoned pages mapped (%s%s, budget %s)",
				 owner, txt(&t, set, tb, MFR_A_MEMFD_INODE),
				 tb[MFR_A_MEMFD_RULE_ID] ? "rule " :
				 "flag or memfd-set",
				 tb[MFR_A_MEMFD_RULE_ID] ?
				 txt(&t, set, tb, MFR_A_MEMFD_RULE_ID) : "",
				 txt(&t, set, tb, MFR_A_MEMFD_BUDGET));
	else
		mfrd_log_message(l, "memfd %s, inode %s, no longer kept (closed or set to default), %s poisoned pages",
				 owner, txt(&t, set, tb, MFR_A_MEMFD_INODE),
				 txt(&t, set, tb,
				     MFR_A_MEMFD_RAW_PAGES_POISONED));
	texts_free(&t);
}

static void poison_message(struct mfrd_log *l, uint8_t cmd,
			   const struct mfr_attr_set *set, struct nlattr **tb,
			   const char *owner)
{
	struct texts t = { 0 };

	switch (cmd) {
	case MFR_CMD_PAGE_POISONED_NTF:
		mfrd_log_message(l, "memfd %s page at offset %s poisoned, pfn %s, kept mapped",
				 owner, txt(&t, set, tb, MFR_A_POISON_OFFSET),
				 txt(&t, set, tb, MFR_A_POISON_PFN));
		break;
	case MFR_CMD_PAGE_CONSUMED_NTF:
		mfrd_log_message(l, "task %s (pid %s) got SIGBUS (%s) for the poisoned page at offset %s of memfd %s, pfn %s, consumed %s times",
				 txt(&t, set, tb, MFR_A_POISON_COMM),
				 txt(&t, set, tb, MFR_A_POISON_PID),
				 txt(&t, set, tb, MFR_A_POISON_SIGNAL_CODE),
				 txt(&t, set, tb, MFR_A_POISON_OFFSET), owner,
				 txt(&t, set, tb, MFR_A_POISON_PFN),
				 txt(&t, set, tb, MFR_A_POISON_TIMES_CONSUMED));
		break;
	case MFR_CMD_BUDGET_EXCEEDED_NTF:
		mfrd_log_message(l, "memfd %s over its budget of %s pages: page at offset %s poisoned, pfn %s, its %s hugepage gets the kernel's default handling",
				 owner, txt(&t, set, tb, MFR_A_POISON_BUDGET),
				 txt(&t, set, tb, MFR_A_POISON_OFFSET),
				 txt(&t, set, tb, MFR_A_POISON_PFN),
				 txt(&t, set, tb, MFR_A_POISON_FOLIO_SIZE));
		break;
	case MFR_CMD_FOLIO_PENDING_NTF:
		mfrd_log_message(l, "memfd %s released its poisoned %s hugepage at offset %s, head pfn %s; offlining waits for its last reference",
				 owner, txt(&t, set, tb, MFR_A_POISON_FOLIO_SIZE),
				 txt(&t, set, tb, MFR_A_POISON_OFFSET),
				 txt(&t, set, tb, MFR_A_POISON_HEAD_PFN));
		break;
	case MFR_CMD_FOLIO_OFFLINED_NTF:
		mfrd_log_message(l, "poisoned %s hugepage of memfd %s offlined, head pfn %s: %s poisoned pages isolated, %s healthy pages returned",
				 txt(&t, set, tb, MFR_A_POISON_FOLIO_SIZE), owner,
				 txt(&t, set, tb, MFR_A_POISON_HEAD_PFN),
				 txt(&t, set, tb, MFR_A_POISON_RAW_PAGES_ISOLATED),
				 txt(&t, set, tb,
				     MFR_A_POISON_HEALTHY_PAGES_RETURNED));
		break;
	}
	texts_free(&t);
}

/* The journal entry of an event, sent once the batch is committed. */
static void log_event(uint8_t cmd, const struct mfr_attr_set *set,
		      struct nlattr **tb, const struct mfrd_memfd *m,
		      uint64_t inode)
{
	bool warn = cmd == MFR_CMD_PAGE_POISONED_NTF ||
		    cmd == MFR_CMD_BUDGET_EXCEEDED_NTF;
	struct mfrd_log *l = mfrd_log_new(warn ? LOG_WARNING : LOG_INFO,
					  event_msgid(cmd));
	char *owner = owner_text(m, inode);

	mfrd_log_field(l, "MFR_EVENT", "%s", mfr_event_name(cmd));
	mfrd_log_kind(l, mfr_event_name(cmd));
	if (set == &mfr_attr_sets[MFR_SET_MEMFD]) {
		add_attr_fields(l, set, tb, memfd_fields);
		memfd_message(l, cmd, set, tb, owner);
	} else {
		add_attr_fields(l, set, tb, poison_fields);
		add_owner_fields(l, m);
		poison_message(l, cmd, set, tb, owner);
	}
	free(owner);
	mfrd_log_defer(l);
}

/* ---- events ---- */

struct batch {
	struct mfrd *d;
	int64_t now;
	unsigned int recorded;
	unsigned int new_pages;		/* page records created */
	bool refreshed;			/* memfd-get dumped in this batch */
	bool store_failed;
};

/* "page-poisoned pfn=0x1234 ...": the event as mfrctl monitor shows it. */
static char *event_detail(const char *kind, const struct mfr_attr_set *set,
			  struct nlattr **tb)
{
	size_t size = 0;
	char *buf = NULL, *v;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		abort();
	fputs(kind, f);
	for (unsigned int i = 1; i <= set->max; i++) {
		if (!tb[i] || set->attrs[i].type == MFR_ATTR_UNUSED)
			continue;
		v = attr_text(set, i, tb[i], true);
		fprintf(f, " %s=%s", set->attrs[i].name, v ?: "?");
		free(v);
	}
	if (fclose(f))
		abort();
	return buf;
}

static uint64_t get(struct nlattr **tb, unsigned int attr, unsigned int bit,
		    unsigned int *has)
{
	if (!tb[attr])
		return 0;
	*has |= bit;
	return mfr_genl_get_uint(tb[attr]);
}

/* Owner of a page's memfd, dumping memfd-get once if it is unknown. */
static const struct mfrd_memfd *owner_of(struct batch *b, uint64_t inode)
{
	const struct mfrd_memfd *m = memfd_find(b->d, inode);

	if (!m && !b->refreshed) {
		b->refreshed = true;
		memfds_dump(b->d);
		m = memfd_find(b->d, inode);
	}
	return m;
}

static int record_poison(struct batch *b, uint8_t cmd, struct nlattr **tb,
			 const struct mfrd_memfd *m)
{
	struct mfrd_store *s = b->d->store;
	struct mfrd_page p = { 0 };
	uint64_t head;
	int known;

	p.pfn = get(tb, MFR_A_POISON_PFN, MFRD_HAS_PFN, &p.has);
	p.head_pfn = get(tb, MFR_A_POISON_HEAD_PFN, MFRD_HAS_HEAD_PFN, &p.has);
	p.folio_size = get(tb, MFR_A_POISON_FOLIO_SIZE, MFRD_HAS_FOLIO_SIZE,
			   &p.has);
	p.inode = get(tb, MFR_A_POISON_INODE, MFRD_HAS_INODE, &p.has);
	p.offset = get(tb, MFR_A_POISON_OFFSET, MFRD_HAS_OFFSET, &p.has);
	p.state = get(tb, MFR_A_POISON_STATE, MFRD_HAS_STATE, &p.has);
	p.times_consumed = get(tb, MFR_A_POISON_TIMES_CONSUMED,
			       MFRD_HAS_TIMES_CONSUMED, &p.has);
	head = p.head_pfn;
	if (m) {
		p.memfd_name = m->name;
		p.comm = m->comm;
		p.cgroup_path = m->cgroup_path;
		if (m->pid) {
			p.pid = m->pid;
			p.has |= MFRD_HAS_PID;
		}
		if (m->has_cgroup_id) {
			p.cgroup_id = m->cgroup_id;
			p.has |= MFRD_HAS_CGROUP_ID;
		}
	}

	switch (cmd) {
	case MFR_CMD_PAGE_POISONED_NTF:
	case MFR_CMD_PAGE_CONSUMED_NTF:
		break;
	case MFR_CMD_BUDGET_EXCEEDED_NTF:
		/*
		 * The page got the default handling; the kept pages of its
		 * hugepage fall back with it (poison-get says "fallback").
		 */
		p.state = MFR_PAGE_STATE_FALLBACK;
		p.has |= MFRD_HAS_STATE;
		if ((p.has & MFRD_HAS_HEAD_PFN) &&
		    mfrd_store_set_folio_state(s, head, p.state, b->now) < 0)
			return -1;
		break;
	case MFR_CMD_FOLIO_PENDING_NTF:
		return mfrd_store_set_folio_state(s, head,
						  MFR_PAGE_STATE_PENDING,
						  b->now) < 0 ? -1 : 0;
	case MFR_CMD_FOLIO_OFFLINED_NTF:
		return mfrd_store_set_folio_state(s, head,
						  MFR_PAGE_STATE_OFFLINED,
						  b->now) < 0 ? -1 : 0;
	default:
		return 0;
	}
	if (!(p.has & MFRD_HAS_PFN))
		return 0;
	p.has &= ~MFRD_HAS_PFN;		/* a page flag of events only */
	known = mfrd_store_has_page(s, p.pfn);
	if (known < 0)
		return -1;
	b->new_pages += !known;
	return mfrd_store_put_page(s, &p, b->now);
}

static int on_event(uint8_t cmd, const struct mfr_attr_set *set,
		    struct nlattr **tb, void *arg)
{
	bool memfd_set = set == &mfr_attr_sets[MFR_SET_MEMFD];
	unsigned int gen_attr = memfd_set ? MFR_A_MEMFD_GENERATION :
					    MFR_A_POISON_GENERATION;
	unsigned int inode_attr = memfd_set ? MFR_A_MEMFD_INODE :
					      MFR_A_POISON_INODE;
	const char *kind = mfr_event_name(cmd);
	struct batch *b = arg;
	struct mfrd *d = b->d;
	const struct mfrd_memfd *m = NULL;
	struct mfrd_event ev = { .time_usec = b->now, .kind = kind };
	uint64_t gen = 0, inode = 0;
	char *detail;
	int ret;

	if (!kind)
		return 0;	/* not a notification */
	if (tb[gen_attr]) {
		gen = mfr_genl_get_uint(tb[gen_attr]);
		if (mfrd_gens_event(&d->gens, gen) == MFRD_GEN_DUMPED) {
			/* In the store already; the cache may still learn. */
			if (cmd == MFR_CMD_MEMFD_KEPT_NTF)
				memfd_put(d, tb);
			return 0;
		}
	}
	if (tb[inode_attr])
		inode = mfr_genl_get_uint(tb[inode_attr]);

	if (memfd_set) {
		memfd_put(d, tb);
		m = memfd_find(d, inode);
	} else {
		if (tb[inode_attr])
			m = owner_of(b, inode);
		if (record_poison(b, cmd, tb, m))
			goto store_failed;
	}

	ev.has = MFRD_HAS_GENERATION;
	ev.generation = gen;
	if (!memfd_set && tb[MFR_A_POISON_PFN]) {
		ev.has |= MFRD_HAS_PFN;
		ev.pfn = mfr_genl_get_uint(tb[MFR_A_POISON_PFN]);
	}
	if (!memfd_set && tb[MFR_A_POISON_HEAD_PFN]) {
		ev.has |= MFRD_HAS_HEAD_PFN;
		ev.head_pfn = mfr_genl_get_uint(tb[MFR_A_POISON_HEAD_PFN]);
	}
	if (tb[inode_attr]) {
		ev.has |= MFRD_HAS_INODE;
		ev.inode = inode;
	}
	detail = event_detail(kind, set, tb);
	ev.detail = detail;
	ret = mfrd_store_log_event(d->store, &ev);
	free(detail);
	if (ret)
		goto store_failed;

	log_event(cmd, set, tb, m, inode);
	if (cmd == MFR_CMD_MEMFD_EVICTED_NTF)
		memfd_forget(d, inode);
	b->recorded++;
	return 0;

store_failed:
	b->store_failed = true;
	return -EIO;
}

static bool readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN);
}

/*
 * Record the pending events in one transaction, then log them.  Returns
 * 0, or -1 when the store failed (the loop is ended then).
 */
static int read_batch(struct mfrd *d, struct batch *b, bool *overrun)
{
	int64_t deadline = mfrd_monotonic_usec() + BATCH_USEC;
	int ret = 0, n;
	char *why;

	b->d = d;
	b->now = mfrd_now_usec();
	/* Nothing is read yet: a locked file sends the batch aside. */
	if (mfrd_store_begin(d->store) &&
	    (!mfrd_store_put_aside(d) || mfrd_store_begin(d->store)))
		goto store_failed;
	for (n = 0; n < BATCH_MAX && readable(mfr_genl_fd(d->events)) &&
	     mfrd_monotonic_usec() < deadline; n++) {
		ret = mfr_genl_recv_events(d->events, on_event, b);
		if (ret == -MFR_GENL_EOVERRUN) {
			*overrun = true;
			ret = 0;
		} else if (ret) {
			break;
		}
	}
	if (b->store_failed) {
		mfrd_store_rollback(d->store);
		mfrd_log_discard();
		goto store_failed;
	}
	if (mfrd_store_commit(d->store))
		goto store_failed;
	d->pages_recorded += b->new_pages;
	mfrd_log_flush();
	if (ret) {
		why = mfrd_genl_error_text(d->events, ret);
		mfrd_logf(LOG_ERR, NULL, "reading events failed: %s", why);
		free(why);
		d->need_reconcile = true;
	}
	return 0;

store_failed:
	mfrd_logf(LOG_CRIT, NULL, "cannot record events: %s",
		  mfrd_store_error(d->store));
	mfrd_fail(d);
	return -1;
}

int mfrd_events_read(struct mfrd *d)
{
	struct batch b = { 0 };
	struct mfrd_gen_verdict v;
	bool overrun = false;
	int changed;

	if (read_batch(d, &b, &overrun))
		return -1;
	v = mfrd_gens_batch_end(&d->gens);
	d->events_lost += overrun;
	if (v.late)
		mfrd_logf(LOG_NOTICE, NULL,
			  "generation %" PRIu64 " arrived after %" PRIu64 ", against mfr.ko's order rule (mfr.yaml); page states are taken from its dumps",
			  v.late_gen, v.late_after);
	if (overrun) {
		mfrd_logf(LOG_WARNING, MFRD_MSGID_EVENTS_LOST,
			  "events lost: the receive buffer overran; reconciling from the module's dumps");
		d->need_reconcile = mfrd_reconcile(d, "events lost") < 0;
	} else if (v.action == MFRD_GEN_RECONCILE_GAP) {
		changed = mfrd_reconcile(d, "generation gap");
		d->need_reconcile = changed < 0;
		/* Write operations (rule-add ...) move the generation too. */
		if (changed > 0)
			d->events_lost++;
		if (changed > 0)
			mfrd_logf(LOG_WARNING, MFRD_MSGID_EVENTS_LOST,
				  "events lost: %" PRIu64 " generations between %" PRIu64 " and %" PRIu64 " were not seen; the dumps brought %d page records up to date",
				  v.missing, v.gap_from, v.gap_to, changed);
		else if (!changed)
			mfrd_logf(LOG_DEBUG, NULL,
				  "%" PRIu64 " generations between %" PRIu64 " and %" PRIu64 " came without events (write operations): nothing was missing",
				  v.missing, v.gap_from, v.gap_to);
	} else if (v.action == MFRD_GEN_RECONCILE_ORDER) {
		/*
		 * Nothing missed: what the dumps change is the state a late
		 * event set back, not a lost event.
		 */
		d->need_reconcile = mfrd_reconcile(d, "events out of order") < 0;
	}
	if (b.recorded)
		mfrd_identify_pages(d);
	if (b.recorded || overrun || v.action != MFRD_GEN_NOTHING)
		mfrd_report_soon(d);
	return d->failed ? -1 : 0;
}

/* ---- reconciling ---- */

struct pages {
	struct mfrd_page *v;
	size_t n, cap;
	uint64_t generation;
	bool has_generation;
};

static int page_cb(uint8_t cmd, const struct mfr_attr_set *set,
		   struct nlattr **tb, void *arg)
{
	struct pages *pages = arg;
	struct mfrd_page *v, *p;

	(void)cmd;
	(void)set;
	if (!tb[MFR_A_POISON_PFN])
		return 0;
	v = mfrd_grow(pages->v, &pages->cap, pages->n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	pages->v = v;
	p = &v[pages->n++];
	*p = (struct mfrd_page){ .pfn = mfr_genl_get_uint(tb[MFR_A_POISON_PFN]) };
	p->head_pfn = get(tb, MFR_A_POISON_HEAD_PFN, MFRD_HAS_HEAD_PFN, &p->has);
	p->folio_size = get(tb, MFR_A_POISON_FOLIO_SIZE, MFRD_HAS_FOLIO_SIZE,
			    &p->has);
	p->inode = get(tb, MFR_A_POISON_INODE, MFRD_HAS_INODE, &p->has);
	p->offset = get(tb, MFR_A_POISON_OFFSET, MFRD_HAS_OFFSET, &p->has);
	p->state = get(tb, MFR_A_POISON_STATE, MFRD_HAS_STATE, &p->has);
	p->times_consumed = get(tb, MFR_A_POISON_TIMES_CONSUMED,
				MFRD_HAS_TIMES_CONSUMED, &p->has);
	if (tb[MFR_A_POISON_GENERATION]) {
		pages->generation =
			mfr_genl_get_uint(tb[MFR_A_POISON_GENERATION]);
		pages->has_generation = true;
	}
	return 0;
}

static int status_gen_cb(uint8_t cmd, const struct mfr_attr_set *set,
			 struct nlattr **tb, void *arg)
{
	(void)cmd;
	(void)set;
	if (tb[MFR_A_STATUS_GENERATION])
		*(uint64_t *)arg = mfr_genl_get_uint(tb[MFR_A_STATUS_GENERATION]);
	return 0;
}

static void owner_into(struct mfrd_page *p, const struct mfrd_memfd *m)
{
	if (!m)
		return;
	p->memfd_name = m->name;
	p->comm = m->comm;
	p->cgroup_path = m->cgroup_path;
	if (m->pid) {
		p->pid = m->pid;
		p->has |= MFRD_HAS_PID;
	}
	if (m->has_cgroup_id) {
		p->cgroup_id = m->cgroup_id;
		p->has |= MFRD_HAS_CGROUP_ID;
	}
}

/* A page the store did not have: journal it as found by a dump. */
static void log_found_page(const struct mfrd_page *p,
			   const struct mfrd_memfd *m, const char *why)
{
	const char *state = mfr_enum_name(&mfr_page_state_enum, p->state);
	struct mfrd_log *l = mfrd_log_new(LOG_WARNING,
					  MFRD_MSGID_PAGE_POISONED);
	char *owner = owner_text(m, p->inode);

	mfrd_log_field(l, "MFR_EVENT", "page-poisoned");
	mfrd_log_kind(l, "page-poisoned");
	mfrd_log_field(l, "MFR_PFN", "0x%" PRIx64, p->pfn);
	if (p->has & MFRD_HAS_HEAD_PFN)
		mfrd_log_field(l, "MFR_HEAD_PFN", "0x%" PRIx64, p->head_pfn);
	if (p->has & MFRD_HAS_INODE)
		mfrd_log_field(l, "MFR_INODE", "%" PRIu64, p->inode);
	if (p->has & MFRD_HAS_OFFSET)
		mfrd_log_field(l, "MFR_OFFSET", "0x%" PRIx64, p->offset);
	if (state)
		mfrd_log_field(l, "MFR_STATE", "%s", state);
	add_owner_fields(l, m);
	mfrd_log_field(l, "MFR_RECONCILED", "%s", why);
	mfrd_log_message(l, "memfd %s page at offset 0x%" PRIx64 " poisoned, pfn 0x%" PRIx64 ", now %s (found in the module's dump: %s)",
			 owner, p->offset, p->pfn, state ?: "?", why);
	free(owner);
	mfrd_log_defer(l);
}

int mfrd_reconcile(struct mfrd *d, const char *why)
{
	struct pages pages = { 0 };
	int64_t now = mfrd_now_usec();
	uint64_t status_gen = 0;
	bool refreshed = false, overrun = false;
	int ret, changed = 0;
	unsigned int found = 0;		/* page records created */
	char *err;
	size_t i;

	/*
	 * Events already queued are recorded (and logged) first: the dump
	 * would make them look stale and they would be skipped unlogged.
	 * A gap or overrun there needs nothing more than this reconcile.
	 */
	if (d->events && read_batch(d, &(struct batch){ 0 }, &overrun))
		return -1;
	d->redumps++;
	/*
	 * The generation before the dumps: if no page carries the dump's
	 * own, events after this one are replayed, harmlessly and in order.
	 */
	ret = mfrd_status_get(d, status_gen_cb, &status_gen);
	if (ret)
		goto genl_failed;
	if (memfds_dump(d))
		return -1;
	ret = mfr_genl_dump(d->req, MFR_CMD_POISON_GET, page_cb, &pages);
	if (ret)
		goto genl_failed;
	/* A memfd created after the memfd-get dump: ask once more. */
	for (i = 0; i < pages.n && !refreshed; i++)
		if ((pages.v[i].has & MFRD_HAS_INODE) &&
		    !memfd_find(d, pages.v[i].inode)) {
			memfds_dump(d);
			refreshed = true;
		}

	if (mfrd_store_begin(d->store) &&
	    (!mfrd_store_put_aside(d) || mfrd_store_begin(d->store)))
		goto store_failed;
	for (i = 0; i < pages.n; i++) {
		struct mfrd_page *p = &pages.v[i];
		const struct mfrd_memfd *m = (p->has & MFRD_HAS_INODE) ?
					     memfd_find(d, p->inode) : NULL;
		int known = mfrd_store_has_page(d->store, p->pfn);

		owner_into(p, m);
		mfrd_watchdog_progress(d);
		if (known < 0 || mfrd_store_put_page(d->store, p, now)) {
			mfrd_store_rollback(d->store);
			goto store_failed;
		}
		changed += mfrd_store_last_changes(d->store);
		if (!known) {
			log_found_page(p, m, why);
			found++;
		}
	}
	if (mfrd_store_commit(d->store))
		goto store_failed;
	d->pages_recorded += found;
	mfrd_log_flush();

	mfrd_gens_dumped(&d->gens, pages.has_generation ? pages.generation :
						   status_gen);
	mfrd_logf(LOG_INFO, NULL,
		  "reconciled (%s): %zu poisoned pages reported by mfr.ko, %d added or updated, generation %" PRIu64,
		  why, pages.n, changed, d->gens.dump_gen);
	free(pages.v);
	if (changed > 0)
		mfrd_identify_pages(d);
	mfrd_report_soon(d);
	return changed;

genl_failed:
	err = mfrd_genl_error_text(d->req, ret);
	mfrd_logf(LOG_ERR, NULL, "reconcile (%s) failed: %s", why, err);
	free(err);
	free(pages.v);
	return -1;

store_failed:
	mfrd_log_discard();
	mfrd_logf(LOG_CRIT, NULL, "cannot record the module's dump: %s",
		  mfrd_store_error(d->store));
	free(pages.v);
	mfrd_fail(d);
	return -1;
}
