// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrd: records every memory error mfr.ko reports, pushes the operator's
 * rules to it, and offlines at boot the pages that failed in earlier
 * boots.  This file is the event loop and its wiring: the command line,
 * the start-up order, the signals, reloads and READY; the rest is in the
 * files mfrd.h lists.
 *
 * Start-up order is protection first: settings, then the rules pushed
 * (when the module is there) before anything else can fail; then the
 * store (mfrd-store-supervisor.c: whatever fails, a stand-in takes the
 * records), boot offlining, and READY=1 once the module has every rule
 * it takes (or at once, if mfrd.conf says ready_without_module), so that
 * workloads ordered after mfrd.service find their pages offlined and
 * their rules in place.  Errors in rules.d never hold the rest back: the
 * rules that parse are in force, boot offlining runs, and the errors are
 * said loudly until a reload loads every file.
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
#include "mfrd-log.h"
#include "mfrd-runtime-dir.h"

#define CGROUP_ROOT	"/sys/fs/cgroup"
/* Settings with errors at start are read again this often. */
#define CONFIG_RETRY_SEC	5
#define CONFIG_RETRY_TEXT	"5 s"
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

struct mfrd_store *mfrd_store(struct mfrd *d)
{
	return mfrd_sup_store(d->sup);
}

/*
 * "MONOTONIC_USEC ok|failed" and the reason on the next line, replaced
 * atomically: "mfrd --reload" waits for a time after its SIGHUP.
 */
static void write_reload_result(bool ok, const char *why)
{
	char *path = mfrd_runtime_path("reload"), *text;
	int r;

	if (asprintf(&text, "%lld %s\n%s\n", (long long)mfrd_monotonic_usec(),
		     ok ? "ok" : "failed", why ?: "") < 0)
		abort();
	r = mfrd_atomic_write(path, text, strlen(text), 0644);
	if (r)
		mfrd_logf(LOG_WARNING, NULL, "cannot write %s: %s", path,
			  strerror(-r));
	free(text);
	free(path);
}

void mfrd_watchdog_progress(struct mfrd *d)
{
	/* Called per record: systemd's setting read once (it costs a getpid). */
	static int enabled = -1;
	static uint64_t interval;
	static int64_t last;
	int64_t now;

	(void)d;
	if (enabled < 0)
		enabled = sd_watchdog_enabled(0, &interval) > 0;
	if (!enabled)
		return;
	now = mfrd_monotonic_usec();
	if (now - last < (int64_t)(interval / 4))
		return;
	last = now;
	sd_notify(0, "WATCHDOG=1");
}

/*
 * A watchdog systemd asked for (WatchdogSec=, WATCHDOG_USEC) is always
 * fed: one that is not gets mfrd killed every WatchdogSec.  So watchdog =
 * no cannot turn it off; it is refused with a warning, once per setting.
 */
static void apply_watchdog(struct mfrd *d)
{
	uint64_t usec;
	int ret;

	ret = sd_event_set_watchdog(d->event, true);
	if (ret < 0)
		mfrd_logf(LOG_WARNING, NULL, "cannot feed systemd's watchdog: %s",
			  strerror(-ret));
	if (d->cfg.watchdog || sd_watchdog_enabled(0, &usec) <= 0) {
		d->watchdog_forced = false;
		return;
	}
	if (!d->watchdog_forced)
		mfrd_logf(LOG_WARNING, MFRD_MSGID_CONFIG_REJECTED,
			  "watchdog = no is refused: systemd asked for a watchdog (WatchdogSec=%llu s), and one not fed kills mfrd; mfrd feeds it.  To have none, set WatchdogSec=0 in a drop-in of mfrd.service",
			  (unsigned long long)(usec / 1000000));
	d->watchdog_forced = true;
}

void mfrd_prune_events(struct mfrd *d)
{
	int64_t before = 0, n;

	if (d->cfg.events_max_age_days)
		before = mfrd_now_usec() -
			 (int64_t)d->cfg.events_max_age_days * 86400 * 1000000;
	n = mfrd_store_prune_events(mfrd_store(d), before,
				    d->cfg.events_max_rows);
	/*
	 * Locked by another program, or full: retention waits for the next
	 * tick, and no record is at stake (the next write puts them aside).
	 */
	if (n < 0 && mfrd_store_locked(mfrd_store(d)))
		mfrd_logf(LOG_DEBUG, NULL, "events log retention skipped: %s",
			  mfrd_store_error(mfrd_store(d)));
	else if (n < 0)
		mfrd_sup_failed(d->sup, mfrd_store_error(mfrd_store(d)));
	else
		d->events_pruned += (uint64_t)n;
}

static void apply_log_limits(const struct mfrd_config *cfg)
{
	mfrd_log_set_ratelimit(cfg->log_rate_limit_burst,
			       cfg->log_rate_limit_interval * 1000000ULL);
}

