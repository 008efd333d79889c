// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrd: records every memory error mfr.ko reports, pushes the operator's
 * rules to it, and hard-offlines at boot the pages that failed in
 * earlier boots.  This file is the command line, the start-up order and
 * the signals; the rest is in the files mfrd.h lists.
 *
 * Start-up order is protection first: settings, then the rules pushed
 * (when the module is there) before anything else can fail; then the
 * store (see mfrd-store-recover.c: a damaged one is salvaged into a
 * fresh one, any other failure leaves the file alone), boot offlining,
 * and READY=1 only once the rules are in the module (or at once, if
 * mfrd.conf says ready_without_module), so that workloads
 * ordered after mfrd.service find their pages offlined and their rules
 * in place.
 *
 * "mfrd --reload" is systemd's ExecReload: it sends SIGHUP and waits for
 * the daemon to write the outcome to $RUNTIME_DIRECTORY/reload, so that
 * "systemctl reload mfrd" fails when the new rules were refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "mfrd.h"
#include "mfrd-atomic-file.h"
#include "mfrd-clock.h"
#include "mfrd-dimm.h"
#include "mfrd-log.h"
#include "mfrd-store-recover.h"

#define BOOT_ID_FILE	"/proc/sys/kernel/random/boot_id"
#define CGROUP_ROOT	"/sys/fs/cgroup"
#define RUNTIME_DIR	"/run/mfrd"
/* Retries of a store file that could not be used: 1 s doubling to 5 min. */
#define STORE_RETRY_MIN_USEC	1000000ULL
#define STORE_RETRY_MAX_USEC	(300 * 1000000ULL)
/* ... to 30 s while it is locked: records wait aside for its release. */
#define STORE_RETRY_LOCKED_MAX_USEC	(30 * 1000000ULL)
/* Settings with errors at start are read again this often. */
#define CONFIG_RETRY_SEC	5
#define CONFIG_RETRY_TEXT	"5 s"
/* Pages given their memory identity per turn of the event loop. */
#define IDENTIFY_SLICE	256
/* How long "mfrd --reload" waits for the daemon's answer. */
#define RELOAD_TIMEOUT_USEC	(60 * 1000000LL)

enum { EXIT_USAGE = 2 };

static const char usage_text[] =
	"usage: mfrd [--config FILE] [--rules-dir DIR] [--state-dir DIR]\n"
	"            [--metrics-file FILE|none] [--no-offline] [--check]\n"
	"       mfrd --reload [PID]   (default PID: $MAINPID)\n";

enum {
	OPT_CONFIG = 0x100,
	OPT_RULES_DIR,
	OPT_STATE_DIR,
	OPT_METRICS_FILE,
	OPT_NO_OFFLINE,
	OPT_CHECK,
	OPT_RELOAD,
};

static const struct option options[] = {
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "rules-dir", required_argument, NULL, OPT_RULES_DIR },
	{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
	{ "metrics-file", required_argument, NULL, OPT_METRICS_FILE },
	{ "no-offline", no_argument, NULL, OPT_NO_OFFLINE },
	{ "check", no_argument, NULL, OPT_CHECK },
	{ "reload", no_argument, NULL, OPT_RELOAD },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

int64_t mfrd_now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* NAME in mfrd's runtime directory. */
static char *runtime_path(const char *name)
{
	const char *dir = getenv("RUNTIME_DIRECTORY");
	char *path;

	/* systemd may list several, separated by ':'; ours is the first. */
	if (!dir || !*dir)
		dir = RUNTIME_DIR;
	if (asprintf(&path, "%.*s/%s", (int)strcspn(dir, ":"), dir, name) < 0)
		abort();
	return path;
}

static char *reload_result_path(void)
{
	return runtime_path("reload");
}

/*
 * The stand-in of the store file at path: in the runtime directory, which
 * outlives a restart of mfrd (RuntimeDirectoryPreserve=restart), named
 * after that path so that it is only ever merged into the store it
 * stood in for.  FNV-1a: a name, not a secret.
 */
static char *standin_path(const char *store_path)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	char name[64], *path, *dir;

	for (const char *c = store_path; *c; c++)
		h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
	snprintf(name, sizeof(name), "store-standin-%016" PRIx64 ".db", h);
	path = runtime_path(name);
	/* By hand, without systemd's RuntimeDirectory=. */
	dir = strndup(path, strrchr(path, '/') - path);
	if (!dir)
		abort();
	if (mkdir(dir, 0700) && errno != EEXIST)
		mfrd_logf(LOG_WARNING, NULL,
			  "cannot create %s (%m): a stand-in of the store would be in memory only",
			  dir);
	free(dir);
	return path;
}

/*
 * "MONOTONIC_USEC ok|failed" and the reason on the next line, replaced
 * atomically: "mfrd --reload" waits for a time after its SIGHUP.
 */
static void write_reload_result(bool ok, const char *why)
{
	char *path = reload_result_path(), *text, *dir;
	int r;

	if (asprintf(&text, "%lld %s\n%s\n", (long long)mfrd_monotonic_usec(),
		     ok ? "ok" : "failed", why ?: "") < 0)
		abort();
	r = mfrd_atomic_write(path, text, strlen(text), 0644);
	if (r == -ENOENT) {
		/* By hand, without systemd's RuntimeDirectory=. */
		dir = strndup(path, strrchr(path, '/') - path);
		if (!dir)
			abort();
		mkdir(dir, 0755);
		free(dir);
		r = mfrd_atomic_write(path, text, strlen(text), 0644);
	}
	if (r)
		mfrd_logf(LOG_WARNING, NULL, "cannot write %s: %s", path,
			  strerror(-r));
	free(text);
	free(path);
}

void mfrd_store_failed(struct mfrd *d, const char *what)
{
	d->store_errors++;
	if (!strcmp(d->store_last_error, what))
		return;
	snprintf(d->store_last_error, sizeof(d->store_last_error), "%s", what);
	mfrd_logf(LOG_ERR, MFRD_MSGID_STORE_ERROR, "store error: %s", what);
}

static void identify(uint64_t pfn, uint64_t *phys, const char **dimm,
		     const char **dimm_id, void *arg)
{
	static struct mfrd_dimm found;
	struct mfrd *d = arg;

	(void)pfn;
	if (!mfrd_dimm_lookup(d->dimms, *phys, &found)) {
		*dimm = found.label;
		*dimm_id = found.id;
	}
}

