// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrd: records every memory error mfr.ko reports, pushes the operator's
 * rules to it, and hard-offlines at boot the pages that failed in
 * earlier boots.  This file is the command line, the start-up order and
 * the signals; the rest is in the files mfrd.h lists.
 *
 * Start-up order matters to systemd's ordering: settings, store, boot
 * offlining, rules pushed (when the module is there), and only then
 * READY=1, so that workloads ordered after mfrd.service find their pages
 * offlined and their rules in place.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <systemd/sd-daemon.h>

#include "mfrd.h"
#include "mfrd-log.h"

#define BOOT_ID_FILE	"/proc/sys/kernel/random/boot_id"

enum { EXIT_USAGE = 2 };

static const char usage_text[] =
	"usage: mfrd [--config FILE] [--rules-dir DIR] [--state-dir DIR]\n"
	"            [--metrics-file FILE|none] [--no-offline] [--check]\n";

enum {
	OPT_CONFIG = 0x100,
	OPT_RULES_DIR,
	OPT_STATE_DIR,
	OPT_METRICS_FILE,
	OPT_NO_OFFLINE,
	OPT_CHECK,
};

static const struct option options[] = {
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "rules-dir", required_argument, NULL, OPT_RULES_DIR },
	{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
	{ "metrics-file", required_argument, NULL, OPT_METRICS_FILE },
	{ "no-offline", no_argument, NULL, OPT_NO_OFFLINE },
	{ "check", no_argument, NULL, OPT_CHECK },
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

static void reload(struct mfrd *d)
{
	struct mfrd_config cfg = { 0 };
	struct mfrd_rules rules = { 0 };
	struct mfrd_errors errs = { 0 };
	int ret;

	if (load_settings(d, &cfg, &rules, &errs)) {
		log_config_errors(&errs, LOG_ERR,
				  "still running on the previous configuration and rules");
		set_note(d, "reload refused: configuration errors, running on the previous one");
		mfrd_errors_free(&errs);
		return;
	}
	if (d->connected && mfrd_rules_push(d, &rules)) {
		/* The module is back on the previous rules: keep them. */
		set_note(d, "reload refused: mfr.ko refused a rule, running on the previous rules");
		mfrd_config_free(&cfg);
		mfrd_rules_free(&rules);
		return;
	}
	if (d->connected) {
		d->rules_refused = false;
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
	d->metrics_errno = 0;
	sd_event_set_watchdog(d->event, d->cfg.watchdog);
	mfrd_report_rearm(d);
	set_note(d, NULL);
	mfrd_logf(LOG_INFO, NULL, "configuration reloaded: %zu rules", d->rules.n);
	mfrd_report_soon(d);
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si,
		     void *arg)
{
	struct mfrd *d = arg;
	struct timespec ts;

	(void)s;
	(void)si;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
		   (unsigned long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
	reload(d);
	mfrd_report_status(d, "READY=1");
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

static int open_store(struct mfrd *d)
{
	uint64_t *pfns = NULL;
	char *path, *err;
	size_t n = 0;
	int ret;

	/* systemd's StateDirectory= makes it; by hand, one level is ours. */
	if (mkdir(d->cfg.state_dir, 0700) && errno != EEXIST) {
		mfrd_logf(LOG_ERR, NULL, "cannot create %s: %m",
			  d->cfg.state_dir);
		return -1;
	}
	if (asprintf(&path, "%s/mfrd.db", d->cfg.state_dir) < 0)
		abort();
	ret = mfrd_store_open(path, d->boot_id, &d->store, &err);
	if (ret) {
		mfrd_logf(LOG_ERR, NULL, "cannot open the store %s: %s", path,
			  err ?: "out of memory");
		free(err);
	}
	free(path);
	if (ret)
		return -1;
	if (!mfrd_store_earlier_pfns(d->store, &pfns, &n))
		d->earlier_boot_pfns = n;
	free(pfns);
	return 0;
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

static int check_only(struct mfrd *d)
{
	struct mfrd_config cfg = { 0 };
	struct mfrd_rules rules = { 0 };
	struct mfrd_errors errs = { 0 };

	if (load_settings(d, &cfg, &rules, &errs)) {
		for (size_t i = 0; i < errs.n; i++)
			fprintf(stderr, "%s\n", errs.msgs[i]);
		mfrd_errors_free(&errs);
		return EXIT_FAILURE;
	}
	printf("%s: ok; %s: %zu rule%s\n", d->config_path, d->rules_dir,
	       rules.n, rules.n == 1 ? "" : "s");
	mfrd_config_free(&cfg);
	mfrd_rules_free(&rules);
	return EXIT_SUCCESS;
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("mfrd: ", stderr);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage_text);
	return EXIT_USAGE;
}

static int parse_args(struct mfrd *d, int argc, char **argv, bool *check)
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
	if (optind < argc)
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
	sd_event_unref(d->event);
}

int main(int argc, char **argv)
{
	struct mfrd d = {
		.config_path = MFRD_CONFIG_FILE,
		.rules_dir = MFRD_RULES_DIR,
	};
	struct mfrd_errors errs = { 0 };
	bool check = false;
	int ret;

	ret = parse_args(&d, argc, argv, &check);
	if (ret)
		return ret;
	if (check)
		return check_only(&d);

	mfrd_log_open();
	if (load_settings(&d, &d.cfg, &d.rules, &errs)) {
		log_config_errors(&errs, LOG_ERR, "not starting");
		mfrd_errors_free(&errs);
		return EXIT_FAILURE;
	}
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
	ret = setup_loop(&d);
	if (ret) {
		mfrd_logf(LOG_ERR, NULL, "cannot set up the event loop: %s",
			  strerror(-ret));
		ret = EXIT_FAILURE;
		goto out;
	}
	if (d.cfg.offline_recorded_pfns)
		mfrd_offline_recorded(&d);
	mfrd_module_try_connect(&d);
	if (d.failed) {
		ret = EXIT_FAILURE;
		goto out;
	}
	if (!d.connected) {
		struct mfrd_log *l = mfrd_log_new(LOG_NOTICE,
						  MFRD_MSGID_MODULE_STATE);

		mfrd_log_field(l, "MFR_MODULE_STATE", "waiting");
		mfrd_log_message(l, "mfr.ko is not loaded: waiting for it");
		mfrd_log_send(l);
	}
	mfrd_logf(LOG_INFO, NULL, "started: %zu rules, state in %s",
		  d.rules.n, d.cfg.state_dir);
	mfrd_report_soon(&d);
	mfrd_report_status(&d, "READY=1");

	ret = sd_event_loop(d.event);
	if (ret < 0) {
		mfrd_logf(LOG_ERR, NULL, "event loop: %s", strerror(-ret));
		ret = EXIT_FAILURE;
	}
out:
	cleanup(&d);
	return ret;
}
