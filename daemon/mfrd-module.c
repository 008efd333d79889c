// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfr.ko coming and going.  Two watchers, because either alone can miss:
 *
 * - libudev, on the "kernel" uevent source filtered on subsystem
 *   "module": immediate, and works without udevd (a test VM, an initrd);
 *   the kernel sends a module's "add" only after its init ran, so the
 *   family is registered by then.  The "udev" source would need udevd.
 * - a 2 s tick: /sys/module/mfr, and a status-get on the connection, so
 *   an overflowed uevent socket or a reload between two uevents we did
 *   not see (the generation restarts lower) still gets noticed.
 *
 * Connecting is: request socket, events socket subscribed *before* the
 * rules are pushed and the dumps reconciled, so no event falls between
 * the dump and the subscription.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libudev.h>

#include "mfrd.h"
#include "mfrd-log.h"

#define TICK_USEC	(2 * 1000000ULL)

static bool module_live(void)
{
	char state[16] = "";
	FILE *f = fopen("/sys/module/mfr/initstate", "re");

	if (!f)
		return false;
	if (!fgets(state, sizeof(state), f))
		state[0] = '\0';
	fclose(f);
	return !strcmp(state, "live\n");
}

int mfrd_status_get(struct mfrd *d, mfr_genl_cb cb, void *arg)
{
	struct nl_msg *req;
	int ret;

	if (!d->req)
		return -MFR_GENL_ENOFAMILY;
	req = mfr_genl_request(d->req, MFR_CMD_STATUS_GET);
	if (!req)
		return -ENOMEM;
	ret = mfr_genl_do(d->req, req, cb, arg);
	nlmsg_free(req);
	return ret;
}

static int on_events(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct mfrd *d = arg;

	(void)s;
	(void)fd;
	(void)revents;
	mfrd_events_read(d);
	return 0;
}

struct module_info {
	char version[64];
	uint32_t api;
	uint64_t generation;
};

static int info_cb(uint8_t cmd, const struct mfr_attr_set *set,
		   struct nlattr **tb, void *arg)
{
	struct module_info *info = arg;

	(void)cmd;
	(void)set;
	if (tb[MFR_A_STATUS_MODULE_VERSION])
		snprintf(info->version, sizeof(info->version), "%s",
			 nla_get_string(tb[MFR_A_STATUS_MODULE_VERSION]));
	if (tb[MFR_A_STATUS_HOOKS_API_VERSION])
		info->api = nla_get_u32(tb[MFR_A_STATUS_HOOKS_API_VERSION]);
	if (tb[MFR_A_STATUS_GENERATION])
		info->generation =
			mfr_genl_get_uint(tb[MFR_A_STATUS_GENERATION]);
	return 0;
}

/* A failure to connect is logged once, not every tick. */
static void connect_failed(struct mfrd *d, struct mfr_genl *g, int err,
			   const char *what)
{
	static int logged;
	char *why;

	if (err != logged) {
		why = g ? mfrd_genl_error_text(g, err) :
			  strdup(mfr_genl_strerror(err));
		mfrd_logf(LOG_ERR, NULL, "cannot connect to mfr.ko (%s): %s",
			  what, why ?: "?");
		free(why);
		logged = err;
	}
	mfr_genl_close(d->req);
	mfr_genl_close(d->events);
	d->req = d->events = NULL;
}

int mfrd_module_try_connect(struct mfrd *d)
{
	struct module_info info = { 0 };
	struct mfrd_log *l;
	int ret, found;

	/* The start's order: boot offlining, then connect (it calls us). */
	if (d->connected || d->offlining)
		return 0;
	ret = mfr_genl_open(&d->req);
	if (ret == -MFR_GENL_ENOFAMILY)
		return 0;		/* not loaded: the watchers wait */
	if (ret) {
		connect_failed(d, NULL, ret, "request socket");
		return 0;
	}
	ret = mfr_genl_open(&d->events);
	if (!ret)
		ret = mfr_genl_subscribe(d->events);
	if (ret) {
		connect_failed(d, d->events, ret, "events");
		return 0;
	}
	ret = sd_event_add_io(d->event, &d->events_src,
			      mfr_genl_fd(d->events), EPOLLIN, on_events, d);
	if (ret < 0) {
		connect_failed(d, NULL, ret, "event loop");
		return ret;
	}
	d->connected = true;
	mfrd_gens_reset(&d->gens);
	mfrd_memfd_cache_clear(&d->memfds);

	mfrd_rules_push(d, &d->rules, false);
	found = mfrd_reconcile(d, "mfr.ko loaded");
	d->need_reconcile = found < 0;
	if (d->failed)
		return -1;
	ret = mfrd_status_get(d, info_cb, &info);

	l = mfrd_log_new(LOG_NOTICE, MFRD_MSGID_MODULE_STATE);
	mfrd_log_field(l, "MFR_MODULE_STATE", "loaded");
	if (!ret) {
		mfrd_log_field(l, "MFR_MODULE_VERSION", "%s", info.version);
		mfrd_log_field(l, "MFR_HOOKS_API_VERSION", "%u", info.api);
		mfrd_log_field(l, "MFR_GENERATION", "%llu",
			       (unsigned long long)info.generation);
	}
	mfrd_log_message(l, "mfr.ko %s (hook API %u) is loaded: %zu of %zu rules pushed%s, events subscribed, dumps reconciled%s",
			 info.version[0] ? info.version : "?", info.api,
			 d->rules.n - d->nrefused, d->rules.n,
			 d->nrefused ? " (the others refused, see above)" : "",
			 found < 0 ? " (failed, retrying)" : "");
	mfrd_log_send(l);
	mfrd_report_soon(d);
	mfrd_report_status(d, NULL);
	mfrd_ready_if_protected(d);
	return 0;
}