/*
 * One slice of pages identified per turn of the event loop, each in one
 * transaction: a storm's thousand pages (or a restart's leftovers) took
 * one fsync each, in one go, and starved the watchdog.
 */
static int on_identify(sd_event_source *s, void *arg)
{
	struct mfrd *d = arg;
	int n = mfrd_store_identify_pages(d->store, identify, d,
					  IDENTIFY_SLICE);

	if (n < 0 && mfrd_store_put_aside(d))
		return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	if (n < 0) {
		mfrd_store_failed(d, mfrd_store_error(d->store));
	} else {
		d->identified += (uint64_t)n;
		d->identify_slices++;
	}
	if (n == IDENTIFY_SLICE)	/* more may be left: next turn */
		return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
	if (d->identify_slices > 1)
		mfrd_logf(LOG_INFO, NULL,
			  "memory identity of %" PRIu64 " pages recorded, in %" PRIu64 " slices",
			  d->identified, d->identify_slices);
	d->identified = d->identify_slices = 0;
	return sd_event_source_set_enabled(s, SD_EVENT_OFF);
}

void mfrd_identify_pages(struct mfrd *d)
{
	int ret = 0;

	if (!d->identify_src)
		ret = sd_event_add_defer(d->event, &d->identify_src,
					 on_identify, d);
	if (ret >= 0)
		ret = sd_event_source_set_enabled(d->identify_src,
						  SD_EVENT_ONESHOT);
	if (ret < 0)
		mfrd_logf(LOG_ERR, NULL,
			  "cannot schedule the memory identity of pages: %s",
			  strerror(-ret));
}

void mfrd_watchdog_progress(struct mfrd *d)
{
	static int64_t last;
	uint64_t interval;
	int64_t now;

	if (!d->cfg.watchdog || sd_watchdog_enabled(0, &interval) <= 0)
		return;
	now = mfrd_monotonic_usec();
	if (now - last < (int64_t)(interval / 4))
		return;
	last = now;
	sd_notify(0, "WATCHDOG=1");
}

static void load_dimms(struct mfrd *d)
{
	const char *why = "";

	d->dimms = mfrd_dimms_load(d->cfg.dmi_table, &why);
	if (!d->dimms)
		mfrd_logf(LOG_INFO, NULL,
			  "no DIMM identity for poisoned pages (%s: %s): records carry the physical address only",
			  d->cfg.dmi_table, why);
}

void mfrd_prune_events(struct mfrd *d)
{
	int64_t before = 0, n;

	if (d->cfg.events_max_age_days)
		before = mfrd_now_usec() -
			 (int64_t)d->cfg.events_max_age_days * 86400 * 1000000;
	n = mfrd_store_prune_events(d->store, before, d->cfg.events_max_rows);
	/* Locked by another program: retention waits for the next tick. */
	if (n < 0 && mfrd_store_locked(d->store))
		mfrd_logf(LOG_DEBUG, NULL, "events log retention skipped: %s",
			  mfrd_store_error(d->store));
	else if (n < 0)
		mfrd_store_failed(d, mfrd_store_error(d->store));
	else
		d->events_pruned += (uint64_t)n;
}

static void apply_log_limits(const struct mfrd_config *cfg)
{
	mfrd_log_set_ratelimit(cfg->log_rate_limit_burst,
			       cfg->log_rate_limit_interval * 1000000ULL);
}

/* Why memfds are not protected now, or NULL if they are. */
static const char *unprotected_reason(const struct mfrd *d)
{
	if (!d->connected)
		return "mfr.ko is not loaded (a kernel without the mfr hooks, or the module not loaded yet)";
	if (d->rules_refused)
		return "mfr.ko refused the rules (the journal names the rule; retried every metrics_interval)";
	return NULL;
}

void mfrd_ready_if_protected(struct mfrd *d)
{
	/* Never before the pfns of earlier boots are offline. */
	if (d->offlining)
		return;
	if (d->ready_sent) {
		if (d->ready_degraded && !unprotected_reason(d)) {
			d->ready_degraded = false;
			mfrd_logf(LOG_NOTICE, MFRD_MSGID_READY_UNPROTECTED,
				  "protected now: the %zu rules are in mfr.ko",
				  d->rules.n);
			mfrd_report_soon(d);
		}
		return;
	}
	if (unprotected_reason(d) && !d->cfg.ready_without_module)
		return;
	d->ready_sent = true;
	mfrd_report_status(d, "READY=1");
}

/*
 * READY=1 after ready_timeout even without protection: units ordered
 * after mfrd.service (VMs) must not wait forever for a module that a
 * fallback kernel lacks or for a rule that is refused, and neither must
 * "apt upgrade" nor a reload queued behind the start job.  Loudly: a
 * warning, STATUS and mfrd_ready_unprotected say the host is not
 * protected, until it is.
 */
static void ready_unprotected(struct mfrd *d, unsigned int timeout,
			      const char *why)
{
	struct mfrd_log *l = mfrd_log_new(LOG_WARNING,
					  MFRD_MSGID_READY_UNPROTECTED);

	mfrd_log_field(l, "MFR_READY_TIMEOUT", "%u", timeout);
	mfrd_log_field(l, "MFR_UNPROTECTED_REASON", "%s", why);
	mfrd_log_message(l, "host NOT protected after %u s (ready_timeout): %s; READY=1 sent all the same so that units ordered after mfrd.service start, their HugeTLB memfds unprotected until this is fixed",
			 timeout, why);
	mfrd_log_send(l);
	d->ready_sent = true;
	d->ready_degraded = true;
}

static int on_ready_timeout(sd_event_source *s, uint64_t usec, void *arg)
{
	struct mfrd *d = arg;
	const char *why = unprotected_reason(d);

	(void)s;
	(void)usec;
	if (d->ready_sent || !why)
		return 0;
	ready_unprotected(d, d->cfg.ready_timeout, why);
	mfrd_report_status(d, "READY=1");
	mfrd_report_soon(d);
	return 0;
}

