// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Offlining, at boot, the pfns recorded as poisoned in earlier boots: a
 * UE seen once is likely to come back, and a kept page's error is not in
 * any kernel record after a reboot.  Done before READY=1, so workloads
 * ordered after mfrd.service never get those pages.
 *
 * Soft-offlining first: the kernel migrates the page's content, if any,
 * and takes the page out, so nobody loses data (a pfn recorded in an
 * earlier boot holds unrelated data now, or nothing).  Hard-offlining
 * only where that failed and no process maps the page: memory_failure()
 * unmaps a mapped page and sends its users SIGBUS, which for an
 * unrelated process at boot is worse than the risk it guards against.
 * Such a page stays in service, is counted as failed (mfr_offline_failed)
 * and is tried again at the next start.
 *
 * In slices from the event loop (see struct mfrd_offline_pass): the start, connect
 * and READY=1, waits for the last one.
 *
 * Once per boot: a marker file in the state directory holds the boot id
 * of the last pass without failures, so a restarted mfrd does not log the
 * pass again but does retry a pass that failed (mfr_offline_failed stays
 * set through it).  Redoing it is harmless: poisoned pages are skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/kernel-page-flags.h>

#include "mfrd.h"
#include "mfrd-atomic-file.h"
#include "mfrd-clock.h"
#include "mfrd-dimm.h"
#include "mfrd-log.h"

/* $MFRD_SYSFS_MEMORY and $MFRD_KPAGEFLAGS stand in for them in tests. */
#define SYSFS_MEMORY	"/sys/devices/system/memory"
#define KPAGEFLAGS	"/proc/kpageflags"
#define PAGE_SHIFT	12
#define MARKER		"recorded-pfns-offlined"
/* Failed pfns named in the journal entry; the count says the rest. */
#define FAILED_LISTED	16

#ifndef EHWPOISON
#define EHWPOISON	133
#endif

static char *marker_path(struct mfrd *d)
{
	char *p;

	if (asprintf(&p, "%s/" MARKER, d->cfg.state_dir) < 0)
		abort();
	return p;
}

static bool done_this_boot(struct mfrd *d)
{
	char *path = marker_path(d), id[64] = "";
	FILE *f = fopen(path, "re");

	free(path);
	if (!f)
		return false;
	if (!fgets(id, sizeof(id), f))
		id[0] = '\0';
	fclose(f);
	id[strcspn(id, "\n")] = '\0';
	return !strcmp(id, d->boot_id);
}

/* Write the marker atomically: a half-written one would be "not done". */
static void mark_done(struct mfrd *d)
{
	char *path = marker_path(d), *text;
	int r;

	if (asprintf(&text, "%s\n", d->boot_id) < 0)
		abort();
	r = mfrd_atomic_write(path, text, strlen(text), 0644);
	if (r)
		mfrd_logf(LOG_WARNING, NULL,
			  "cannot write %s (%s): a restart in this boot will offline the recorded pfns again",
			  path, strerror(-r));
	free(text);
	free(path);
}

/* The page's flags from /proc/kpageflags; false if unknown. */
static bool page_flags(int kpf, uint64_t pfn, uint64_t *flags)
{
	return kpf >= 0 &&
	       pread(kpf, flags, sizeof(*flags),
		     (off_t)(pfn * sizeof(*flags))) == (ssize_t)sizeof(*flags);
}

/* 1 if the kernel already marked pfn poisoned, 0 if not or unknown. */
static int hwpoisoned(int kpf, uint64_t pfn)
{
	uint64_t flags;

	return page_flags(kpf, pfn, &flags) &&
	       (flags & (1ULL << KPF_HWPOISON));
}

/* A process maps it: hard-offlining would signal that process. */
static bool mapped(int kpf, uint64_t pfn, bool *known)
{
	uint64_t flags;

	*known = page_flags(kpf, pfn, &flags);
	return !*known ||
	       (flags & (1ULL << KPF_MMAP | 1ULL << KPF_ANON)) != 0;
}

