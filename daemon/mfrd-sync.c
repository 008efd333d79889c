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
 *
 * Any user can cause events (kept memfds, consumed pages), and the module
 * rate-limits them per user, each suppressed one a generation gap: what a
 * tenant can cost mfrd is bounded here.  Reconciles come at most every
 * RECONCILE_MIN_USEC, a reconcile reads the owners of poisoned pages only
 * (not every memfd), and the owner cache is bounded.
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
#include "mfrd-grow.h"
#include "mfrd-log.h"
#include "output.h"

/*
 * Events read in one transaction: one fsync for a burst.  Bounded in time
 * too: during a storm the socket never runs dry, and a batch that went on
 * would starve the watchdog (systemd killed mfrd so in the e2e storm) and
 * hold the journal entries back.
 */
#define BATCH_MAX	512
#define BATCH_USEC	(250 * 1000)
/* Reconciles that gaps and overruns ask for: at most one per this. */
#define RECONCILE_MIN_USEC	(10 * 1000000LL)

/* ---- memfd owners: the data poison events lack ---- */

static const struct mfrd_memfd *memfd_find(struct mfrd *d, uint64_t inode)
{
	return mfrd_memfd_cache_find(&d->memfds, inode);
}

/* Add or refresh the memfd of a memfd-get record or memfd event. */
static void memfd_put(struct mfrd *d, struct nlattr **tb)
{
	struct mfrd_memfd m = { 0 };

	if (!tb[MFR_A_MEMFD_INODE])
		return;
	m.inode = mfr_genl_get_uint(tb[MFR_A_MEMFD_INODE]);
	m.name = tb[MFR_A_MEMFD_NAME] ? nla_get_string(tb[MFR_A_MEMFD_NAME]) : NULL;
	m.comm = tb[MFR_A_MEMFD_COMM] ? nla_get_string(tb[MFR_A_MEMFD_COMM]) : NULL;
	m.cgroup_path = tb[MFR_A_MEMFD_CGROUP_PATH] ?
			nla_get_string(tb[MFR_A_MEMFD_CGROUP_PATH]) : NULL;
	m.pid = tb[MFR_A_MEMFD_PID] ? nla_get_u32(tb[MFR_A_MEMFD_PID]) : 0;
	m.has_cgroup_id = tb[MFR_A_MEMFD_CGROUP_ID] != NULL;
	m.cgroup_id = tb[MFR_A_MEMFD_CGROUP_ID] ?
		      mfr_genl_get_uint(tb[MFR_A_MEMFD_CGROUP_ID]) : 0;
	mfrd_memfd_cache_put(&d->memfds, &m);
}

/* The inodes whose owners a dump is for, sorted. */
struct wanted {
	uint64_t *v;
	size_t n, cap;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void want(struct wanted *w, uint64_t inode)
{
	uint64_t *v = mfrd_grow(w->v, &w->cap, w->n, sizeof(*v));

	if (!v)
		abort();
	w->v = v;
	v[w->n++] = inode;
}

struct memfd_dump {
	struct mfrd *d;
	const struct wanted *wanted;
};

static int memfd_cb(uint8_t cmd, const struct mfr_attr_set *set,
		    struct nlattr **tb, void *arg)
{
	struct memfd_dump *md = arg;
	uint64_t inode;