/* ready_timeout counts from the start of the process. */
static int arm_ready_timeout(struct mfrd *d, int64_t started)
{
	if (d->ready_sent || !d->cfg.ready_timeout)
		return 0;
	return sd_event_add_time(d->event, &d->ready_timer, CLOCK_MONOTONIC,
				 (uint64_t)started +
				 d->cfg.ready_timeout * 1000000ULL,
				 0, on_ready_timeout, d);
}

void mfrd_rules_retry(struct mfrd *d)
{
	int ret;

	if (!d->connected || !d->rules_refused)
		return;
	d->rules_retrying = true;
	ret = mfrd_rules_push(d, &d->rules);
	d->rules_retrying = false;
	if (ret)
		return;
	d->rules_refused = false;
	free(d->rules_refusal);
	d->rules_refusal = NULL;
	mfrd_logf(LOG_NOTICE, MFRD_MSGID_CONFIG_REJECTED,
		  "the rules refused earlier are accepted now: %zu rules in mfr.ko",
		  d->rules.n);
	/* Our rule-replace moved the generation: re-base. */
	d->need_reconcile = mfrd_reconcile(d, "rules pushed") < 0;
	mfrd_ready_if_protected(d);
	mfrd_report_soon(d);
}

void mfrd_fail(struct mfrd *d)
{
	d->failed = true;
	if (d->event)
		sd_event_exit(d->event, EXIT_FAILURE);
}

char *mfrd_genl_error_text(struct mfr_genl *g, int err)
{
	char *s = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&s, &size);

	if (!f)
		abort();
	mfr_genl_print_error(f, g, err);
	if (fclose(f))
		abort();
	return s;
}

/* mfrd.conf and rules.d, with the command line's overrides applied. */
static int load_settings(struct mfrd *d, struct mfrd_config *cfg,
			 struct mfrd_rules *rules, struct mfrd_errors *errs)
{
	if (mfrd_config_load(d->config_path, cfg, errs))
		return -1;
	if (mfrd_rules_load_dir(d->rules_dir, rules, errs)) {
		mfrd_config_free(cfg);
		return -1;
	}
	if (d->opt_state_dir) {
		free(cfg->state_dir);
		cfg->state_dir = strdup(d->opt_state_dir);
	}
	if (d->opt_metrics_file) {
		free(cfg->metrics_file);
		cfg->metrics_file = strcmp(d->opt_metrics_file, "none") ?
				    strdup(d->opt_metrics_file) : NULL;
	}
	if (d->opt_no_offline)
		cfg->offline_recorded_pfns = false;
	if (!cfg->state_dir ||
	    (d->opt_metrics_file && strcmp(d->opt_metrics_file, "none") &&
	     !cfg->metrics_file))
		abort();
	return 0;
}

static void log_config_errors(const struct mfrd_errors *errs, int priority,
			      const char *what)
{
	struct mfrd_log *l;

	for (size_t i = 0; i < errs->n; i++) {
		l = mfrd_log_new(priority, MFRD_MSGID_CONFIG_REJECTED);
		mfrd_log_field(l, "MFR_CONFIG_ERRORS", "%zu", errs->n);
		mfrd_log_message(l, "%s", errs->msgs[i]);
		mfrd_log_send(l);
	}
	mfrd_logf(priority, MFRD_MSGID_CONFIG_REJECTED,
		  "configuration refused (%zu error%s): %s", errs->n,
		  errs->n == 1 ? "" : "s", what);
}

static void set_note(struct mfrd *d, const char *note)
{
	free(d->note);
	d->note = note ? strdup(note) : NULL;
}

/* The errors of a load as one text, one per line. */
static char *join_errors(const struct mfrd_errors *errs)
{
	char *s = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&s, &size);

	if (!f)
		abort();
	for (size_t i = 0; i < errs->n; i++)
		fprintf(f, "%s%s", i ? "\n" : "", errs->msgs[i]);
	if (fclose(f))
		abort();
	return s;
}

/*
 * Returns true if the new configuration and rules are in force.  asked:
 * an operator's reload; a refused one is counted in the metrics.
 */
static bool reload(struct mfrd *d, char **why, bool asked)
{
	struct mfrd_config cfg = { 0 };
	struct mfrd_rules rules = { 0 };
	struct mfrd_errors errs = { 0 };
	int ret;

	if (load_settings(d, &cfg, &rules, &errs)) {
		log_config_errors(&errs, LOG_ERR,
				  "still running on the previous configuration and rules");
		set_note(d, "reload refused: configuration errors, running on the previous one");
		*why = join_errors(&errs);
		mfrd_errors_free(&errs);
		d->reloads_failed += asked;
		return false;
	}
	d->reload_error = why;
	ret = d->connected ? mfrd_rules_push(d, &rules) : 0;
	d->reload_error = NULL;
	if (ret) {
		/* The module still has the previous rules: keep them. */
		set_note(d, "reload refused: mfr.ko refused a rule, running on the previous rules");
		mfrd_config_free(&cfg);
		mfrd_rules_free(&rules);
		d->reloads_failed += asked;
		return false;
	}
	if (d->connected) {
		d->rules_refused = false;
		free(d->rules_refusal);
		d->rules_refusal = NULL;
		/* Our rule-add and rule-del moved the generation: re-base. */
		ret = mfrd_reconcile(d, "rules pushed");
		d->need_reconcile = ret < 0;
	}
	mfrd_rules_free(&d->rules);
	d->rules = rules;

	/* The store stays where it was opened. */
	if (strcmp(cfg.state_dir, d->cfg.state_dir)) {
		mfrd_logf(LOG_WARNING, NULL,
			  "state_dir changed to %s: takes effect at the next start (still %s)",
			  cfg.state_dir, d->cfg.state_dir);
		free(cfg.state_dir);
		cfg.state_dir = strdup(d->cfg.state_dir);
		if (!cfg.state_dir)
			abort();
	}
	mfrd_config_free(&d->cfg);
	d->cfg = cfg;
	apply_log_limits(&d->cfg);
	d->metrics_errno = 0;
	sd_event_set_watchdog(d->event, d->cfg.watchdog);
	mfrd_report_rearm(d);
	set_note(d, NULL);
	d->reload_ok_usec = mfrd_now_usec();
	mfrd_logf(LOG_INFO, NULL, "configuration reloaded: %zu rules", d->rules.n);
	if (!d->connected &&
	    asprintf(why, "mfr.ko is not loaded: the %zu rules are pushed when it is",
		     d->rules.n) < 0)
		abort();
	mfrd_report_soon(d);
	return true;
}

