// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What mfrd tells the outside: STATUS= for systemctl status, and the
 * Prometheus textfile.  Both come from the module's status-get and the
 * store's counts.  The metrics are rewritten every metrics_interval and
 * after events, at most once a second: a storm of errors must not turn
 * into a storm of fsyncs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <systemd/sd-daemon.h>

#include "mfrd.h"
#include "mfrd-clock.h"
#include "mfrd-log.h"
#include "mfrd-metrics.h"

#define SOON_USEC	1000000ULL

struct snapshot {
	struct mfrd_metrics m;
	char version[64];
	uint64_t pages;		/* this boot's, every state */
};

static int status_cb(uint8_t cmd, const struct mfr_attr_set *set,
		     struct nlattr **tb, void *arg)
{
	struct snapshot *s = arg;

	(void)cmd;
	for (unsigned int i = 1; i <= MFR_A_STATUS_MAX; i++) {
		if (!tb[i])
			continue;
		if (set->attrs[i].type == MFR_ATTR_STRING) {
			if (i == MFR_A_STATUS_MODULE_VERSION)
				snprintf(s->version, sizeof(s->version), "%s",
					 nla_get_string(tb[i]));
			continue;
		}
		s->m.has[i] = true;
		s->m.status[i] = mfr_genl_get_uint(tb[i]);
	}
	return 0;
}

static void snapshot(struct mfrd *d, struct snapshot *s)
{
	int64_t rows, incidents;

	memset(s, 0, sizeof(*s));
	if (d->connected && !mfrd_status_get(d, status_cb, s)) {
		s->m.module_loaded = true;
		s->m.module_version = s->version;
	} else {
		memset(s->m.has, 0, sizeof(s->m.has));
	}
	if (!mfrd_store_count_states(mfrd_store(d), s->m.pages)) {
		s->m.has_pages = true;
		for (int i = 0; i < MFRD_PAGE_STATES; i++)
			s->pages += s->m.pages[i];
	} else {
		mfrd_sup_failed(d->sup, mfrd_store_error(mfrd_store(d)));
	}
	mfrd_store_check_outside_change(d);
	mfrd_rules_check_outside(d);
	s->m.rules_outside = d->rules_outside;
	s->m.has_earlier_boot_pfns = d->earlier_boot_pfns_known;
	s->m.earlier_boot_pfns = d->earlier_boot_pfns;
	s->m.offline_dimm_changed = d->offline_dimm_changed;
	s->m.offline_failed = d->offline_failed;
	s->m.pages_recorded = d->pages_recorded;
	s->m.daemon_version = MFRCTL_VERSION;
	s->m.protected = !mfrd_unprotected_reason(d);
	s->m.waiting_for_module = !d->connected;
	s->m.ready_unprotected = d->ready_sent && !d->connected;
	s->m.rules_configured = d->rules.n;
	s->m.rules_refused = d->nrefused;
	s->m.rules_file_errors = d->nrules_errors;
	s->m.memfd_cache_entries = mfrd_memfd_cache_count(&d->memfds);
	s->m.memfd_cache_bytes = d->memfds.bytes;
	s->m.start_time = d->start_time;
	s->m.store_errors = mfrd_sup_errors(d->sup);
	incidents = mfrd_store_unacked_incidents(mfrd_store(d));
	if (incidents < 0)
		mfrd_sup_failed(d->sup, mfrd_store_error(mfrd_store(d)));
	/* Unknown is not "none": the alert stays until it is known. */
	s->m.store_in_memory = mfrd_sup_where(d->sup) != MFRD_SUP_FILE;
	s->m.store_recovered = incidents != 0 || s->m.store_in_memory;
	s->m.store_locked = mfrd_sup_locked(d->sup);
	s->m.rules_pushed_time = d->rules_pushed_usec / 1e6;
	s->m.reload_ok_time = d->reload_ok_usec / 1e6;
	s->m.reloads_failed = d->reloads_failed;
	s->m.events_lost = d->events_lost;
	s->m.redumps = d->redumps;
	s->m.journal_suppressed = mfrd_log_suppressed_total();
	s->m.events_pruned = d->events_pruned;
	rows = mfrd_store_count_events(mfrd_store(d));
	if (rows >= 0) {
		s->m.has_events_rows = true;
		s->m.events_rows = (uint64_t)rows;
	} else {
		mfrd_sup_failed(d->sup, mfrd_store_error(mfrd_store(d)));
	}
	s->m.write_time = mfrd_now_usec() / 1e6;
}

/* What the rules in force are, when not all configured ones are. */
static void rules_note(const struct mfrd *d, char *buf, size_t size)
{
	buf[0] = '\0';
	if (d->nrefused)
		snprintf(buf, size, "; %zu of %zu rules NOT in force (mfr.ko refused them, see the journal), the others are",
			 d->nrefused, d->rules.n);
	if (d->nrules_errors)
		snprintf(buf + strlen(buf), size - strlen(buf),
			 "; rules.d has %zu error%s (see the journal): the %zu rules that parse are in force",
			 d->nrules_errors, d->nrules_errors == 1 ? "" : "s",
			 d->rules.n);
}