	(void)cmd;
	(void)set;
	/* A tenant's 100 000 memfds: the watchdog fed on the way. */
	mfrd_watchdog_progress(md->d);
	if (!tb[MFR_A_MEMFD_INODE])
		return 0;
	inode = mfr_genl_get_uint(tb[MFR_A_MEMFD_INODE]);
	if (!bsearch(&inode, md->wanted->v, md->wanted->n, sizeof(inode),
		     cmp_u64))
		return 0;
	memfd_put(md->d, tb);
	return 0;
}

/*
 * The owners of the wanted inodes, from a memfd-get dump: only those go
 * into the cache, which a dump of every memfd would flush.
 */
static int memfds_dump(struct mfrd *d, struct wanted *w)
{
	struct memfd_dump md = { .d = d, .wanted = w };
	char *why;
	int ret;

	if (!w->n)
		return 0;
	qsort(w->v, w->n, sizeof(*w->v), cmp_u64);
	ret = mfr_genl_dump(d->req, MFR_CMD_MEMFD_GET, memfd_cb, &md);
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

/* A tenant's text (memfd name, command, cgroup) as the logs show it. */
static char *escaped(const char *s)
{
	char *e = text_escaped(s);

	if (!e)
		abort();
	return e;
}

static void add_text_field(struct mfrd_log *l, const char *key, const char *v)
{
	char *e;

	if (!v)
		return;
	e = escaped(v);
	mfrd_log_field(l, key, "%s", e);
	free(e);
}

static void add_owner_fields(struct mfrd_log *l, const struct mfrd_memfd *m)
{
	if (!m)
		return;
	add_text_field(l, "MFR_MEMFD", m->name);
	if (m->pid)
		mfrd_log_field(l, "MFR_PID", "%u", m->pid);
	add_text_field(l, "MFR_COMM", m->comm);
	add_text_field(l, "MFR_CGROUP", m->cgroup_path);
	if (m->has_cgroup_id)
		mfrd_log_field(l, "MFR_CGROUP_ID", "%" PRIu64, m->cgroup_id);
}

/*
 * "guest-ram (pid 123 qemu)", or "inode 1043" when the owner is unknown;
 * the tenant's names escaped (a newline in one would forge a log line).
 */
static char *owner_text(const struct mfrd_memfd *m, uint64_t inode)
{
	char *s, *name, *comm;
	int r;

	if (!m || !m->name) {
		r = asprintf(&s, "inode %" PRIu64, inode);
	} else {
		name = escaped(m->name);
		comm = escaped(m->comm ?: "?");
		r = m->pid ? asprintf(&s, "%s (pid %u %s)", name, m->pid, comm) :
			     asprintf(&s, "%s", name);
		free(name);
		free(comm);
	}
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
	case MFR_CMD_PAGE_UNTRACKED_NTF: return MFRD_MSGID_PAGE_UNTRACKED;
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
	case MFR_CMD_PAGE_UNTRACKED_NTF:
		mfrd_log_message(l, "memfd %s page at offset %s poisoned, pfn %s: the kernel lost track of which pages of its %s hugepage are poisoned (no memory), it gets the kernel's default handling",
				 owner, txt(&t, set, tb, MFR_A_POISON_OFFSET),
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
		    cmd == MFR_CMD_BUDGET_EXCEEDED_NTF ||
		    cmd == MFR_CMD_PAGE_UNTRACKED_NTF;
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

/*
 * An event of a batch, kept until the batch is in the store: its
 * attributes copied out of the message (which libnl frees), so that the
 * batch can be written again to a stand-in if the store fails under it.
 */
struct held_event {
	uint8_t cmd;
	const struct mfr_attr_set *set;
	struct nlattr *tb[MFR_SPEC_MAX_ATTR + 1];
	void *attrs;			/* where tb points */
	uint64_t gen, inode;
};

struct batch {
	struct mfrd *d;
	int64_t now;
	struct held_event *v;
	size_t n, cap;
	unsigned int recorded;
	unsigned int new_pages;		/* page records created */
};

static void batch_free(struct batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->v[i].attrs);
	free(b->v);
	b->v = NULL;
	b->n = b->cap = 0;
}

/* A copy of the event's attributes, tb pointing into it. */
static void hold(struct batch *b, uint8_t cmd, const struct mfr_attr_set *set,
		 struct nlattr **tb, uint64_t gen, uint64_t inode)
{
	struct held_event *e, *v;
	size_t size = 0, off = 0;
	char *buf;

	v = mfrd_grow(b->v, &b->cap, b->n, sizeof(*v));
	if (!v)
		abort();
	b->v = v;
	e = &v[b->n++];
	*e = (struct held_event){ .cmd = cmd, .set = set, .gen = gen,
				  .inode = inode };
	for (unsigned int i = 1; i <= set->max; i++)
		if (tb[i])
			size += (size_t)nla_total_size(nla_len(tb[i]));
	buf = malloc(size ?: 1);
	if (!buf)
		abort();
	e->attrs = buf;
	for (unsigned int i = 1; i <= set->max; i++) {
		if (!tb[i])
			continue;
		memcpy(buf + off, tb[i], (size_t)nla_total_size(nla_len(tb[i])));
		e->tb[i] = (struct nlattr *)(buf + off);
		off += (size_t)nla_total_size(nla_len(tb[i]));
	}
}

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

static int record_poison(struct batch *b, struct mfrd_store *s, uint8_t cmd,
			 struct nlattr **tb, const struct mfrd_memfd *m)
{
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
	owner_into(&p, m);

	switch (cmd) {
	case MFR_CMD_PAGE_POISONED_NTF:
	case MFR_CMD_PAGE_CONSUMED_NTF:
		break;
	case MFR_CMD_BUDGET_EXCEEDED_NTF:
	case MFR_CMD_PAGE_UNTRACKED_NTF:
		/*
		 * The page got the default handling; the kept pages of its
		 * hugepage fall back with it (poison-get says "fallback").
		 * An untracked error in a hugepage its memfd had released
		 * says "pending": it is offlined whole later.
		 */
		if (cmd == MFR_CMD_BUDGET_EXCEEDED_NTF ||
		    !(p.has & MFRD_HAS_STATE)) {
			p.state = MFR_PAGE_STATE_FALLBACK;
			p.has |= MFRD_HAS_STATE;
		}
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

/* One held event into the store s, its journal entry held. */
static int record_event(struct batch *b, struct mfrd_store *s,
			struct held_event *e)
{
	bool memfd_set = e->set == &mfr_attr_sets[MFR_SET_MEMFD];
	unsigned int inode_attr = memfd_set ? MFR_A_MEMFD_INODE :
					      MFR_A_POISON_INODE;
	const char *kind = mfr_event_name(e->cmd);
	struct mfrd_event ev = { .time_usec = b->now, .kind = kind };
	const struct mfrd_memfd *m = NULL;
	char *detail;
	int ret;

	if (e->tb[inode_attr])
		m = memfd_find(b->d, e->inode);
	if (!memfd_set && record_poison(b, s, e->cmd, e->tb, m))
		return -1;
	ev.has = MFRD_HAS_GENERATION;
	ev.generation = e->gen;
	if (!memfd_set && e->tb[MFR_A_POISON_PFN]) {
		ev.has |= MFRD_HAS_PFN;
		ev.pfn = mfr_genl_get_uint(e->tb[MFR_A_POISON_PFN]);
	}
	if (!memfd_set && e->tb[MFR_A_POISON_HEAD_PFN]) {
		ev.has |= MFRD_HAS_HEAD_PFN;
		ev.head_pfn = mfr_genl_get_uint(e->tb[MFR_A_POISON_HEAD_PFN]);
	}
	if (e->tb[inode_attr]) {
		ev.has |= MFRD_HAS_INODE;
		ev.inode = e->inode;
	}
	detail = event_detail(kind, e->set, e->tb);
	ev.detail = detail;
	ret = mfrd_store_log_event(s, &ev);
	free(detail);
	if (ret)
		return -1;
	log_event(e->cmd, e->set, e->tb, m, e->inode);
	b->recorded++;
	return 0;
}

/* The whole batch, in the transaction mfrd_sup_write() opened. */
static int record_batch(struct mfrd_store *s, void *arg)
{
	struct batch *b = arg;

	b->recorded = b->new_pages = 0;
	for (size_t i = 0; i < b->n; i++)
		if (record_event(b, s, &b->v[i]))
			return -1;
	return 0;
}

/* Read: an event the last dump holds is skipped, the others held. */
static int on_event(uint8_t cmd, const struct mfr_attr_set *set,
		    struct nlattr **tb, void *arg)
{
	bool memfd_set = set == &mfr_attr_sets[MFR_SET_MEMFD];
	unsigned int gen_attr = memfd_set ? MFR_A_MEMFD_GENERATION :
					    MFR_A_POISON_GENERATION;
	unsigned int inode_attr = memfd_set ? MFR_A_MEMFD_INODE :
					      MFR_A_POISON_INODE;
	struct batch *b = arg;
	struct mfrd *d = b->d;
	uint64_t gen = 0;

	if (!mfr_event_name(cmd))
		return 0;	/* not a notification */
	/* The owner, known from now on (evictions only once recorded). */
	if (cmd == MFR_CMD_MEMFD_KEPT_NTF)
		memfd_put(d, tb);
	if (tb[gen_attr]) {
		gen = mfr_genl_get_uint(tb[gen_attr]);
		if (mfrd_gens_event(&d->gens, gen) == MFRD_GEN_DUMPED)
			return 0;	/* in the store already */
	}
	hold(b, cmd, set, tb, gen,
	     tb[inode_attr] ? mfr_genl_get_uint(tb[inode_attr]) : 0);
	return 0;
}

static bool readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN);
}

/*
 * Owners of the batch's new pages the cache does not know: one memfd-get
 * dump for them all, before the store's transaction.  Only a new page
 * needs its owner (an upsert keeps the one recorded), and a dump of
 * every memfd a tenant holds is not to be paid for the others.
 */
static void batch_owners(struct batch *b)
{
	struct wanted w = { 0 };

	for (size_t i = 0; i < b->n; i++)
		if ((b->v[i].cmd == MFR_CMD_PAGE_POISONED_NTF ||
		     b->v[i].cmd == MFR_CMD_BUDGET_EXCEEDED_NTF ||
		     b->v[i].cmd == MFR_CMD_PAGE_UNTRACKED_NTF) &&
		    b->v[i].tb[MFR_A_POISON_INODE] &&
		    !memfd_find(b->d, b->v[i].inode))
			want(&w, b->v[i].inode);
	memfds_dump(b->d, &w);
	free(w.v);
}

/*
 * Read the pending events (a bounded batch), record them in one
 * transaction, then log them.  Returns 0, or -1 when not even a stand-in
 * took them (the loop is ended then).
 */
static int read_batch(struct mfrd *d, struct batch *b, bool *overrun)
{
	int64_t deadline = mfrd_monotonic_usec() + BATCH_USEC;
	int ret = 0, n;
	char *why;

	b->d = d;
	b->now = mfrd_now_usec();
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
	batch_owners(b);
	if (b->n && mfrd_sup_write(d->sup, record_batch, b, "recording events")) {
		mfrd_logf(LOG_CRIT, NULL,
			  "cannot record events anywhere, not even in memory: mfrd restarts, and its start reads them from mfr.ko again");
		batch_free(b);
		mfrd_fail(d);
		return -1;
	}
	d->pages_recorded += b->new_pages;
	mfrd_log_flush();
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].cmd == MFR_CMD_MEMFD_EVICTED_NTF)
			mfrd_memfd_cache_forget(&d->memfds, b->v[i].inode);
	batch_free(b);
	if (ret) {
		why = mfrd_genl_error_text(d->events, ret);
		mfrd_logf(LOG_ERR, NULL, "reading events failed: %s", why);
		free(why);
		d->need_reconcile = true;
	}
	return 0;
}

int mfrd_events_read(struct mfrd *d)
{
	struct batch b = { 0 };
	struct mfrd_gen_verdict v;
	bool overrun = false;

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
		mfrd_reconcile_soon(d, "events lost");
	} else if (v.action == MFRD_GEN_RECONCILE_GAP) {
		/*
		 * A gap is most often a tenant's notifications suppressed by
		 * the module's rate limit, or a write operation; the dumps
		 * tell what, in a bounded while.
		 */
		mfrd_logf(LOG_DEBUG, NULL,
			  "%" PRIu64 " generations between %" PRIu64 " and %" PRIu64 " came without events: the dumps are read",
			  v.missing, v.gap_from, v.gap_to);
		mfrd_reconcile_soon(d, "generation gap");
	} else if (v.action == MFRD_GEN_RECONCILE_ORDER) {
		/*
		 * Nothing missed: what the dumps change is the state a late
		 * event set back, not a lost event.
		 */
		mfrd_reconcile_soon(d, "events out of order");
	}
	if (b.recorded)
		mfrd_identify_pages(d);
	if (b.recorded || overrun || v.action != MFRD_GEN_NOTHING)
		mfrd_report_soon(d);
	return d->failed ? -1 : 0;
}