void mfrd_reload_now(struct mfrd *d, bool asked)
{
	char *why = NULL;
	bool ok;

	/* sd_notify(3): RELOADING=1 with the time, READY=1 when done. */
	if (d->ready_sent)
		sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%lld",
			   (long long)mfrd_monotonic_usec());
	ok = reload(d, &why, asked);
	if (asked)
		write_reload_result(ok, why);
	free(why);
	if (d->ready_sent)
		mfrd_report_status(d, "READY=1");
	/* A start pending on refused rules ends here once they are in. */
	mfrd_ready_if_protected(d);
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si,
		     void *arg)
{
	(void)s;
	(void)si;
	mfrd_reload_now(arg, true);
	return 0;
}

static int on_stop(sd_event_source *s, const struct signalfd_siginfo *si,
		   void *arg)
{
	struct mfrd *d = arg;

	(void)s;
	sd_notify(0, "STOPPING=1");
	mfrd_logf(LOG_INFO, NULL, "stopping on %s", strsignal(si->ssi_signo));
	return sd_event_exit(d->event, EXIT_SUCCESS);
}

static int read_boot_id(struct mfrd *d)
{
	FILE *f = fopen(BOOT_ID_FILE, "re");
	bool ok;

	if (!f)
		return -1;
	ok = fgets(d->boot_id, sizeof(d->boot_id), f) != NULL;
	fclose(f);
	d->boot_id[strcspn(d->boot_id, "\n")] = '\0';
	return ok && d->boot_id[0] ? 0 : -1;
}

static void log_store_recovery(struct mfrd *d,
			       const struct mfrd_store_recovery *r)
{
	struct mfrd_log *l = mfrd_log_new(LOG_CRIT, MFRD_MSGID_STORE_RECOVERED);
	char copied[128];

	mfrd_log_field(l, "MFR_STORE", "%s", d->store_path);
	mfrd_log_field(l, "MFR_STORE_ERROR", "%s", r->error);
	mfrd_log_field(l, "MFR_STORE_FAULT", "%s",
		       mfrd_store_fault_name(r->fault));
	mfrd_log_field(l, "MFR_STORE_COPIED", "%lld", (long long)r->copied);
	if (r->moved_to)
		mfrd_log_field(l, "MFR_STORE_MOVED_TO", "%s", r->moved_to);
	if (r->copied >= 0)
		snprintf(copied, sizeof(copied), "%lld page records %s",
			 (long long)r->copied, r->in_memory ?
			 "read from it for boot offlining" : "salvaged into it");
	else
		snprintf(copied, sizeof(copied),
			 "no page record could be read from it: the pfns of earlier boots are unknown");
	if (r->in_memory && !r->standin_error)
		mfrd_log_field(l, "MFR_STORE_STANDIN", "%s", d->standin_path);
	if (!r->in_memory)
		mfrd_log_message(l, "the store %s is damaged (%s): moved aside to %s, a fresh store started; %s; acknowledge with \"mfrctl store ack\"",
				 d->store_path, r->error, r->moved_to, copied);
	else
		mfrd_log_message(l, "the store %s cannot be used (%s: %s)%s%s: %s%s; %s; records are kept %s%s%s and the file is retried until it opens, then they are merged into it; acknowledge with \"mfrctl store ack\"",
				 d->store_path, mfrd_store_fault_name(r->fault),
				 r->error, r->move_error ? "; " : "",
				 r->move_error ?: "",
				 r->moved_to ? "it was moved aside to " :
				 "the file is left as it is", r->moved_to ?: "",
				 copied, r->standin_error ? "in memory only (" :
				 "in the stand-in ",
				 r->standin_error ?: d->standin_path,
				 r->standin_error ? ")" : "");
	mfrd_log_send(l);
}

/* The stand-in's records are in the store file now: say what. */
static void log_standin_merged(struct mfrd *d,
			       const struct mfrd_store_merged *m,
			       const char *when)
{
	struct mfrd_log *l = mfrd_log_new(LOG_NOTICE,
					  MFRD_MSGID_STORE_RECOVERED);

	mfrd_log_field(l, "MFR_STORE", "%s", d->store_path);
	mfrd_log_field(l, "MFR_STORE_MERGED_PAGES", "%lld", (long long)m->pages);
	mfrd_log_field(l, "MFR_STORE_MERGED_EVENTS", "%lld",
		       (long long)m->events);
	mfrd_log_field(l, "MFR_STORE_MERGED_INCIDENTS", "%lld",
		       (long long)m->incidents);
	mfrd_log_message(l, "the records kept while the store %s could not be used (%s) are in it now: %lld page records, %lld events, %lld store incidents",
			 d->store_path, when, (long long)m->pages,
			 (long long)m->events, (long long)m->incidents);
	mfrd_log_send(l);
}

/* The store as it failed, to be recorded until an operator acks it. */
static void remember_incident(struct mfrd *d,
			      const struct mfrd_store_recovery *r)
{
	d->store_fault = r->fault;
	snprintf(d->store_fault_error, sizeof(d->store_fault_error), "%s",
		 r->error ?: "");
	free(d->store_moved_to);
	d->store_moved_to = r->moved_to ? strdup(r->moved_to) : NULL;
	d->store_copied = r->copied;
}

static void add_incident(struct mfrd *d)
{
	if (mfrd_store_add_incident(d->store, mfrd_now_usec(),
				    mfrd_store_fault_name(d->store_fault),
				    d->store_fault_error, d->store_moved_to,
				    d->store_copied))
		mfrd_store_failed(d, mfrd_store_error(d->store));
}

/* forgotten: pfns no longer in the store leave boot offlining's counts. */
static void count_earlier_pfns(struct mfrd *d, bool forgotten)
{
	uint64_t *pfns = NULL;
	size_t n = 0;

	d->earlier_boot_pfns_known = false;
	if (!mfrd_store_earlier_pfns(d->store, &pfns, &n)) {
		d->earlier_boot_pfns = n;
		d->earlier_boot_pfns_known = d->store_copied >= 0;
		if (forgotten)
			mfrd_offline_forgotten(d, pfns, n);
	} else {
		mfrd_store_failed(d, mfrd_store_error(d->store));
	}
	free(pfns);
	d->store_data_version = mfrd_store_data_version(d->store);
}

