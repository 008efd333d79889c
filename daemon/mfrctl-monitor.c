// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrctl monitor: print the "events" group's notifications as they come,
 * one line each.  Lost events (receive buffer overrun) are reported and
 * listening goes on; SIGINT and SIGTERM end it cleanly.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mfr-time.h"
#include "mfrctl.h"

struct monitor {
	struct mfrctl *ctl;
	uint32_t seen;
};

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

/* "page-poisoned pfn=0x1234 head-pfn=0x1200 ...", every attribute given */
/* -t: when the event was read, ISO 8601 in UTC with microseconds. */
static void timestamp(char *buf, size_t size)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	mfr_time_text((int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000,
		      MFR_TIME_USEC, buf, size);
}

static int print_text(const char *event, const struct mfr_attr_set *set,
		      struct nlattr **tb)
{
	char when[40];
	unsigned int i;
	char *v;

	if (output_opts.timestamps) {
		timestamp(when, sizeof(when));
		printf("%s ", when);
	}
	fputs(event, stdout);
	for (i = 1; i <= set->max; i++) {
		if (!tb[i] || set->attrs[i].type == MFR_ATTR_UNUSED ||
		    set->attrs[i].type == MFR_ATTR_NEST)
			continue;
		v = attr_text(set, i, tb[i], true);
		if (!v)
			return -ENOMEM;
		printf(" %s=%s", set->attrs[i].name, v);
		free(v);
	}
	putchar('\n');
	return 0;
}

static int print_json(const char *event, const struct mfr_attr_set *set,
		      struct nlattr **tb)
{
	json_object *doc = json_object_new_object();
	char when[40];
	int ret = 0;

	if (!doc)
		return -ENOMEM;
	/* "time" (with -t) and "event" first, then the attributes */
	if (output_opts.timestamps) {
		timestamp(when, sizeof(when));
		ret = json_add(doc, "time", json_object_new_string(when));
	}
	ret = ret ?: json_add(doc, "event", json_object_new_string(event)) ?:
	      json_add_attrs(doc, set, tb);
	if (!ret)
		ret = json_print(doc);
	json_object_put(doc);
	return ret;
}

static int on_event(uint8_t cmd, const struct mfr_attr_set *set,
		    struct nlattr **tb, void *arg)
{
	const char *event = mfr_event_name(cmd);
	struct monitor *m = arg;
	int ret;

	if (!event)
		return 0;	/* not a notification */
	ret = m->ctl->json ? print_json(event, set, tb) :
			     print_text(event, set, tb);
	if (!ret && fflush(stdout))
		ret = -errno;
	if (ret)
		return ret;
	m->seen++;
	/* a positive value stops reading: --count is reached */
	return m->ctl->count && m->seen == m->ctl->count;
}

static int report_overrun(struct mfrctl *ctl)
{
	json_object *doc;
	int ret = 0;

	fprintf(stderr, "mfrctl: monitor: overrun: %s\n",
		mfr_genl_strerror(MFR_GENL_EOVERRUN));
	if (!ctl->json)
		return 0;
	doc = json_object_new_object();
	if (!doc)
		return -ENOMEM;
	ret = json_add(doc, "event", json_object_new_string("overrun"));
	if (!ret)
		ret = json_print(doc);
	json_object_put(doc);
	if (!ret && fflush(stdout))
		ret = -errno;
	return ret;
}

/*
 * Block the stop signals except while waiting in ppoll(), so that one
 * arriving between two waits is not missed.
 */
static int catch_stop_signals(sigset_t *wait_mask)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };
	sigset_t stop;

	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	if (sigprocmask(SIG_BLOCK, &stop, wait_mask) ||
	    sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL))
		return -errno;
	sigdelset(wait_mask, SIGINT);
	sigdelset(wait_mask, SIGTERM);
	return 0;
}

int monitor_run(struct mfrctl *ctl)
{
	struct monitor m = { .ctl = ctl };
	struct pollfd pfd;
	sigset_t wait_mask;
	int ret;

	ret = mfr_genl_subscribe(ctl->genl);
	if (!ret)
		ret = catch_stop_signals(&wait_mask);
	if (ret)
		return mfrctl_fail(ctl, ret);

	pfd.fd = mfr_genl_fd(ctl->genl);
	pfd.events = POLLIN;
	while (!stop_signal && !(ctl->count && m.seen == ctl->count)) {
		if (ppoll(&pfd, 1, NULL, &wait_mask) < 0) {
			if (errno == EINTR)
				continue;
			return mfrctl_fail(ctl, -errno);
		}
		ret = mfr_genl_recv_events(ctl->genl, on_event, &m);
		if (ret == -MFR_GENL_EOVERRUN)
			ret = report_overrun(ctl);
		if (ret)
			return mfrctl_fail(ctl, ret);
	}
	return EXIT_OK;
}