void mfrd_module_close(struct mfrd *d)
{
	d->events_src = sd_event_source_disable_unref(d->events_src);
	mfr_genl_close(d->req);
	mfr_genl_close(d->events);
	d->req = d->events = NULL;
	d->connected = false;
	d->need_reconcile = false;
	mfrd_memfd_cache_clear(&d->memfds);
	mfrd_gens_free(&d->gens);
}

void mfrd_module_disconnect(struct mfrd *d, const char *why)
{
	struct mfrd_log *l;

	if (!d->connected)
		return;
	mfrd_module_close(d);

	l = mfrd_log_new(LOG_NOTICE, MFRD_MSGID_MODULE_STATE);
	mfrd_log_field(l, "MFR_MODULE_STATE", "gone");
	mfrd_log_message(l, "mfr.ko is gone (%s): waiting for it to be loaded again",
			 why);
	mfrd_log_send(l);
	mfrd_report_soon(d);
	mfrd_report_status(d, NULL);
}

static int on_uevent(sd_event_source *s, int fd, uint32_t revents, void *arg)
{
	struct mfrd *d = arg;
	struct udev_device *dev;
	const char *action, *name;

	(void)s;
	(void)fd;
	(void)revents;
	while ((dev = udev_monitor_receive_device(d->monitor))) {
		action = udev_device_get_action(dev);
		name = udev_device_get_sysname(dev);
		if (name && action && !strcmp(name, "mfr")) {
			if (!strcmp(action, "remove")) {
				mfrd_module_disconnect(d, "module removed");
			} else if (!strcmp(action, "add")) {
				/* An add while connected: we missed the remove. */
				mfrd_module_disconnect(d, "module reloaded");
				mfrd_module_try_connect(d);
			}
		}
		udev_device_unref(dev);
	}
	return 0;
}

/* Is the connection still to the module that is loaded now? */
static void check_connection(struct mfrd *d)
{
	struct module_info info = { 0 };
	int ret;

	if (!module_live()) {
		mfrd_module_disconnect(d, "module unloaded");
		return;
	}
	ret = mfrd_status_get(d, info_cb, &info);
	if (ret)
		mfrd_module_disconnect(d, mfr_genl_strerror(ret));
	else if (info.generation < d->gens.dump_gen)
		mfrd_module_disconnect(d, "module reloaded");
}

static int on_tick(sd_event_source *s, uint64_t usec, void *arg)
{
	struct mfrd *d = arg;

	(void)usec;
	/*
	 * An idle loop feeds the watchdog every quarter of its interval, not
	 * at sd-event's half to three quarters: a loop a loaded host holds
	 * up has that much more room before systemd kills it.
	 */
	mfrd_watchdog_progress(d);
	mfrd_log_ratelimit_tick();
	if (d->connected)
		check_connection(d);
	if (!d->connected && module_live())
		mfrd_module_try_connect(d);
	/* A reconcile that failed (a dump cut short by a tenant's churn):
	 * again, but no more often than any other. */
	if (d->connected && d->need_reconcile) {
		d->need_reconcile = false;
		mfrd_reconcile_soon(d, "retry");
	}
	sd_event_source_set_time_relative(s, TICK_USEC);
	sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	return 0;
}

int mfrd_module_watch(struct mfrd *d)
{
	int ret;

	ret = sd_event_add_time_relative(d->event, &d->tick_src,
					 CLOCK_MONOTONIC, TICK_USEC, 0,
					 on_tick, d);
	if (ret < 0)
		return ret;

	d->udev = udev_new();
	if (d->udev)
		d->monitor = udev_monitor_new_from_netlink(d->udev, "kernel");
	if (!d->monitor ||
	    udev_monitor_filter_add_match_subsystem_devtype(d->monitor,
							    "module", NULL) < 0 ||
	    udev_monitor_enable_receiving(d->monitor) < 0 ||
	    sd_event_add_io(d->event, &d->monitor_src,
			    udev_monitor_get_fd(d->monitor), EPOLLIN,
			    on_uevent, d) < 0) {
		/* The tick still notices, two seconds later at most. */
		mfrd_logf(LOG_WARNING, NULL,
			  "no uevent monitor (%s): watching /sys/module/mfr every 2 s only",
			  strerror(errno));
		d->monitor = udev_monitor_unref(d->monitor);
	}
	return 0;
}

void mfrd_module_unwatch(struct mfrd *d)
{
	d->monitor_src = sd_event_source_disable_unref(d->monitor_src);
	d->tick_src = sd_event_source_disable_unref(d->tick_src);
	d->monitor = udev_monitor_unref(d->monitor);
	d->udev = udev_unref(d->udev);
}