void mfrd_store_check_outside_change(struct mfrd *d)
{
	uint64_t before = d->earlier_boot_pfns;
	unsigned int failed = d->offline_failed;
	unsigned int changed = d->offline_dimm_changed;
	int64_t v = mfrd_store_data_version(d->store);

	if (v < 0) {
		mfrd_store_failed(d, mfrd_store_error(d->store));
		return;
	}
	if (v == d->store_data_version)
		return;
	count_earlier_pfns(d, true);
	if (d->earlier_boot_pfns_known && d->earlier_boot_pfns != before)
		mfrd_logf(LOG_NOTICE, NULL,
			  "the store was changed by another program (mfrctl forget): %" PRIu64 " pfns of earlier boots recorded, %" PRIu64 " before; the next boot offlines those",
			  d->earlier_boot_pfns, before);
	if (d->offline_failed != failed || d->offline_dimm_changed != changed)
		mfrd_logf(LOG_NOTICE, NULL,
			  "of the pfns boot offlining could not offline, %u are still recorded (%u before); of those on a changed DIMM, %u (%u before)",
			  d->offline_failed, failed, d->offline_dimm_changed,
			  changed);
}

static int on_store_retry(sd_event_source *src, uint64_t usec, void *arg);

/* The next try at the store file: 1 s, doubling up to 5 min. */
static void schedule_store_retry(struct mfrd *d)
{
	uint64_t now;

	uint64_t max = d->store_locked ? STORE_RETRY_LOCKED_MAX_USEC :
				       STORE_RETRY_MAX_USEC;

	d->store_retry_usec = d->store_retry_usec ?
			      d->store_retry_usec * 2 : STORE_RETRY_MIN_USEC;
	if (d->store_retry_usec > max)
		d->store_retry_usec = max;
	if (sd_event_now(d->event, CLOCK_MONOTONIC, &now) < 0)
		return;
	if (d->store_retry_src) {
		sd_event_source_set_time(d->store_retry_src,
					 now + d->store_retry_usec);
		sd_event_source_set_enabled(d->store_retry_src, SD_EVENT_ONESHOT);
	} else if (sd_event_add_time(d->event, &d->store_retry_src,
				     CLOCK_MONOTONIC, now + d->store_retry_usec,
				     0, on_store_retry, d) < 0) {
		mfrd_logf(LOG_ERR, NULL,
			  "cannot schedule a retry of the store %s: records stay in memory until mfrd restarts",
			  d->store_path);
	}
}

/*
 * The store file could not be used and mfrd runs on a stand-in: try the
 * file again.  Only the file: a failed try costs no copy of its records.
 * Once it opens, the stand-in's records (the incident with them) are
 * merged into it, records go to it, and the next tick re-reads this
 * boot's pages from mfr.ko into it.
 */
static int on_store_retry(sd_event_source *src, uint64_t usec, void *arg)
{
	struct mfrd_store_recovery r = { 0 };
	struct mfrd_store_merged m;
	struct mfrd *d = arg;
	struct mfrd_store *s;
	char *err = NULL;

	(void)src;
	(void)usec;
	if (mfrd_store_open(d->store_path, d->boot_id, &s, &r.error, &r.fault)) {
		/* Damaged meanwhile: moved aside as at start, if it can be. */
		if (r.fault == MFRD_STORE_CORRUPT) {
			mfrd_store_recovery_free(&r);
			if (mfrd_store_open_or_recover(d->store_path, NULL,
						       d->boot_id, &s, &r))
				r.in_memory = true;
			else if (r.in_memory)
				mfrd_store_close(s);
		} else {
			r.in_memory = true;
		}
	}
	if (r.in_memory) {
		d->store_locked = r.fault == MFRD_STORE_LOCKED;
		mfrd_logf(LOG_DEBUG, NULL, "the store %s still cannot be used: %s",
			  d->store_path, r.error ?: "?");
		mfrd_store_recovery_free(&r);
		schedule_store_retry(d);
		return 0;
	}
	if (mfrd_store_leave_standin(d->store, d->store_in_memory &&
				     d->standin_path && !d->standin_lost ?
				     d->standin_path : NULL,
				     d->store_path, &m, &err)) {
		mfrd_logf(LOG_WARNING, NULL,
			  "the store %s opens again, but the records kept meanwhile cannot be merged into it (%s): still on the stand-in, retried",
			  d->store_path, err);
		free(err);
		mfrd_store_close(s);
		mfrd_store_recovery_free(&r);
		schedule_store_retry(d);
		return 0;
	}
	d->store = s;
	if (r.fault != MFRD_STORE_OK) {
		log_store_recovery(d, &r);
		remember_incident(d, &r);
		add_incident(d);
	}
	mfrd_store_recovery_free(&r);
	d->store_in_memory = false;
	d->store_locked = false;
	d->store_retry_usec = 0;
	count_earlier_pfns(d, false);
	log_standin_merged(d, &m, "merged now");
	mfrd_logf(LOG_NOTICE, MFRD_MSGID_STORE_RECOVERED,
		  "the store %s is in use again: records go to it from now on%s",
		  d->store_path, d->connected ?
		  "; this boot's pages are read again from mfr.ko" : "");
	if (d->connected)
		d->need_reconcile = true;
	mfrd_report_soon(d);
	return 0;
}

bool mfrd_store_put_aside(struct mfrd *d)
{
	struct mfrd_store_recovery r = { 0 };
	struct mfrd_log *l;
	struct mfrd_store *s;

	if (d->store_in_memory || !mfrd_store_locked(d->store))
		return false;
	/* The file's records too: counts and boot offlining stay right. */
	if (mfrd_store_open_standin(d->store_path, d->standin_path,
				    d->boot_id, &s, &r)) {
		mfrd_logf(LOG_CRIT, NULL,
			  "the store %s is locked by another program and no stand-in opens (%s)",
			  d->store_path, r.error ?: "?");
		mfrd_store_recovery_free(&r);
		return false;
	}
	l = mfrd_log_new(LOG_WARNING, MFRD_MSGID_STORE_ERROR);
	mfrd_log_field(l, "MFR_STORE", "%s", d->store_path);
	mfrd_log_field(l, "MFR_STORE_ERROR", "%s", mfrd_store_error(d->store));
	mfrd_log_field(l, "MFR_STORE_LOCKED", "1");
	mfrd_log_message(l, "the store %s is LOCKED by another program (%s; an sqlite3 shell in a transaction?): records are kept aside in %s%s until it is released, then merged into it; retried in 1 s, then up to every %llu s",
			 d->store_path, mfrd_store_error(d->store),
			 r.standin_error ? "memory" : d->standin_path,
			 r.standin_error ? " (the stand-in file does not open)" : "",
			 STORE_RETRY_LOCKED_MAX_USEC / 1000000);
	mfrd_log_send(l);
	mfrd_store_close(d->store);
	d->store = s;
	d->store_in_memory = true;
	d->store_locked = true;
	d->standin_lost = r.standin_error != NULL;
	d->store_retry_usec = 0;
	mfrd_store_recovery_free(&r);
	schedule_store_retry(d);
	mfrd_report_soon(d);
	return true;
}

