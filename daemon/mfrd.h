// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrd's state, shared by its files: one sd-event loop, the settings and
 * rules in force, the store, and the connection to mfr.ko when it is
 * loaded.  Each concern lives in its own file:
 *
 *   mfrd.c          command line, start-up order, signals, reload, READY
 *   mfrd-module.c   watching mfr.ko come and go, connecting to its family
 *   mfrd-rules.c    pushing the rules: every one the module takes
 *   mfrd-sync.c     events and reconciling dumps into the store
 *   mfrd-memfd-cache.c  the owners of memfds, bounded
 *   mfrd-generations.c  which events are new, when to re-dump
 *   mfrd-rule-ids.c  rules changed in the module behind mfrd's back
 *   mfrd-atomic-file.c  replacing a file atomically and durably
 *   mfrd-clock.c    the monotonic clock
 *   mfrd-store-supervisor.c  the store's failures: stand-ins, retries
 *   mfrd-store-recover.c  a store that does not open: nothing lost
 *   mfrd-identify.c  physical address and DIMM of recorded pages
 *   mfrd-offline.c  offlining the pfns of earlier boots, in slices
 *   mfrd-report.c   STATUS= and the metrics file
 *   mfrd-pending-reload.c  until READY=1, a changed file is reloaded
 *   mfrd-log.c      journal entries
 */
#ifndef MFRD_H
#define MFRD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "mfr-boot-id.h"
#include "mfr-genl.h"
#include "mfrd-config.h"
#include "mfrd-generations.h"
#include "mfrd-memfd-cache.h"
#include "mfrd-store-supervisor.h"

struct mfrd_offline_pass;

struct mfrd {
	sd_event *event;

	/* Where settings come from; the command line wins over mfrd.conf. */
	const char *config_path;
	const char *rules_dir;
	const char *opt_state_dir;
	const char *opt_metrics_file;
	bool opt_no_offline;

	struct mfrd_config cfg;		/* in force */
	struct mfrd_rules rules;	/* configured (or to push when loaded) */
	/*
	 * A start with errors in rules.d: the rules that parsed are in
	 * force, the errors said here until a reload loads every file.
	 */
	char *rules_errors;		/* one per line, NULL: none */
	size_t nrules_errors;
	char *note;			/* why a reload was refused, for STATUS */

	/* Reload: where its outcome goes for "mfrd --reload" to read. */
	char **reload_error;		/* while reloading: why it failed */
	int64_t reload_ok_usec;		/* last successful reload, or start */
	uint64_t reloads_failed;

	/* Protection: the rules are in the module, READY=1 was sent. */
	int64_t rules_pushed_usec;	/* last successful push, 0: never */
	bool ready_sent;
	bool ready_degraded;		/* ... by ready_timeout, unprotected */
	sd_event_source *ready_timer;	/* ready_timeout after the start */
	bool rules_retrying;		/* a retry: a known refusal is quiet */
	bool watchdog_forced;		/* watchdog = no refused: systemd asked */
	/* Until READY=1: mfrd.conf's directory and rules.d, watched. */
	sd_event_source *pending_conf_src, *pending_rules_src;
	sd_event_source *pending_settle_src;	/* ... a change settling */
	char *rules_refusal;		/* the last refusal logged */

	/* Start: boot offlining, in slices, comes before connect and READY. */
	int64_t started_usec;		/* CLOCK_MONOTONIC, for ready_timeout */
	double start_time;		/* CLOCK_REALTIME seconds, for metrics */
	bool offlining;			/* ... still running */
	struct mfrd_offline_pass *offline_pass;	/* its state */