static void send_status(struct mfrd *d, const struct snapshot *s,
			const char *extra)
{
	char pages[64] = "pages recorded: store unreadable", rules[256];
	const char *standin = mfrd_sup_standin_path(d->sup);
	char *status, *store = NULL;
	int r;

	if (mfrd_sup_locked(d->sup))
		r = asprintf(&store, "; store file LOCKED by another program, records kept aside in %s until it is released (see the journal)",
			     standin ?: "memory");
	else if (mfrd_sup_where(d->sup) != MFRD_SUP_FILE)
		r = asprintf(&store, "; store file not usable, records kept in %s (see the journal)",
			     standin ?: "memory only");
	else
		r = asprintf(&store, "%s", s->m.store_recovered ?
			     "; a store incident awaits \"mfrctl store ack\" (see the journal)" : "");
	if (r < 0)
		abort();
	rules_note(d, rules, sizeof(rules));
	if (s->m.has_pages)
		snprintf(pages, sizeof(pages), "%" PRIu64 " pages recorded",
			 s->pages);
	const char *degraded = d->ready_degraded && !d->connected ?
			       "DEGRADED, host NOT protected (ready after ready_timeout without its rules in mfr.ko): " :
			       d->nrefused || d->nrules_errors ?
			       "DEGRADED, not every rule in force: " : "";

	if (!d->connected)
		r = asprintf(&status, "%swaiting for mfr.ko: HugeTLB memfds are not protected%s%s%s%s",
			     degraded, rules, store, d->note ? "; " : "", d->note ?: "");
	else
		r = asprintf(&status, "%s%" PRIu64 " rules, %s, module loaded, generation %" PRIu64 "%s%s%s%s",
			     degraded, s->m.has[MFR_A_STATUS_RULES] ?
			     s->m.status[MFR_A_STATUS_RULES] :
			     (uint64_t)d->rules.n,
			     pages,
			     s->m.has[MFR_A_STATUS_GENERATION] ?
			     s->m.status[MFR_A_STATUS_GENERATION] :
			     d->gens.generation,
			     rules, store, d->note ? "; " : "", d->note ?: "");
	if (r < 0)
		abort();
	free(store);
	if (extra || !d->status || strcmp(status, d->status))
		sd_notifyf(0, "%s%sSTATUS=%s", extra ?: "", extra ? "\n" : "",
			   status);
	free(d->status);
	d->status = status;
}

void mfrd_report_status(struct mfrd *d, const char *extra)
{
	struct snapshot s;

	snapshot(d, &s);
	send_status(d, &s, extra);
}

static void write_metrics(struct mfrd *d)
{
	const char *path = d->cfg.metrics_file;
	struct snapshot s;
	int ret = 0;

	snapshot(d, &s);
	send_status(d, &s, NULL);
	d->metrics_last_usec = (uint64_t)mfrd_monotonic_usec();
	if (path)
		ret = mfrd_metrics_write(path, &s.m);
	/* Each failure once: a missing directory is common, not fatal. */
	if (ret && ret != d->metrics_errno) {
		if (ret == -ENOENT)
			mfrd_logf(LOG_WARNING, NULL,
				  "the directory of %s does not exist: no metrics until it does",
				  path);
		else
			mfrd_logf(LOG_WARNING, NULL, "cannot write %s: %s",
				  path, strerror(-ret));
	} else if (!ret && d->metrics_errno) {
		mfrd_logf(LOG_INFO, NULL, "%s written again", path);
	}
	d->metrics_errno = ret;
}

static int on_soon(sd_event_source *s, uint64_t usec, void *arg)
{
	(void)s;
	(void)usec;
	write_metrics(arg);
	return 0;
}

void mfrd_report_soon(struct mfrd *d)
{
	uint64_t next = d->metrics_last_usec + SOON_USEC;
	int enabled = SD_EVENT_OFF;

	if (d->metrics_soon)
		sd_event_source_get_enabled(d->metrics_soon, &enabled);
	if (enabled != SD_EVENT_OFF)
		return;			/* already due */
	if (!d->metrics_last_usec || (uint64_t)mfrd_monotonic_usec() >= next || !d->event ||
	    !d->metrics_soon) {
		write_metrics(d);
		return;
	}
	sd_event_source_set_time(d->metrics_soon, next);
	sd_event_source_set_enabled(d->metrics_soon, SD_EVENT_ONESHOT);
}

static int on_interval(sd_event_source *s, uint64_t usec, void *arg)
{
	struct mfrd *d = arg;

	(void)usec;
	mfrd_prune_events(d);
	/* Refused rules are asked again: a cgroup may exist by now. */
	mfrd_rules_retry(d);
	write_metrics(d);
	sd_event_source_set_time_relative(s, d->cfg.metrics_interval *
					  1000000ULL);
	return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

int mfrd_report_rearm(struct mfrd *d)
{
	int ret;

	ret = sd_event_source_set_time_relative(d->metrics_timer,
						d->cfg.metrics_interval *
						1000000ULL);
	return ret < 0 ? ret :
	       sd_event_source_set_enabled(d->metrics_timer, SD_EVENT_ONESHOT);
}

int mfrd_report_start(struct mfrd *d)
{
	int ret;

	ret = sd_event_add_time_relative(d->event, &d->metrics_timer,
					 CLOCK_MONOTONIC,
					 d->cfg.metrics_interval * 1000000ULL,
					 0, on_interval, d);
	if (ret < 0)
		return ret;
	/* Armed by mfrd_report_soon() when a rewrite has to wait. */
	ret = sd_event_add_time(d->event, &d->metrics_soon, CLOCK_MONOTONIC,
				0, 0, on_soon, d);
	if (ret < 0)
		return ret;
	return sd_event_source_set_enabled(d->metrics_soon, SD_EVENT_OFF);
}

void mfrd_report_stop(struct mfrd *d)
{
	d->metrics_timer = sd_event_source_disable_unref(d->metrics_timer);
	d->metrics_soon = sd_event_source_disable_unref(d->metrics_soon);
	free(d->status);
	d->status = NULL;
}