/* 0, or the errno the kernel refused the page with. */
static int offline_page(const char *file, uint64_t pfn)
{
	const char *dir = getenv("MFRD_SYSFS_MEMORY");
	char buf[32], *path;
	int fd, len, err = 0;

	if (asprintf(&path, "%s/%s", dir && *dir ? dir : SYSFS_MEMORY,
		     file) < 0)
		abort();
	/*
	 * Non-blocking, so that a FIFO without a reader standing in for the
	 * file (a test) fails at once instead of holding the loop, and with
	 * it SIGTERM, forever; writes block as a sysfs write does.
	 */
	fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
	free(path);
	if (fd < 0)
		return errno;
	if (fcntl(fd, F_SETFL, 0)) {
		err = errno;
		close(fd);
		return err;
	}
	len = snprintf(buf, sizeof(buf), "0x%llx",
		       (unsigned long long)pfn << PAGE_SHIFT);
	if (write(fd, buf, len) != len)
		err = errno ?: EIO;
	close(fd);
	return err;
}

/*
 * A record made on another DIMM than the one SMBIOS places at that
 * address now: a DIMM swap, or only a BIOS update that reformatted the
 * strings.  mfrd cannot tell which, so the page is offlined all the same
 * (a poisoned page put back in service costs more than a healthy one
 * lost) and the journal suggests "mfrctl forget --dimm" for a DIMM that
 * was really replaced.  Unknown either way (no SMBIOS then or now, an
 * interleaved address): not a change.
 */
static bool dimm_changed(struct mfrd *d, const struct mfrd_earlier *e)
{
	struct mfrd_dimm now;

	if (!e->dimm_id ||
	    mfrd_dimm_lookup(d->dimms, e->pfn << PAGE_SHIFT, &now))
		return false;
	return strcmp(now.id, e->dimm_id) != 0;
}