	char boot_id[MFR_BOOT_ID_MAX];
	struct mfrd_store_sup *sup;	/* the store, or what stands in */
	uint64_t events_pruned;		/* events log rows deleted by retention */
	uint64_t events_lost;		/* overruns and generation gaps */
	uint64_t redumps;		/* reconciling dumps */
	int64_t last_reconcile_usec;	/* CLOCK_MONOTONIC, for the bound */
	sd_event_source *reconcile_src;	/* a coalesced reconcile, due */
	const char *reconcile_why;	/* ... and why */
	uint64_t earlier_boot_pfns;	/* in the store (forget changes it) */
	bool earlier_boot_pfns_known;	/* ... read from the store file */
	int64_t store_data_version;	/* when they were counted */
	struct mfrd_dimms *dimms;	/* SMBIOS memory devices, or NULL */
	struct mfrd_ras *ras;		/* rasdaemon's decoded errors, or NULL */
	sd_event_source *identify_src;	/* identity of pages, in slices */
	uint64_t identified, identify_slices;	/* ... this round, for the log */
	unsigned int offline_dimm_changed;	/* earlier pfns on a changed DIMM */
	unsigned int offline_failed;	/* earlier pfns not offlined */
	/* ... which ones: forgetting one takes it out of those counts. */
	uint64_t *dimm_changed_pfns, *failed_pfns;
	uint64_t pages_recorded;	/* page records created since start */

	/* mfr.ko: watched with libudev and a timer, used when loaded. */
	struct udev *udev;
	struct udev_monitor *monitor;
	sd_event_source *monitor_src;
	sd_event_source *tick_src;
	bool connected;
	struct mfr_genl *req;		/* requests and dumps */
	struct mfr_genl *events;	/* the "events" group */
	sd_event_source *events_src;
	/*
	 * Rules the module refused (of d->rules, by index): the others are
	 * in force, these are pushed again every metrics_interval.
	 */
	bool *refused;
	size_t nrefused;
	uint32_t *pushed_ids;		/* ids mfr.ko gave the rules pushed */
	size_t npushed_ids;
	bool pushed_ids_known;
	unsigned int rules_outside;	/* rules added/removed behind us */
	bool need_reconcile;		/* a reconcile failed: retry on tick */

	struct mfrd_gens gens;		/* the module's, as events tell */

	struct mfrd_memfd_cache memfds;	/* owners, by inode */

	/* Reporting. */
	sd_event_source *metrics_timer;	/* every metrics_interval */
	sd_event_source *metrics_soon;	/* rate-limited rewrite after events */
	uint64_t metrics_last_usec;	/* CLOCK_MONOTONIC */
	int metrics_errno;		/* last write error, logged once */
	char *status;			/* last STATUS= sent */

	bool failed;			/* mfrd_fail() was called */
};

/*
 * Not even a store in memory takes a record: end the loop with a
 * failure, systemd restarts us and the restart reconciles.
 */
void mfrd_fail(struct mfrd *d);

/* status-get on the request socket, cb gets the reply. */
int mfrd_status_get(struct mfrd *d, mfr_genl_cb cb, void *arg);

/* The store in use (the file, or its stand-in). */
struct mfrd_store *mfrd_store(struct mfrd *d);

/*
 * Physical address and DIMM of the pages recorded without them: in
 * slices, from the event loop (scheduled here, done in later turns).
 */
void mfrd_identify_pages(struct mfrd *d);
void mfrd_identify_stop(struct mfrd *d);
/* The SMBIOS table and the rasdaemon records, read at start. */
void mfrd_identify_load(struct mfrd *d);

/*
 * Long work that cannot leave the loop (one reconcile transaction) calls
 * this after each unit of progress: WATCHDOG=1 at most every quarter of
 * WatchdogSec.  Work that can be cut is done in slices instead (boot
 * offlining, memory identity), and the loop feeds the watchdog.
 */
void mfrd_watchdog_progress(struct mfrd *d);

/* Retention of the events log, as mfrd.conf says. */
void mfrd_prune_events(struct mfrd *d);

/*
 * Whether the host is protected: the module loaded and every configured
 * rule in it.  NULL, or why not.
 */
const char *mfrd_unprotected_reason(const struct mfrd *d);

/*
 * Send READY=1 once protected (or as mfrd.conf allows, before); once
 * protected after a READY=1 without it, say so.
 */
void mfrd_ready_if_protected(struct mfrd *d);

/* Rules refused at connect or on a retry: push the whole set again. */
void mfrd_rules_retry(struct mfrd *d);

/*
 * Read the settings and rules again and push them, as on SIGHUP (asked:
 * the outcome goes to "mfrd --reload"); READY=1 if that protects a start
 * still pending.
 */
void mfrd_reload_now(struct mfrd *d, bool asked);

