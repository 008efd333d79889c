// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The textfile writer.  Names follow Prometheus practice: the "mfr_"
 * prefix, "_total" on counters.  The module's counters start from zero
 * at each module load, which Prometheus treats as a counter reset.  Pfns
 * never become labels: that would be one series per bad page.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mfr-spec.h"
#include "mfrd-atomic-file.h"
#include "mfrd-metrics.h"

struct metric {
	const char *name;
	const char *type;
	const char *help;
};

/* The status-get attributes, but the two versions (in mfr_module_info). */
static const struct metric status_metrics[MFR_A_STATUS_MAX + 1] = {
	[MFR_A_STATUS_MEMFDS_KEPT] = { "mfr_memfds_kept", "gauge",
		"HugeTLB memfds currently opted in to keep poisoned pages mapped." },
	[MFR_A_STATUS_RAW_PAGES_KEPT] = { "mfr_raw_pages_kept", "gauge",
		"Poisoned 4 KiB pages in kept hugepages not offlined yet." },
	[MFR_A_STATUS_FOLIOS_PENDING] = { "mfr_folios_pending", "gauge",
		"Kept hugepages released by their memfd and not offlined yet." },
	[MFR_A_STATUS_FOLIOS_OFFLINED] = { "mfr_folios_offlined_total", "counter",
		"Poisoned hugepages dissolved and offlined since the module loaded." },
	[MFR_A_STATUS_RAW_PAGES_ISOLATED] = { "mfr_raw_pages_isolated_total", "counter",
		"Poisoned 4 KiB pages taken off the page allocator for good." },
	[MFR_A_STATUS_HEALTHY_PAGES_RETURNED] = { "mfr_healthy_pages_returned_total", "counter",
		"Healthy 4 KiB pages of offlined hugepages given back to the allocator." },
	[MFR_A_STATUS_BUDGET_FALLBACKS] = { "mfr_budget_fallbacks_total", "counter",
		"Errors handled the default way because a memfd's budget was exceeded." },
	[MFR_A_STATUS_SIGNALS_SENT] = { "mfr_signals_sent_total", "counter",
		"SIGBUS signals sent for poisoned pages of kept hugepages." },
	[MFR_A_STATUS_RULES] = { "mfr_rules", "gauge",
		"Rules installed in the module." },
	[MFR_A_STATUS_GENERATION] = { "mfr_generation", "gauge",
		"Generation of the module's state, changes with every change." },
	[MFR_A_STATUS_EVENTS_SUPPRESSED] = { "mfr_events_suppressed_total", "counter",
		"Notifications not sent because their user was past its rate limit." },
};