static int cmp_pfn(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Keep in v (count *cnt) the pfns still in the sorted pfns[n]. */
static void keep_recorded(uint64_t *v, unsigned int *cnt, const uint64_t *pfns,
			  size_t n)
{
	unsigned int kept = 0;

	for (unsigned int i = 0; v && i < *cnt; i++)
		if (bsearch(&v[i], pfns, n, sizeof(*pfns), cmp_pfn))
			v[kept++] = v[i];
	*cnt = kept;
}

void mfrd_offline_forgotten(struct mfrd *d, const uint64_t *pfns, size_t n)
{
	keep_recorded(d->failed_pfns, &d->offline_failed, pfns, n);
	keep_recorded(d->dimm_changed_pfns, &d->offline_dimm_changed, pfns,
		      n);
}

/* Append " 0xPFN" to a list of at most FAILED_LISTED pfns. */
static void list_pfn(char *list, size_t size, unsigned int nth, uint64_t pfn)
{
	if (nth <= FAILED_LISTED)
		snprintf(list + strlen(list), size - strlen(list), "%s0x%" PRIx64,
			 nth > 1 ? " " : "", pfn);
}

/*
 * A pass, done in slices from the event loop: soft-offlining one page
 * can take a while (its content is migrated), and 20 000 of them in one
 * go kept the loop, and with it the watchdog, reloads and signals, from
 * running.  The start goes on (connect, READY=1) only when it is done.
 */
struct mfrd_offline_pass {
	struct mfrd *d;
	void (*done)(struct mfrd *d);
	sd_event_source *src;
	struct mfrd_earlier *rec;
	size_t n, i;
	int kpf, first_err;
	unsigned int offlined, already, failed, changed;
	unsigned int hard, in_use;	/* of offlined, of failed */
	char failed_pfns[FAILED_LISTED * 20];
	char changed_pfns[FAILED_LISTED * 20];
	const char *changed_dimm;
	uint64_t slices;
};

/* Pfns per turn of the event loop, and at most this long. */
#define SLICE_PFNS	256
#define SLICE_USEC	(50 * 1000)

static void offline_one(struct mfrd_offline_pass *p, const struct mfrd_earlier *e)
{
	struct mfrd *d = p->d;
	bool flags_known;
	int err;

	/* Told, never skipped: only the operator forgets a page. */
	if (dimm_changed(d, e)) {
		d->dimm_changed_pfns[p->changed] = e->pfn;
		list_pfn(p->changed_pfns, sizeof(p->changed_pfns),
			 ++p->changed, e->pfn);
		if (!p->changed_dimm)
			p->changed_dimm = e->dimm;
	}
	if (hwpoisoned(p->kpf, e->pfn)) {
		p->already++;
		return;
	}
	err = offline_page("soft_offline_page", e->pfn);
	if (err && err != EHWPOISON && !mapped(p->kpf, e->pfn, &flags_known)) {
		err = offline_page("hard_offline_page", e->pfn);
		p->hard += !err;
	} else if (err && err != EHWPOISON) {
		/* Left in service rather than its users signalled. */
		p->in_use += flags_known;
	}
	if (!err) {
		p->offlined++;
	} else if (err == EHWPOISON) {
		p->already++;	/* kpageflags unreadable, or a race */
	} else {
		if (!p->first_err)
			p->first_err = err;
		d->failed_pfns[p->failed] = e->pfn;
		list_pfn(p->failed_pfns, sizeof(p->failed_pfns), ++p->failed,
			 e->pfn);
	}
}

static void log_pass(struct mfrd_offline_pass *p)
{
	struct mfrd_log *l;
	struct mfrd *d = p->d;

	l = mfrd_log_new(p->failed ? LOG_WARNING : LOG_INFO,
			 MFRD_MSGID_RECORDED_OFFLINED);
	mfrd_log_field(l, "MFR_OFFLINED", "%u", p->offlined);
	mfrd_log_field(l, "MFR_ALREADY", "%u", p->already);
	mfrd_log_field(l, "MFR_FAILED", "%u", p->failed);
	if (p->failed) {
		mfrd_log_field(l, "MFR_FAILED_PFNS", "%s", p->failed_pfns);
		mfrd_log_field(l, "ERRNO", "%d", p->first_err);
	}
	/* After the fields that tests and journal queries match on. */
	mfrd_log_field(l, "MFR_HARD_OFFLINED", "%u", p->hard);
	mfrd_log_field(l, "MFR_IN_USE", "%u", p->in_use);
	if (p->failed) {
		mfrd_log_message(l, "pfns recorded as poisoned in earlier boots: %zu; %u offlined now (%u of them hard-offlined: soft-offlining failed and no process mapped them), %u already offline, %u failed (%u of them mapped by a process and not migratable: left in service rather than the process signalled; first error: %s; pfns %s%s)",
				 p->n, p->offlined, p->hard, p->already,
				 p->failed, p->in_use, strerror(p->first_err),
				 p->failed_pfns,
				 p->failed > FAILED_LISTED ? " ..." : "");
	} else {
		mfrd_log_message(l, "pfns recorded as poisoned in earlier boots: %zu; %u offlined now (%u of them hard-offlined: soft-offlining failed and no process mapped them), %u already offline",
				 p->n, p->offlined, p->hard, p->already);
	}
	if (p->changed) {
		char *msg;

		mfrd_log_field(l, "MFR_DIMM_CHANGED", "%u", p->changed);
		mfrd_log_field(l, "MFR_DIMM_CHANGED_PFNS", "%s", p->changed_pfns);
		if (asprintf(&msg, "%s; %u of them recorded on another DIMM than the one at their address now (pfns %s%s), offlined all the same: if that DIMM was replaced, \"mfrctl forget --dimm '%s'\" removes its records",
			     l ? mfrd_log_text(l) : "", p->changed,
			     p->changed_pfns,
			     p->changed > FAILED_LISTED ? " ..." : "",
			     p->changed_dimm ?: "LABEL") < 0)
			abort();
		mfrd_log_message(l, "%s", msg);
		free(msg);
	}
	d->offline_dimm_changed = p->changed;
	d->offline_failed = p->failed;
	mfrd_log_send(l);
	if (p->slices > 1)
		mfrd_logf(LOG_INFO, NULL,
			  "boot offlining of %zu pfns done in %" PRIu64 " slices from the event loop",
			  p->n, p->slices);
	/* A restart in this boot tries the failed ones again (and says so). */
	if (!p->failed)
		mark_done(d);
}

static void pass_free(struct mfrd_offline_pass *p)
{
	if (p->kpf >= 0)
		close(p->kpf);
	sd_event_source_disable_unref(p->src);
	mfrd_store_earlier_free(p->rec, p->n);
	p->d->offline_pass = NULL;
	p->d->offlining = false;
	free(p);
}

static void pass_end(struct mfrd_offline_pass *p)
{
	struct mfrd *d = p->d;
	void (*done)(struct mfrd *d) = p->done;

	pass_free(p);
	done(d);
}

void mfrd_offline_cancel(struct mfrd *d)
{
	if (d->offline_pass)
		pass_free(d->offline_pass);
}

static int on_slice(sd_event_source *s, void *arg)
{
	struct mfrd_offline_pass *p = arg;
	int64_t end = mfrd_monotonic_usec() + SLICE_USEC;
	size_t stop = p->i + SLICE_PFNS;

	p->slices++;
	while (p->i < p->n && p->i < stop && mfrd_monotonic_usec() < end)
		offline_one(p, &p->rec[p->i++]);
	if (p->i < p->n)
		return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	log_pass(p);
	pass_end(p);
	return 0;
}

void mfrd_offline_recorded(struct mfrd *d, void (*done)(struct mfrd *d))
{
	const char *kpf_path = getenv("MFRD_KPAGEFLAGS");
	struct mfrd_offline_pass *p;
	int ret;

	if (done_this_boot(d)) {
		mfrd_logf(LOG_DEBUG, NULL,
			  "the pfns of earlier boots were offlined in this boot already");
		done(d);
		return;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		abort();
	p->d = d;
	p->done = done;
	p->kpf = -1;
	d->offlining = true;
	d->offline_pass = p;
	if (mfrd_store_earlier(mfrd_store(d), &p->rec, &p->n)) {
		mfrd_logf(LOG_ERR, NULL, "cannot read the pfns of earlier boots: %s",
			  mfrd_store_error(mfrd_store(d)));
		mfrd_sup_failed(d->sup, mfrd_store_error(mfrd_store(d)));
		pass_end(p);
		return;
	}
	p->kpf = open(kpf_path && *kpf_path ? kpf_path : KPAGEFLAGS,
		      O_RDONLY | O_CLOEXEC);
	free(d->failed_pfns);
	free(d->dimm_changed_pfns);
	d->failed_pfns = calloc(p->n + 1, sizeof(*d->failed_pfns));
	d->dimm_changed_pfns = calloc(p->n + 1, sizeof(*d->dimm_changed_pfns));
	if (!d->failed_pfns || !d->dimm_changed_pfns)
		abort();
	ret = sd_event_add_defer(d->event, &p->src, on_slice, p);
	/*
	 * Idle: a pending signal, event or timer goes first, else the
	 * slice re-armed at each turn would win every turn.
	 */
	if (ret >= 0)
		ret = sd_event_source_set_priority(p->src,
						   SD_EVENT_PRIORITY_IDLE);
	if (ret >= 0)
		ret = sd_event_source_set_enabled(p->src, SD_EVENT_ONESHOT);
	if (ret < 0) {
		/* Never skipped: in one go, as before the loop ran them. */
		mfrd_logf(LOG_WARNING, NULL,
			  "cannot offline the pfns of earlier boots in slices (%s): in one go",
			  strerror(-ret));
		while (p->i < p->n)
			offline_one(p, &p->rec[p->i++]);
		log_pass(p);
		pass_end(p);
	}
}