/*
 * An earlier run stopped while its store file could not be used (a
 * read-only directory fixed, then a restart): its stand-in, the store
 * incident in it, goes into the file now, so that the incident stays
 * until an operator acknowledges it.
 */
static void take_leftover_standin(struct mfrd *d)
{
	struct mfrd_store_merged m;
	char *err = NULL;
	int ret;

	ret = mfrd_store_take_leftover(d->standin_path, d->store_path,
				       d->boot_id, &m, &err);
	if (ret > 0)
		log_standin_merged(d, &m, "an earlier run's stand-in");
	if (ret < 0) {
		mfrd_logf(LOG_ERR, MFRD_MSGID_STORE_ERROR,
			  "the stand-in %s an earlier run left cannot be merged into the store %s (%s): kept for the next start",
			  d->standin_path, d->store_path, err ?: "?");
		d->store_errors++;
	}
	free(err);
}

/*
 * A store that does not open must not stop mfrd nor lose a record:
 * mfrd-store-recover.c decides what stands in for it.  Every case is
 * logged, kept as an incident until acknowledged, and exported; a file
 * left alone is retried with a backoff.
 */
static int open_store(struct mfrd *d)
{
	struct mfrd_store_recovery r;

	/* systemd's StateDirectory= makes it; by hand, one level is ours. */
	if (mkdir(d->cfg.state_dir, 0700) && errno != EEXIST)
		mfrd_logf(LOG_ERR, NULL, "cannot create %s: %m",
			  d->cfg.state_dir);
	if (asprintf(&d->store_path, "%s/mfrd.db", d->cfg.state_dir) < 0)
		abort();
	d->standin_path = standin_path(d->store_path);
	if (mfrd_store_open_or_recover(d->store_path, d->standin_path,
				       d->boot_id, &d->store, &r)) {
		mfrd_logf(LOG_ERR, NULL,
			  "cannot open even a store in memory: %s",
			  r.error ?: "out of memory");
		mfrd_store_recovery_free(&r);
		return -1;
	}
	if (r.fault != MFRD_STORE_OK) {
		d->store_errors++;
		d->store_in_memory = r.in_memory;
		d->store_locked = r.fault == MFRD_STORE_LOCKED;
		d->standin_lost = r.standin_error != NULL;
		remember_incident(d, &r);
		log_store_recovery(d, &r);
		add_incident(d);
	}
	mfrd_store_recovery_free(&r);
	if (!d->store_in_memory)
		take_leftover_standin(d);
	count_earlier_pfns(d, false);
	return 0;
}

/*
 * Before the store or anything else that can fail: the module gets the
 * rules as soon as mfrd has read them.  Connecting later pushes them
 * again (the same set: nothing changes for memfds).
 */
static void push_rules_first(struct mfrd *d)
{
	if (mfr_genl_open(&d->req))
		return;		/* not loaded: pushed when it comes */
	d->rules_refused = mfrd_rules_push(d, &d->rules) != 0;
	mfr_genl_close(d->req);
	d->req = NULL;
}

static int setup_loop(struct mfrd *d)
{
	sigset_t mask;
	int ret;

	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	ret = sd_event_default(&d->event);
	if (ret >= 0)
		ret = sd_event_add_signal(d->event, NULL, SIGHUP, on_sighup, d);
	if (ret >= 0)
		ret = sd_event_add_signal(d->event, NULL, SIGTERM, on_stop, d);
	if (ret >= 0)
		ret = sd_event_add_signal(d->event, NULL, SIGINT, on_stop, d);
	if (ret >= 0)
		ret = sd_event_set_watchdog(d->event, d->cfg.watchdog);
	if (ret >= 0)
		ret = mfrd_report_start(d);
	if (ret >= 0)
		ret = mfrd_module_watch(d);
	return ret < 0 ? ret : 0;
}

static void print_errors(const struct mfrd_errors *errs)
{
	for (size_t i = 0; i < errs->n; i++)
		fprintf(stderr, "%s\n", errs->msgs[i]);
}

/*
 * Where rules' cgroup paths are: the v2 hierarchy (on a hybrid host its
 * "unified" mount), or $MFRD_CGROUP_ROOT (tests).  Neither v2 nor
 * hybrid: /sys/fs/cgroup, where every cgroup path is then missing.
 */
static char *cgroup_root(void)
{
	const char *env = getenv("MFRD_CGROUP_ROOT");
	char *root = env ? strdup(env) : mfrd_cgroup2_root(CGROUP_ROOT);

	if (!root && !(root = strdup(CGROUP_ROOT)))
		abort();
	return root;
}

/*
 * Every file is checked in one run: mfrd.conf, then every rules file,
 * and the host checks of every rule that parsed.  The result must reach
 * stdout: a failed write (a full disk, /dev/full) is a failure too.
 */
static int check_only(struct mfrd *d)
{
	struct mfrd_config cfg = { 0 };
	struct mfrd_rules rules = { 0 };
	struct mfrd_errors cerrs = { 0 }, rerrs = { 0 };
	char *root = cgroup_root();
	int ret = EXIT_SUCCESS;

	if (mfrd_config_load(d->config_path, &cfg, &cerrs))
		ret = EXIT_FAILURE;
	if (mfrd_rules_check_dir(d->rules_dir, root, &rerrs) ||
	    mfrd_rules_load_dir(d->rules_dir, &rules, &rerrs))
		ret = EXIT_FAILURE;
	print_errors(&cerrs);
	print_errors(&rerrs);
	if (!ret)
		printf("%s: ok; %s: %zu rule%s\n", d->config_path, d->rules_dir,
		       rules.n, rules.n == 1 ? "" : "s");
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "mfrd --check: cannot write the result: %s\n",
			strerror(errno));
		ret = EXIT_FAILURE;
	}
	mfrd_errors_free(&cerrs);
	mfrd_errors_free(&rerrs);
	mfrd_config_free(&cfg);
	mfrd_rules_free(&rules);
	free(root);
	return ret;
}