/*
 * What READY=1 waits for: the module, so that the rules it takes are in
 * it.  Rules it refuses, or errors in rules.d, do not hold READY back:
 * waiting would not fix them, and the rules that are in protect now.
 */
static const char *ready_blocker(const struct mfrd *d)
{
	if (!d->connected)
		return "mfr.ko is not loaded (a kernel without the mfr hooks, or the module not loaded yet)";
	return NULL;
}

const char *mfrd_unprotected_reason(const struct mfrd *d)
{
	if (!d->connected)
		return ready_blocker(d);
	if (d->nrefused)
		return "mfr.ko refused some rules (the journal names them; the others are in force; retried every metrics_interval)";
	if (d->nrules_errors)
		return "rules.d has errors (the journal names them; the rules that parse are in force)";
	return NULL;
}

void mfrd_ready_if_protected(struct mfrd *d)
{
	/* Never before the pfns of earlier boots are offline. */
	if (d->offlining)
		return;
	if (d->ready_sent) {
		if (d->ready_degraded && !ready_blocker(d)) {
			d->ready_degraded = false;
			mfrd_logf(LOG_NOTICE, MFRD_MSGID_READY_UNPROTECTED,
				  "protected now: the %zu rules are in mfr.ko",
				  d->rules.n);
			mfrd_report_soon(d);
		}
		return;
	}
	if (ready_blocker(d) && !d->cfg.ready_without_module)
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
	const char *why = ready_blocker(d);

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

	size_t before = d->nrefused;

	if (!d->connected || !d->nrefused)
		return;
	d->rules_retrying = true;
	ret = mfrd_rules_push(d, &d->rules, false);
	d->rules_retrying = false;
	if (ret || d->nrefused == before)
		return;
	if (!d->nrefused) {
		free(d->rules_refusal);
		d->rules_refusal = NULL;
	}
	mfrd_logf(LOG_NOTICE, MFRD_MSGID_CONFIG_REJECTED,
		  "rules refused earlier are accepted now: %zu of the %zu rules in mfr.ko",
		  d->rules.n - d->nrefused, d->rules.n);
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

/* mfrd.conf, with the command line's overrides applied. */
static int load_config(struct mfrd *d, struct mfrd_config *cfg,
		       struct mfrd_errors *errs)
{
	if (mfrd_config_load(d->config_path, cfg, errs))
		return -1;
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

/* mfrd.conf and rules.d, all or nothing: a reload. */
static int load_settings(struct mfrd *d, struct mfrd_config *cfg,
			 struct mfrd_rules *rules, struct mfrd_errors *errs)
{
	if (load_config(d, cfg, errs))
		return -1;
	if (mfrd_rules_load_dir(d->rules_dir, rules, errs)) {
		mfrd_config_free(cfg);
		return -1;
	}
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
	ret = d->connected ? mfrd_rules_push(d, &rules, true) : 0;
	d->reload_error = NULL;
	if (ret) {
		/* The module still has the previous rules: keep them. */
		set_note(d, "reload refused: mfr.ko refused a rule, running on the previous rules");
		mfrd_config_free(&cfg);
		mfrd_rules_free(&rules);
		d->reloads_failed += asked;
		return false;
	}
	mfrd_rules_free(&d->rules);
	d->rules = rules;
	/* Every rule is in force, every file loaded. */
	free(d->refused);
	d->refused = calloc(d->rules.n + 1, sizeof(*d->refused));
	if (!d->refused)
		abort();
	d->nrefused = 0;
	free(d->rules_refusal);
	d->rules_refusal = NULL;
	free(d->rules_errors);
	d->rules_errors = NULL;
	d->nrules_errors = 0;
	if (d->connected) {
		/* Our rule-replace moved the generation: re-base. */
		ret = mfrd_reconcile(d, "rules pushed");
		d->need_reconcile = ret < 0;
	}

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
	apply_watchdog(d);
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

/* forgotten: pfns no longer in the store leave boot offlining's counts. */
void mfrd_count_earlier_pfns(struct mfrd *d, bool forgotten)
{
	uint64_t *pfns = NULL;
	size_t n = 0;

	d->earlier_boot_pfns_known = false;
	if (!mfrd_store_earlier_pfns(mfrd_store(d), &pfns, &n)) {
		d->earlier_boot_pfns = n;
		d->earlier_boot_pfns_known = mfrd_sup_copied(d->sup) >= 0;
		if (forgotten)
			mfrd_offline_forgotten(d, pfns, n);
	} else {
		mfrd_sup_failed(d->sup, mfrd_store_error(mfrd_store(d)));
	}
	free(pfns);
	d->store_data_version = mfrd_store_data_version(mfrd_store(d));
}

void mfrd_store_check_outside_change(struct mfrd *d)
{
	uint64_t before = d->earlier_boot_pfns;
	unsigned int failed = d->offline_failed;
	unsigned int changed = d->offline_dimm_changed;
	int64_t v = mfrd_store_data_version(mfrd_store(d));

	if (v < 0) {
		mfrd_sup_failed(d->sup, mfrd_store_error(mfrd_store(d)));
		return;
	}
	if (v == d->store_data_version)
		return;
	mfrd_count_earlier_pfns(d, true);
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

/*
 * The supervisor moved the records (a stand-in, or the file again): the
 * counts follow, and back on the file the module's dumps are read into
 * it again on the next tick.
 */
static void store_changed(void *arg, bool back_on_file)
{
	struct mfrd *d = arg;

	mfrd_count_earlier_pfns(d, false);
	if (back_on_file && d->connected)
		d->need_reconcile = true;
	/* Identity written in a stand-in the file did not have yet. */
	if (back_on_file)
		mfrd_identify_pages(d);
	mfrd_report_soon(d);
}

static int open_store(struct mfrd *d)
{
	const struct mfrd_sup_ops ops = { .changed = store_changed, .arg = d };

	if (mfrd_sup_open(&d->sup, d->cfg.state_dir, d->boot_id, &ops))
		return -1;
	mfrd_count_earlier_pfns(d, false);
	return 0;
}

/*
 * Before the store or anything else that can fail: the module gets the
 * rules as soon as mfrd has read them, every one it takes.  Connecting
 * later pushes them again (the same set: nothing changes for memfds).
 */
static void push_rules_first(struct mfrd *d)
{
	if (mfr_genl_open(&d->req))
		return;		/* not loaded: pushed when it comes */
	mfrd_rules_push(d, &d->rules, false);
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
	if (ret >= 0) {
		apply_watchdog(d);
		ret = mfrd_report_start(d);
	}
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

/* A cgroup path no cgroup has yet: fine, but say so. */
static void note_missing_cgroups(const struct mfrd_rules *rules,
				 const char *root)
{
	struct stat st;
	char *path;

	for (size_t i = 0; i < rules->n; i++) {
		const struct mfrd_rule *r = &rules->v[i];

		if (!r->cgroup_path)
			continue;
		if (asprintf(&path, "%s%s", root, r->cgroup_path) < 0)
			abort();
		if (stat(path, &st))
			printf("%s:%u: note: cgroup-path %s: no such cgroup yet (%s): mfr.ko matches it by name once it exists\n",
			       r->file, r->cgroup_line ?: r->line,
			       r->cgroup_path, path);
		free(path);
	}
}

/*
 * Every file is checked in one run: mfrd.conf, then every rules file,
 * and the host checks of every rule that parsed.  A missing mfrd.conf
 * (the defaults) is said, and no rule at all is an error: mfrd would opt
 * no memfd in.  The result must reach stdout: a failed write (a full
 * disk, /dev/full) is a failure too.
 */
static int check_only(struct mfrd *d)
{
	struct mfrd_config cfg = { 0 };
	struct mfrd_rules rules = { 0 };
	struct mfrd_errors cerrs = { 0 }, rerrs = { 0 };
	char *root = cgroup_root();
	bool conf_missing = access(d->config_path, F_OK) && errno == ENOENT;
	int ret = EXIT_SUCCESS;

	if (mfrd_config_load(d->config_path, &cfg, &cerrs))
		ret = EXIT_FAILURE;
	if (mfrd_rules_check_dir(d->rules_dir, root, &rerrs) ||
	    mfrd_rules_load_dir(d->rules_dir, &rules, &rerrs))
		ret = EXIT_FAILURE;
	print_errors(&cerrs);
	print_errors(&rerrs);
	if (!ret && !rules.n) {
		fprintf(stderr, "%s: no rule: mfrd would opt no memfd in (only those created with MFD_MF_KEEP_UE_MAPPED, or set by mfrctl memfd set, keep poisoned pages mapped); see mfrd.conf(5), RULES\n",
			d->rules_dir);
		ret = EXIT_FAILURE;
	}
	if (!ret) {
		note_missing_cgroups(&rules, root);
		printf("%s: %s; %s: %zu rule%s\n", d->config_path,
		       conf_missing ? "not found, the defaults apply" : "ok",
		       d->rules_dir, rules.n, rules.n == 1 ? "" : "s");
	}
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
 * At start, mfrd.conf with errors (where the store is, is unknown).
 * Exiting would have systemd restart mfrd every second, logging every
 * error again; instead the errors are logged once (again only when they
 * change), the module keeps whatever rules it has, and the file is read
 * again every CONFIG_RETRY_SEC and on SIGHUP ("systemctl reload mfrd"),
 * the watchdog fed meanwhile.  Errors in rules.d never come here: the
 * rules that parse are pushed and the start goes on.  Returns 0 once it
 * loads (into d), or 1 when told to stop.
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
					  "mfrd.conf has errors, not starting until it is fixed (where the store is, is not known): mfr.ko keeps the rules it has, no page of an earlier boot is offlined; the file is read again every " CONFIG_RETRY_TEXT " and on \"systemctl reload mfrd\"");
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
		if (!load_config(d, &d->cfg, errs))
			break;
		if (sig == SIGHUP) {
			char *why = join_errors(errs);

			write_reload_result(false, why);
			free(why);
		}
	}
	if (sig == SIGHUP)
		write_reload_result(true, "mfrd.conf loads: mfrd starts");
	mfrd_logf(LOG_NOTICE, MFRD_MSGID_CONFIG_REJECTED,
		  "mfrd.conf fixed: starting");
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
	char *path = mfrd_runtime_path("reload"), why[4096], *end;
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
	mfrd_reconcile_stop(d);
	mfrd_report_stop(d);
	mfrd_identify_stop(d);
	mfrd_pending_reload_stop(d);
	mfrd_offline_cancel(d);
	/* Last: it may still merge a stand-in into the file. */
	mfrd_sup_close(d->sup);
	mfrd_config_free(&d->cfg);
	mfrd_rules_free(&d->rules);
	free(d->note);
	free(d->rules_errors);
	sd_event_source_unref(d->ready_timer);
	free(d->rules_refusal);
	free(d->refused);
	free(d->pushed_ids);
	free(d->failed_pfns);
	free(d->dimm_changed_pfns);
	sd_event_unref(d->event);
}

/*
 * The rest of the start, once boot offlining is done (it runs in slices
 * from the loop): connect, then READY=1 once the module has the rules
 * (every one it takes), else the bound of ready_timeout, counted from
 * the start of the process.  A failure ends the loop.
 */
static void start_after_offlining(struct mfrd *d)
{
	const char *standin = mfrd_sup_standin_path(d->sup);
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
	if (mfrd_sup_where(d->sup) == MFRD_SUP_FILE)
		mfrd_logf(LOG_INFO, NULL, "started: %zu rules, state in %s",
			  d->rules.n, d->cfg.state_dir);
	else
		mfrd_logf(LOG_INFO, NULL, "started: %zu rules, state in %s (the store file is not usable: records in %s)",
			  d->rules.n, d->cfg.state_dir,
			  standin ?: "memory only");
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

/*
 * rules.d at start: every rule that parses, in force; the errors logged
 * (each FILE:LINE) and said in STATUS and the metrics until a reload
 * loads every file.  Nothing else of the start waits for them: boot
 * offlining least of all.
 */
static void load_rules_at_start(struct mfrd *d)
{
	struct mfrd_errors errs = { 0 };
	char *why;

	d->nrules_errors = mfrd_rules_load_dir_partial(d->rules_dir, &d->rules,
						       &errs);
	d->refused = calloc(d->rules.n + 1, sizeof(*d->refused));
	if (!d->refused)
		abort();
	if (!d->nrules_errors)
		return;
	if (asprintf(&why, "the %zu rules that parse are in force; fix the files and run \"systemctl reload mfrd\"",
		     d->rules.n) < 0)
		abort();
	log_config_errors(&errs, LOG_ERR, why);
	free(why);
	d->rules_errors = join_errors(&errs);
	mfrd_errors_free(&errs);
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

	d.start_time = mfrd_now_usec() / 1e6;
	mfrd_log_open();
	mfrd_memfd_cache_init(&d.memfds, MFRD_MEMFD_CACHE_ENTRIES,
			      MFRD_MEMFD_CACHE_BYTES);
	if (load_config(&d, &d.cfg, &errs) && wait_for_settings(&d, &errs))
		return EXIT_SUCCESS;
	apply_log_limits(&d.cfg);
	load_rules_at_start(&d);
	push_rules_first(&d);
	d.reload_ok_usec = mfrd_now_usec();
	ret = mfr_boot_id(d.boot_id);
	if (ret) {
		mfrd_logf(LOG_ERR, NULL, "cannot read the boot id: %s",
			  strerror(-ret));
		ret = EXIT_FAILURE;
		goto out;
	}
	if (open_store(&d)) {
		ret = EXIT_FAILURE;
		goto out;
	}
	mfrd_prune_events(&d);
	mfrd_identify_load(&d);
	ret = setup_loop(&d);
	if (ret) {
		mfrd_logf(LOG_ERR, NULL, "cannot set up the event loop: %s",
			  strerror(-ret));
		ret = EXIT_FAILURE;
		goto out;
	}
	mfrd_sup_attach(d.sup, d.event);
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
