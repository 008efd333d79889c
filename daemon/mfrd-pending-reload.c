// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A reload while the start is pending.  systemd runs ExecReload only once
 * the start job is done: a "systemctl reload" sent while mfrd has not
 * sent READY=1 (the module refused the rules, say) is folded into that
 * start job and waits for READY=1, up to ready_timeout, and mfrd never
 * sees it.  So until READY=1, mfrd watches mfrd.conf and rules.d itself
 * (inotify) and reloads as soon as a file there changes: once the
 * operator has fixed the refused rule, the rules are pushed, READY=1
 * follows, and the waiting "systemctl reload" returns at once.  After
 * READY=1 the files are read only on SIGHUP, as before.
 */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>

#include "mfrd.h"
#include "mfrd-log.h"

/* An editor writes a file in several steps: reload once they are done. */
#define SETTLE_USEC	(200 * 1000)

#define WATCH_MASK	(IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | \
			 IN_CREATE | IN_DELETE | IN_ONLYDIR)

static void stop_watching(struct mfrd *d)
{
	d->pending_conf_src = sd_event_source_disable_unref(d->pending_conf_src);
	d->pending_rules_src = sd_event_source_disable_unref(d->pending_rules_src);
	d->pending_settle_src = sd_event_source_disable_unref(d->pending_settle_src);
}

static int on_settled(sd_event_source *s, uint64_t usec, void *arg)
{
	struct mfrd *d = arg;

	(void)s;
	(void)usec;
	if (d->ready_sent) {
		stop_watching(d);
		return 0;
	}
	mfrd_logf(LOG_NOTICE, NULL,
		  "the configuration changed while the start waits for its rules: reading it again now (\"systemctl reload\" waits for the start to end)");
	mfrd_reload_now(d, false);
	if (d->ready_sent)
		stop_watching(d);
	return 0;
}

static int on_change(sd_event_source *s, const struct inotify_event *ev,
		     void *arg)
{
	struct mfrd *d = arg;
	const char *conf_name;
	uint64_t now;

	if (d->ready_sent) {
		stop_watching(d);
		return 0;
	}
	/* mfrd.conf's directory holds other files: only mfrd.conf counts. */
	if (s == d->pending_conf_src) {
		conf_name = strrchr(d->config_path, '/');
		conf_name = conf_name ? conf_name + 1 : d->config_path;
		if (!ev->len || strcmp(ev->name, conf_name))
			return 0;
	}
	if (sd_event_now(d->event, CLOCK_MONOTONIC, &now) < 0)
		return 0;
	if (d->pending_settle_src) {
		sd_event_source_set_time(d->pending_settle_src,
					 now + SETTLE_USEC);
		return sd_event_source_set_enabled(d->pending_settle_src,
						   SD_EVENT_ONESHOT);
	}
	return sd_event_add_time(d->event, &d->pending_settle_src,
				 CLOCK_MONOTONIC, now + SETTLE_USEC, 0,
				 on_settled, d);
}

/* A directory that cannot be watched leaves SIGHUP: said, not fatal. */
static void watch(struct mfrd *d, sd_event_source **src, const char *dir)
{
	int ret = sd_event_add_inotify(d->event, src, dir, WATCH_MASK,
				       on_change, d);

	if (ret < 0)
		mfrd_logf(LOG_INFO, NULL,
			  "cannot watch %s (%s): until READY=1 a change there is read on the retry of refused rules or on SIGHUP",
			  dir, strerror(-ret));
}

void mfrd_pending_reload_watch(struct mfrd *d)
{
	char *conf = strdup(d->config_path);

	if (!conf)
		abort();
	if (!d->ready_sent && !d->pending_conf_src && !d->pending_rules_src) {
		watch(d, &d->pending_conf_src, dirname(conf));
		watch(d, &d->pending_rules_src, d->rules_dir);
	}
	free(conf);
}

void mfrd_pending_reload_stop(struct mfrd *d)
{
	stop_watching(d);
}