/*
 * At start, settings with errors.  Exiting would have systemd restart
 * mfrd every second, logging every error again; instead the errors are
 * logged once (again only when they change), the module keeps whatever
 * rules it has, and the files are read again every CONFIG_RETRY_SEC and
 * on SIGHUP ("systemctl reload mfrd"), the watchdog fed meanwhile.
 * Returns 0 once they load (into d), or 1 when told to stop.
 */
static int wait_for_settings(struct mfrd *d, struct mfrd_errors *errs)
{
	const struct timespec retry = { CONFIG_RETRY_SEC, 0 };
	int64_t ready_at = mfrd_monotonic_usec() +
			   MFRD_READY_TIMEOUT_DEFAULT * 1000000LL;
	char *last = NULL, *now;
	siginfo_t si;
	sigset_t mask;
	int sig;

	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	for (;;) {
		now = join_errors(errs);
		if (!last || strcmp(now, last))
			log_config_errors(errs, LOG_ERR,
					  "not starting until it is fixed: mfr.ko keeps the rules it has, no page of an earlier boot is offlined; the files are read again every " CONFIG_RETRY_TEXT " and on \"systemctl reload mfrd\"");
		if (!last || strcmp(now, last) ||
		    (!d->ready_sent && mfrd_monotonic_usec() >= ready_at)) {
			/* Bounded like ready_timeout, which is unread yet. */
			if (!d->ready_sent && mfrd_monotonic_usec() >= ready_at)
				ready_unprotected(d, MFRD_READY_TIMEOUT_DEFAULT,
						  "the configuration is refused: mfrd has not started (mfr.ko keeps whatever rules it has)");
			sd_notifyf(0, "%sSTATUS=%sconfiguration refused (%zu error%s, see the journal): not started, waiting for a fix",
				   d->ready_sent ? "READY=1\n" : "",
				   d->ready_sent ? "DEGRADED, host NOT protected by mfrd: " : "",
				   errs->n, errs->n == 1 ? "" : "s");
		}
		free(last);
		last = now;
		mfrd_errors_free(errs);
		sd_notify(0, "WATCHDOG=1");
		sig = sigtimedwait(&mask, &si, &retry);
		if (sig == SIGTERM || sig == SIGINT) {
			mfrd_logf(LOG_INFO, NULL, "stopping on %s", strsignal(sig));
			free(last);
			return 1;
		}
		if (!load_settings(d, &d->cfg, &d->rules, errs))
			break;
		if (sig == SIGHUP) {
			char *why = join_errors(errs);

			write_reload_result(false, why);
			free(why);
		}
	}
	if (sig == SIGHUP)
		write_reload_result(true, "the configuration loads: mfrd starts");
	mfrd_logf(LOG_NOTICE, MFRD_MSGID_CONFIG_REJECTED,
		  "configuration fixed: starting");
	free(last);
	return 0;
}

/* The time and outcome in the reload result file; -1 if none. */
static long long read_reload_result(const char *path, bool *ok, char *why,
				    size_t size)
{
	char state[16] = "";
	long long t = -1;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	if (fscanf(f, "%lld %15s", &t, state) != 2)
		t = -1;
	*ok = !strcmp(state, "ok");
	why[0] = '\0';
	if (fgetc(f) != EOF) {
		size_t n = fread(why, 1, size - 1, f);

		why[n] = '\0';
		while (n && why[n - 1] == '\n')
			why[--n] = '\0';
	}
	fclose(f);
	return t;
}

/*
 * systemd's ExecReload: SIGHUP to the daemon, then wait until it wrote
 * an outcome newer than the signal, and exit with it.
 */
static int reload_client(const char *pid_arg)
{
	char *path = reload_result_path(), why[4096], *end;
	long long sent, deadline;
	bool ok = false;
	long pid;

	if (!pid_arg)
		pid_arg = getenv("MAINPID");
	if (!pid_arg || !*pid_arg) {
		fprintf(stderr, "mfrd --reload: no PID given and no $MAINPID\n");
		free(path);
		return EXIT_USAGE;
	}
	errno = 0;
	pid = strtol(pid_arg, &end, 10);
	if (errno || *end || pid <= 1) {
		fprintf(stderr, "mfrd --reload: not a PID: '%s'\n", pid_arg);
		free(path);
		return EXIT_USAGE;
	}
	sent = mfrd_monotonic_usec();
	if (kill((pid_t)pid, SIGHUP)) {
		fprintf(stderr, "mfrd --reload: cannot signal %ld: %s\n", pid,
			strerror(errno));
		free(path);
		return EXIT_FAILURE;
	}
	for (deadline = sent + RELOAD_TIMEOUT_USEC;
	     mfrd_monotonic_usec() < deadline; usleep(20000)) {
		if (read_reload_result(path, &ok, why, sizeof(why)) < sent)
			continue;
		if (why[0])
			fprintf(ok ? stdout : stderr, "%s\n", why);
		if (!ok)
			fprintf(stderr, "mfrd: reload refused, the previous configuration and rules stay\n");
		free(path);
		return ok ? EXIT_SUCCESS : EXIT_FAILURE;
	}
	fprintf(stderr, "mfrd --reload: no answer from pid %ld in %lld s (%s)\n",
		pid, RELOAD_TIMEOUT_USEC / 1000000, path);
	free(path);
	return EXIT_FAILURE;
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("mfrd: ", stderr);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage_text);
	return EXIT_USAGE;
}