/* mfrd-pending-reload.c */
/*
 * Until READY=1, reload as soon as mfrd.conf or a file in rules.d
 * changes: systemd holds a "systemctl reload" back until the start ends.
 */
void mfrd_pending_reload_watch(struct mfrd *d);
void mfrd_pending_reload_stop(struct mfrd *d);

/* CLOCK_REALTIME microseconds, as the store keeps times. */
int64_t mfrd_now_usec(void);

/*
 * Another program committed to the store since the last look (mfrctl
 * forget): count the pfns of earlier boots again, so that the metric is
 * not stale.  Called before each metrics write.
 */
void mfrd_store_check_outside_change(struct mfrd *d);
/* Count the earlier boots' pfns in the store in use (forgotten: see offline). */
void mfrd_count_earlier_pfns(struct mfrd *d, bool forgotten);

/* The kernel's refusal as text: "strerror: extack (attribute x)". */
char *mfrd_genl_error_text(struct mfr_genl *g, int err);

/* mfrd-module.c */
int mfrd_module_watch(struct mfrd *d);
void mfrd_module_unwatch(struct mfrd *d);
/* Connect if mfr.ko is loaded; 0 also when it is not. */
int mfrd_module_try_connect(struct mfrd *d);
/* Close the connection and say so in the journal. */
void mfrd_module_disconnect(struct mfrd *d, const char *why);
/* ... without a word: mfrd is stopping. */
void mfrd_module_close(struct mfrd *d);

/* mfrd-rules.c */
/*
 * Replace the module's rules by rules in one rule-replace request.  A
 * refusal is logged with the FILE:LINE of the rule the module blamed
 * (and put in *d->reload_error while reloading).  all: all or nothing (a
 * reload: the previous set stays); else every rule the module takes is
 * pushed, the refused ones left out (d->refused) and logged.  0 when
 * pushed (every rule, or with all false every one it takes), or -1.
 */
int mfrd_rules_push(struct mfrd *d, const struct mfrd_rules *rules, bool all);

/*
 * Before each metrics write: the rules mfr.ko holds against those mfrd
 * pushed; a rule added or deleted behind mfrd's back (mfrctl rules
 * add/del), which its next push undoes, is logged and exported.
 */
void mfrd_rules_check_outside(struct mfrd *d);

/* mfrd-sync.c */
/*
 * Dump the module's memfds and poisoned pages into the store, in one
 * transaction.  Returns the number of pages added or changed, or -1.
 */
int mfrd_reconcile(struct mfrd *d, const char *why);
/*
 * The same, at once if the last was long enough ago, else when it is:
 * what a tenant can trigger (generation gaps from rate-limited events,
 * overruns) is bounded in rate.
 */
void mfrd_reconcile_soon(struct mfrd *d, const char *why);
void mfrd_reconcile_stop(struct mfrd *d);
/* Read and record every pending event. */
int mfrd_events_read(struct mfrd *d);

/* mfrd-offline.c */
/*
 * Offline the pfns of earlier boots, once per boot, in slices from the
 * event loop; done() is called when the pass is over (at once if there
 * is none to do).
 */
void mfrd_offline_recorded(struct mfrd *d, void (*done)(struct mfrd *d));
/* Stopping during the pass: its state freed, done() not called. */
void mfrd_offline_cancel(struct mfrd *d);
/*
 * The store changed behind mfrd (mfrctl forget): pfns no longer recorded
 * leave the counts of failed and DIMM-changed pfns.  pfns: the earlier
 * boots' pfns now, sorted.
 */
void mfrd_offline_forgotten(struct mfrd *d, const uint64_t *pfns, size_t n);

/* mfrd-report.c */
int mfrd_report_start(struct mfrd *d);
void mfrd_report_stop(struct mfrd *d);
/* Rewrite the metrics now, or within a second if just written. */
void mfrd_report_soon(struct mfrd *d);
/* Send STATUS= (if it changed) and extra, e.g. "READY=1", if not NULL. */
void mfrd_report_status(struct mfrd *d, const char *extra);
/* The interval changed: re-arm the metrics timer. */
int mfrd_report_rearm(struct mfrd *d);

#endif /* MFRD_H */