static void header(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One sample without labels: its HELP, TYPE and value. */
static void u64_metric(FILE *f, const char *name, const char *type,
		       const char *help, uint64_t v)
{
	header(f, name, type, help);
	fprintf(f, "%s %" PRIu64 "\n", name, v);
}

/* A label value: backslash, double quote and newline escaped. */
static void label_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			fprintf(f, "\\%c", *v);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void format(FILE *f, const struct mfrd_metrics *m)
{
	header(f, "mfr_module_loaded", "gauge",
	       "Whether the mfr module is loaded (its family answers).");
	fprintf(f, "mfr_module_loaded %d\n", m->module_loaded);
	if (m->module_loaded) {
		header(f, "mfr_module_info", "gauge",
		       "Versions of the loaded mfr module, as labels.");
		fputs("mfr_module_info{version=\"", f);
		label_value(f, m->module_version ? m->module_version : "");
		fputs("\",hooks_api_version=\"", f);
		if (m->has[MFR_A_STATUS_HOOKS_API_VERSION])
			fprintf(f, "%" PRIu64,
				m->status[MFR_A_STATUS_HOOKS_API_VERSION]);
		fputs("\"} 1\n", f);
		for (int a = 0; a <= MFR_A_STATUS_MAX; a++) {
			const struct metric *mt = &status_metrics[a];

			if (!mt->name || !m->has[a])
				continue;
			header(f, mt->name, mt->type, mt->help);
			fprintf(f, "%s %" PRIu64 "\n", mt->name, m->status[a]);
		}
	}
	if (m->has_pages) {
		header(f, "mfr_poisoned_pages", "gauge",
		       "Poisoned 4 KiB pages recorded in this boot, by state.");
		for (int s = 0; s < MFRD_PAGE_STATES; s++)
			fprintf(f, "mfr_poisoned_pages{state=\"%s\"} %" PRIu64 "\n",
				mfr_enum_name(&mfr_page_state_enum, s),
				m->pages[s]);
	}
	if (m->has_earlier_boot_pfns) {
		header(f, "mfr_poisoned_pfns_earlier_boots", "gauge",
		       "Distinct poisoned pfns recorded in earlier boots.");
		fprintf(f, "mfr_poisoned_pfns_earlier_boots %" PRIu64 "\n",
			m->earlier_boot_pfns);
		header(f, "mfr_offline_dimm_changed", "gauge",
		       "Pfns of earlier boots recorded on another DIMM than the one at their address now (offlined all the same).");
		fprintf(f, "mfr_offline_dimm_changed %u\n",
			m->offline_dimm_changed);
	}
	/* Known even when the store's earlier pfns are not: always written. */
	header(f, "mfr_offline_failed", "gauge",
	       "Pfns of earlier boots that boot offlining could not take offline, soft or hard (retried at mfrd's next start).");
	fprintf(f, "mfr_offline_failed %u\n", m->offline_failed);
	header(f, "mfr_poisoned_pages_recorded_total", "counter",
	       "Poisoned pages mfrd recorded for the first time since it started (events and dumps; a restart or a reboot starts from 0).");
	fprintf(f, "mfr_poisoned_pages_recorded_total %" PRIu64 "\n",
		m->pages_recorded);

	header(f, "mfrd_build_info", "gauge", "Version of mfrd, as a label.");
	fputs("mfrd_build_info{version=\"", f);
	label_value(f, m->daemon_version ? m->daemon_version : "");
	fputs("\"} 1\n", f);
	header(f, "mfrd_start_time_seconds", "gauge",
	       "When this mfrd started (seconds since the epoch): its counters start from 0 then.");
	fprintf(f, "mfrd_start_time_seconds %.3f\n", m->start_time);
	header(f, "mfrd_protected", "gauge",
	       "Whether the module is loaded and every configured rule is in it (1) or not (0).");
	fprintf(f, "mfrd_protected %d\n", m->protected);
	u64_metric(f, "mfrd_rules_configured", "gauge",
		   "Rules of rules.d that parse: the ones mfrd puts in the module.",
		   m->rules_configured);
	u64_metric(f, "mfrd_rules_refused", "gauge",
		   "Configured rules the module refused: not in force (the others are).",
		   m->rules_refused);
	u64_metric(f, "mfrd_rules_file_errors", "gauge",
		   "Errors in rules.d at mfrd's start: the rules they are in are not in force until a reload loads every file.",
		   m->rules_file_errors);
	u64_metric(f, "mfrd_memfd_cache_entries", "gauge",
		   "Memfd owners mfrd keeps for its records (bounded; the least recently used go first).",
		   m->memfd_cache_entries);
	u64_metric(f, "mfrd_memfd_cache_bytes", "gauge",
		   "Memory those entries take, in bytes (bounded).",
		   m->memfd_cache_bytes);
	header(f, "mfrd_waiting_for_module", "gauge",
	       "Whether mfrd waits for the mfr module to be loaded.");
	fprintf(f, "mfrd_waiting_for_module %d\n", m->waiting_for_module);
	header(f, "mfrd_ready_unprotected", "gauge",
	       "Whether mfrd told systemd it is ready while the module is not loaded (ready_timeout passed, ready_without_module, or the module went away): units ordered after mfrd run unprotected.");
	fprintf(f, "mfrd_ready_unprotected %d\n", m->ready_unprotected);
	header(f, "mfrd_rules_pushed_timestamp_seconds", "gauge",
	       "When the rules were last pushed to the module (0: never).");
	fprintf(f, "mfrd_rules_pushed_timestamp_seconds %.3f\n",
		m->rules_pushed_time);
	header(f, "mfrd_last_reload_success_timestamp_seconds", "gauge",
	       "When the configuration was last loaded successfully (start or reload).");
	fprintf(f, "mfrd_last_reload_success_timestamp_seconds %.3f\n",
		m->reload_ok_time);
	u64_metric(f, "mfrd_reloads_failed_total", "counter",
		   "Reloads refused since mfrd started (configuration errors or rules refused by the module).",
		   m->reloads_failed);
	header(f, "mfrd_rules_changed_outside", "gauge",
	       "Rules added to or removed from the module behind mfrd's back (mfrctl rules add/del): its next reload or restart undoes them.");
	fprintf(f, "mfrd_rules_changed_outside %u\n", m->rules_outside);
	u64_metric(f, "mfrd_events_lost_total", "counter",
		   "Times mfrd lost module events (receive buffer overrun, generation gap).",
		   m->events_lost);
	u64_metric(f, "mfrd_redumps_total", "counter",
		   "Reconciling dumps of the module's state (start, module loaded, events lost).",
		   m->redumps);
	header(f, "mfrd_journal_suppressed_total", "counter",
	       "Journal entries not logged by the per-kind rate limit (the store has them).");
	fprintf(f, "mfrd_journal_suppressed_total %" PRIu64 "\n",
		m->journal_suppressed);
	u64_metric(f, "mfrd_events_pruned_total", "counter",
		   "Rows of the events log deleted by its retention (page records never are).",
		   m->events_pruned);
	if (m->has_events_rows) {
		header(f, "mfrd_events_rows", "gauge",
		       "Rows in the events log of the store.");
		fprintf(f, "mfrd_events_rows %" PRIu64 "\n", m->events_rows);
	}
	u64_metric(f, "mfrd_store_errors_total", "counter",
		   "Failed reads and writes of mfrd's store since mfrd started.",
		   m->store_errors);
	header(f, "mfrd_store_recovered", "gauge",
	       "Whether a store incident (a damaged store moved aside, a store mfrd could not use) awaits \"mfrctl store ack\", or the store file is not in use.");
	fprintf(f, "mfrd_store_recovered %d\n", m->store_recovered);
	header(f, "mfrd_store_in_memory", "gauge",
	       "Whether mfrd keeps its records in a stand-in, beside the store, in /run or in memory (the store file cannot be used now; retried, then merged).");
	fprintf(f, "mfrd_store_in_memory %d\n", m->store_in_memory);
	header(f, "mfrd_store_locked", "gauge",
	       "Whether another program holds the store file's write lock: mfrd keeps its records aside, merges them once it is released.");
	fprintf(f, "mfrd_store_locked %d\n", m->store_locked);
	header(f, "mfrd_metrics_write_timestamp_seconds", "gauge",
	       "When mfrd wrote this file: a stale value means mfrd is not running.");
	fprintf(f, "mfrd_metrics_write_timestamp_seconds %.3f\n", m->write_time);
}

int mfrd_metrics_write(const char *path, const struct mfrd_metrics *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	f = open_memstream(&buf, &len);
	if (!f)
		return -errno;
	format(f, m);
	/*
	 * node_exporter reads only *.prom, so it never sees PATH.tmp; it
	 * runs as another user, hence 0644 whatever the umask.
	 */
	r = fclose(f) ? -ENOMEM : mfrd_atomic_write(path, buf, len, 0644);
	free(buf);
	return r;
}