static int parse_args(struct mfrd *d, int argc, char **argv, bool *check,
		      bool *reload_opt)
{
	int opt;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":hV", options, NULL)) != -1) {
		switch (opt) {
		case OPT_CONFIG:
			d->config_path = optarg;
			break;
		case OPT_RULES_DIR:
			d->rules_dir = optarg;
			break;
		case OPT_STATE_DIR:
		case OPT_METRICS_FILE:
			/* Relative paths would depend on the cwd of a reload. */
			if (optarg[0] != '/' &&
			    (opt == OPT_STATE_DIR || strcmp(optarg, "none")))
				return usage_error("not an absolute path: '%s'",
						   optarg);
			if (opt == OPT_STATE_DIR)
				d->opt_state_dir = optarg;
			else
				d->opt_metrics_file = optarg;
			break;
		case OPT_NO_OFFLINE:
			d->opt_no_offline = true;
			break;
		case OPT_CHECK:
			*check = true;
			break;
		case OPT_RELOAD:
			*reload_opt = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(EXIT_SUCCESS);
		case 'V':
			printf("mfrd %s\n", MFRCTL_VERSION);
			exit(EXIT_SUCCESS);
		case ':':
			return usage_error("option '%s' needs a value",
					   argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'",
					   argv[optind - 1]);
		}
	}
	/* --reload takes the daemon's pid as its one argument. */
	if (optind < argc - (*reload_opt ? 1 : 0))
		return usage_error("unexpected argument '%s'", argv[optind]);
	return 0;
}

static void cleanup(struct mfrd *d)
{
	mfrd_module_close(d);
	mfrd_module_unwatch(d);
	mfrd_report_stop(d);
	mfrd_store_close(d->store);
	mfrd_config_free(&d->cfg);
	mfrd_rules_free(&d->rules);
	free(d->note);
	free(d->store_moved_to);
	free(d->store_path);
	free(d->standin_path);
	sd_event_source_unref(d->store_retry_src);
	sd_event_source_unref(d->ready_timer);
	sd_event_source_unref(d->identify_src);
	mfrd_pending_reload_stop(d);
	mfrd_offline_cancel(d);
	free(d->rules_refusal);
	free(d->cgroup_root);
	free(d->cgroup_ids);
	free(d->pushed_ids);
	free(d->failed_pfns);
	free(d->dimm_changed_pfns);
	mfrd_dimms_free(d->dimms);
	sd_event_unref(d->event);
}

/*
 * The rest of the start, once boot offlining is done (it runs in slices
 * from the loop): connect, then READY=1 if protected, else the bound of
 * ready_timeout, counted from the start of the process.  A failure ends
 * the loop.
 */
static void start_after_offlining(struct mfrd *d)
{
	int ret;

	mfrd_module_try_connect(d);
	if (d->failed)
		return;		/* mfrd_fail() ended the loop */
	if (!d->connected) {
		struct mfrd_log *l = mfrd_log_new(LOG_NOTICE,
						  MFRD_MSGID_MODULE_STATE);

		mfrd_log_field(l, "MFR_MODULE_STATE", "waiting");
		mfrd_log_message(l, "mfr.ko is not loaded: waiting for it");
		mfrd_log_send(l);
	}
	if (!d->store_in_memory)
		mfrd_logf(LOG_INFO, NULL, "started: %zu rules, state in %s",
			  d->rules.n, d->cfg.state_dir);
	else
		mfrd_logf(LOG_INFO, NULL, "started: %zu rules, state in %s (the store file is not usable: records in %s)",
			  d->rules.n, d->cfg.state_dir,
			  d->standin_lost ? "memory only" : d->standin_path);
	mfrd_report_soon(d);
	mfrd_ready_if_protected(d);
	if (d->ready_sent)
		return;
	ret = arm_ready_timeout(d, d->started_usec);
	if (ret < 0) {
		mfrd_logf(LOG_ERR, NULL, "cannot set the ready timeout: %s",
			  strerror(-ret));
		mfrd_fail(d);
		return;
	}
	mfrd_pending_reload_watch(d);
	if (d->cfg.ready_timeout)
		mfrd_logf(LOG_NOTICE, NULL,
			  "not READY until the rules are in mfr.ko, for %u s at most (ready_timeout)",
			  d->cfg.ready_timeout);
	else
		mfrd_logf(LOG_NOTICE, NULL,
			  "not READY until the rules are in mfr.ko, however long that takes (ready_timeout = 0)");
}

int main(int argc, char **argv)
{
	struct mfrd d = {
		.config_path = MFRD_CONFIG_FILE,
		.rules_dir = MFRD_RULES_DIR,
	};
	struct mfrd_errors errs = { 0 };
	bool check = false, reload_opt = false;
	int64_t started = mfrd_monotonic_usec();
	int ret;

	ret = parse_args(&d, argc, argv, &check, &reload_opt);
	if (ret)
		return ret;
	if (check)
		return check_only(&d);
	if (reload_opt)
		return reload_client(optind < argc ? argv[optind] : NULL);

	mfrd_log_open();
	if (load_settings(&d, &d.cfg, &d.rules, &errs) &&
	    wait_for_settings(&d, &errs))
		return EXIT_SUCCESS;
	apply_log_limits(&d.cfg);
	d.cgroup_root = cgroup_root();
	push_rules_first(&d);
	d.reload_ok_usec = mfrd_now_usec();
	if (read_boot_id(&d)) {
		mfrd_logf(LOG_ERR, NULL, "cannot read the boot id from %s",
			  BOOT_ID_FILE);
		ret = EXIT_FAILURE;
		goto out;
	}
	if (open_store(&d)) {
		ret = EXIT_FAILURE;
		goto out;
	}
	mfrd_prune_events(&d);
	load_dimms(&d);
	ret = setup_loop(&d);
	if (ret) {
		mfrd_logf(LOG_ERR, NULL, "cannot set up the event loop: %s",
			  strerror(-ret));
		ret = EXIT_FAILURE;
		goto out;
	}
	if (d.store_in_memory)
		schedule_store_retry(&d);
	/* Left by a restart between a reconcile and its identification. */
	mfrd_identify_pages(&d);
	d.started_usec = started;
	if (d.cfg.offline_recorded_pfns)
		mfrd_offline_recorded(&d, start_after_offlining);
	else
		start_after_offlining(&d);

	ret = sd_event_loop(d.event);
	if (ret < 0) {
		mfrd_logf(LOG_ERR, NULL, "event loop: %s", strerror(-ret));
		ret = EXIT_FAILURE;
	}
out:
	cleanup(&d);
	return ret;
}