/* ---- reconciling ---- */

struct pages {
	struct mfrd *d;
	struct mfrd_page *v;
	size_t n, cap;
	uint64_t generation;
	bool has_generation;
	int64_t now;
	const char *why;
	int changed;			/* rows the upserts changed */
	unsigned int found;		/* page records created */
};

static int page_cb(uint8_t cmd, const struct mfr_attr_set *set,
		   struct nlattr **tb, void *arg)
{
	struct pages *pages = arg;
	struct mfrd_page *v, *p;

	(void)cmd;
	(void)set;
	mfrd_watchdog_progress(pages->d);
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

/* The dump's pages, in the transaction mfrd_sup_write() opened. */
static int record_pages(struct mfrd_store *s, void *arg)
{
	struct pages *pages = arg;

	pages->changed = 0;
	pages->found = 0;
	for (size_t i = 0; i < pages->n; i++) {
		struct mfrd_page *p = &pages->v[i];
		const struct mfrd_memfd *m = (p->has & MFRD_HAS_INODE) ?
					     memfd_find(pages->d, p->inode) : NULL;
		int known = mfrd_store_has_page(s, p->pfn);

		owner_into(p, m);
		mfrd_watchdog_progress(pages->d);
		if (known < 0 || mfrd_store_put_page(s, p, pages->now))
			return -1;
		pages->changed += mfrd_store_last_changes(s);
		if (!known) {
			log_found_page(p, m, pages->why);
			pages->found++;
		}
	}
	return 0;
}

int mfrd_reconcile(struct mfrd *d, const char *why)
{
	struct pages pages = { .d = d, .now = mfrd_now_usec(), .why = why };
	struct wanted w = { 0 };
	uint64_t status_gen = 0;
	bool overrun = false;
	char *err;
	int ret;

	/*
	 * Events already queued are recorded (and logged) first: the dump
	 * would make them look stale and they would be skipped unlogged.
	 * A gap or overrun there needs nothing more than this reconcile.
	 */
	if (d->events && read_batch(d, &(struct batch){ 0 }, &overrun))
		return -1;
	d->redumps++;
	d->last_reconcile_usec = mfrd_monotonic_usec();
	/* A reconcile already scheduled is this one: not another after it. */
	if (d->reconcile_src)
		sd_event_source_set_enabled(d->reconcile_src, SD_EVENT_OFF);
	/*
	 * The generation before the dumps: if no page carries the dump's
	 * own, events after this one are replayed, harmlessly and in order.
	 */
	ret = mfrd_status_get(d, status_gen_cb, &status_gen);
	if (ret)
		goto genl_failed;
	/*
	 * Each stretch feeds the watchdog per record (page_cb, the owner
	 * scan, memfd_cb, record_pages): with 1 001 pages on a loaded host
	 * an unfed stretch can outlast WatchdogSec, and each restart then
	 * redoes the same uncommitted work.
	 */
	ret = mfr_genl_dump(d->req, MFR_CMD_POISON_GET, page_cb, &pages);
	if (ret)
		goto genl_failed;
	/*
	 * Owners of pages new to the store, not of every memfd a tenant
	 * made: an upsert keeps a recorded page's owner, and the memfd of
	 * an old page is most often gone.
	 */
	for (size_t i = 0; i < pages.n; i++) {
		mfrd_watchdog_progress(d);
		if ((pages.v[i].has & MFRD_HAS_INODE) &&
		    !memfd_find(d, pages.v[i].inode) &&
		    mfrd_store_has_page(mfrd_store(d), pages.v[i].pfn) == 0)
			want(&w, pages.v[i].inode);
	}
	memfds_dump(d, &w);
	free(w.v);

	if (mfrd_sup_write(d->sup, record_pages, &pages, "recording the module's dump")) {
		mfrd_logf(LOG_CRIT, NULL,
			  "cannot record the module's dump anywhere, not even in memory: mfrd restarts");
		free(pages.v);
		mfrd_fail(d);
		return -1;
	}
	d->pages_recorded += pages.found;
	mfrd_log_flush();

	mfrd_gens_dumped(&d->gens, pages.has_generation ? pages.generation :
						   status_gen);
	mfrd_logf(LOG_INFO, NULL,
		  "reconciled (%s): %zu poisoned pages reported by mfr.ko, %d added or updated, generation %" PRIu64,
		  why, pages.n, pages.changed, d->gens.dump_gen);
	free(pages.v);
	if (pages.changed > 0)
		mfrd_identify_pages(d);
	mfrd_report_soon(d);
	return pages.changed;

genl_failed:
	err = mfrd_genl_error_text(d->req, ret);
	mfrd_logf(LOG_ERR, NULL, "reconcile (%s) failed: %s", why, err);
	free(err);
	free(pages.v);
	return -1;
}

/* A reconcile that asked for it: lost events counted when it found any. */
static void reconcile_for(struct mfrd *d, const char *why)
{
	int changed = mfrd_reconcile(d, why);

	d->need_reconcile = changed < 0;
	if (changed > 0 && !strcmp(why, "generation gap")) {
		d->events_lost++;
		mfrd_logf(LOG_WARNING, MFRD_MSGID_EVENTS_LOST,
			  "events lost (%s): the dumps brought %d page records up to date",
			  why, changed);
	}
}

static int on_reconcile_due(sd_event_source *s, uint64_t usec, void *arg)
{
	struct mfrd *d = arg;

	(void)s;
	(void)usec;
	if (d->connected)
		reconcile_for(d, d->reconcile_why);
	return 0;
}

void mfrd_reconcile_soon(struct mfrd *d, const char *why)
{
	int64_t due = d->last_reconcile_usec + RECONCILE_MIN_USEC;
	int enabled = SD_EVENT_OFF;

	if (!d->last_reconcile_usec || mfrd_monotonic_usec() >= due) {
		reconcile_for(d, why);
		return;
	}
	if (d->reconcile_src)
		sd_event_source_get_enabled(d->reconcile_src, &enabled);
	if (enabled != SD_EVENT_OFF)
		return;		/* one is due already: it covers this too */
	d->reconcile_why = why;
	if (d->reconcile_src) {
		sd_event_source_set_time(d->reconcile_src, (uint64_t)due);
		sd_event_source_set_enabled(d->reconcile_src, SD_EVENT_ONESHOT);
	} else if (sd_event_add_time(d->event, &d->reconcile_src,
				     CLOCK_MONOTONIC, (uint64_t)due, 0,
				     on_reconcile_due, d) < 0) {
		d->need_reconcile = true;	/* the tick does it */
	}
}

void mfrd_reconcile_stop(struct mfrd *d)
{
	d->reconcile_src = sd_event_source_disable_unref(d->reconcile_src);
}
