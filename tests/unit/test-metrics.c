// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test of mfrd-metrics: the exact exposition text with and without
 * the module, label escaping, and the atomic replacement (a new inode
 * renamed over the old file, no PATH.tmp left, the old file kept when
 * writing fails).
 */
#include <errno.h>
#include <unistd.h>
#include <linux/mfr.h>

#include "mfrd-metrics.h"
#include "unit.h"

#define DAEMON_TEXT(version, protected, waiting, unprotected, pushed, reload_ok, \
		    reloads_failed, outside, events, store_errors, recovered, \
		    in_memory, written)						\
	"# HELP mfrd_build_info Version of mfrd, as a label.\n"		\
	"# TYPE mfrd_build_info gauge\n"					\
	"mfrd_build_info{version=\"" version "\"} 1\n"			\
	"# HELP mfrd_start_time_seconds When this mfrd started (seconds since the epoch): its counters start from 0 then.\n" \
	"# TYPE mfrd_start_time_seconds gauge\n"				\
	"mfrd_start_time_seconds 0.000\n"				\
	"# HELP mfrd_protected Whether the module is loaded and every configured rule is in it (1) or not (0).\n" \
	"# TYPE mfrd_protected gauge\n"					\
	"mfrd_protected " protected "\n"					\
	"# HELP mfrd_rules_configured Rules of rules.d that parse: the ones mfrd puts in the module.\n" \
	"# TYPE mfrd_rules_configured gauge\n"				\
	"mfrd_rules_configured 0\n"					\
	"# HELP mfrd_rules_refused Configured rules the module refused: not in force (the others are).\n" \
	"# TYPE mfrd_rules_refused gauge\n"				\
	"mfrd_rules_refused 0\n"						\
	"# HELP mfrd_rules_file_errors Errors in rules.d at mfrd's start: the rules they are in are not in force until a reload loads every file.\n" \
	"# TYPE mfrd_rules_file_errors gauge\n"				\
	"mfrd_rules_file_errors 0\n"					\
	"# HELP mfrd_memfd_cache_entries Memfd owners mfrd keeps for its records (bounded; the least recently used go first).\n" \
	"# TYPE mfrd_memfd_cache_entries gauge\n"				\
	"mfrd_memfd_cache_entries 0\n"					\
	"# HELP mfrd_memfd_cache_bytes Memory those entries take, in bytes (bounded).\n" \
	"# TYPE mfrd_memfd_cache_bytes gauge\n"				\
	"mfrd_memfd_cache_bytes 0\n"					\
	"# HELP mfrd_waiting_for_module Whether mfrd waits for the mfr module to be loaded.\n" \
	"# TYPE mfrd_waiting_for_module gauge\n"				\
	"mfrd_waiting_for_module " waiting "\n"				\
	"# HELP mfrd_ready_unprotected Whether mfrd told systemd it is ready while the module is not loaded (ready_timeout passed, ready_without_module, or the module went away): units ordered after mfrd run unprotected.\n" \
	"# TYPE mfrd_ready_unprotected gauge\n"				\
	"mfrd_ready_unprotected " unprotected "\n"			\
	"# HELP mfrd_rules_pushed_timestamp_seconds When the rules were last pushed to the module (0: never).\n" \
	"# TYPE mfrd_rules_pushed_timestamp_seconds gauge\n"		\
	"mfrd_rules_pushed_timestamp_seconds " pushed "\n"			\
	"# HELP mfrd_last_reload_success_timestamp_seconds When the configuration was last loaded successfully (start or reload).\n" \
	"# TYPE mfrd_last_reload_success_timestamp_seconds gauge\n"	\
	"mfrd_last_reload_success_timestamp_seconds " reload_ok "\n"	\
	"# HELP mfrd_reloads_failed_total Reloads refused since mfrd started (configuration errors or rules refused by the module).\n" \
	"# TYPE mfrd_reloads_failed_total counter\n"			\
	"mfrd_reloads_failed_total " reloads_failed "\n"			\
	"# HELP mfrd_rules_changed_outside Rules added to or removed from the module behind mfrd's back (mfrctl rules add/del): its next reload or restart undoes them.\n" \
	"# TYPE mfrd_rules_changed_outside gauge\n"			\
	"mfrd_rules_changed_outside " outside "\n"			\
	events								\
	"# HELP mfrd_store_errors_total Failed reads and writes of mfrd's store since mfrd started.\n" \
	"# TYPE mfrd_store_errors_total counter\n"				\
	"mfrd_store_errors_total " store_errors "\n"			\
	"# HELP mfrd_store_recovered Whether a store incident (a damaged store moved aside, a store mfrd could not use) awaits \"mfrctl store ack\", or the store file is not in use.\n" \
	"# TYPE mfrd_store_recovered gauge\n"				\
	"mfrd_store_recovered " recovered "\n"				\
	"# HELP mfrd_store_in_memory Whether mfrd keeps its records in a stand-in, beside the store, in /run or in memory (the store file cannot be used now; retried, then merged).\n" \
	"# TYPE mfrd_store_in_memory gauge\n"				\
	"mfrd_store_in_memory " in_memory "\n"				\
	"# HELP mfrd_store_locked Whether another program holds the store file's write lock: mfrd keeps its records aside, merges them once it is released.\n" \
	"# TYPE mfrd_store_locked gauge\n"				\
	"mfrd_store_locked 0\n"						\
	"# HELP mfrd_metrics_write_timestamp_seconds When mfrd wrote this file: a stale value means mfrd is not running.\n" \
	"# TYPE mfrd_metrics_write_timestamp_seconds gauge\n"		\
	"mfrd_metrics_write_timestamp_seconds " written "\n"

#define RECORDED_TEXT(failed, n)					\
	"# HELP mfr_offline_failed Pfns of earlier boots that boot offlining could not take offline, soft or hard (retried at mfrd's next start).\n" \
	"# TYPE mfr_offline_failed gauge\n"				\
	"mfr_offline_failed " failed "\n"					\
	"# HELP mfr_poisoned_pages_recorded_total Poisoned pages mfrd recorded for the first time since it started (events and dumps; a restart or a reboot starts from 0).\n" \
	"# TYPE mfr_poisoned_pages_recorded_total counter\n"		\
	"mfr_poisoned_pages_recorded_total " n "\n"

#define EVENTS_TEXT(lost, redumps, suppressed, pruned)			\
	"# HELP mfrd_events_lost_total Times mfrd lost module events (receive buffer overrun, generation gap).\n" \
	"# TYPE mfrd_events_lost_total counter\n"				\
	"mfrd_events_lost_total " lost "\n"					\
	"# HELP mfrd_redumps_total Reconciling dumps of the module's state (start, module loaded, events lost).\n" \
	"# TYPE mfrd_redumps_total counter\n"				\
	"mfrd_redumps_total " redumps "\n"					\
	"# HELP mfrd_journal_suppressed_total Journal entries not logged by the per-kind rate limit (the store has them).\n" \
	"# TYPE mfrd_journal_suppressed_total counter\n"			\
	"mfrd_journal_suppressed_total " suppressed "\n"			\
	"# HELP mfrd_events_pruned_total Rows of the events log deleted by its retention (page records never are).\n" \
	"# TYPE mfrd_events_pruned_total counter\n"			\
	"mfrd_events_pruned_total " pruned "\n"
#define ROWS_TEXT(rows)							\
	"# HELP mfrd_events_rows Rows in the events log of the store.\n"	\
	"# TYPE mfrd_events_rows gauge\n"					\
	"mfrd_events_rows " rows "\n"

static const char loaded_text[] =
	"# HELP mfr_module_loaded Whether the mfr module is loaded (its family answers).\n"
	"# TYPE mfr_module_loaded gauge\n"
	"mfr_module_loaded 1\n"
	"# HELP mfr_module_info Versions of the loaded mfr module, as labels.\n"
	"# TYPE mfr_module_info gauge\n"
	"mfr_module_info{version=\"0.1.0 \\\"dev\\\\x\\n\",hooks_api_version=\"1\"} 1\n"
	"# HELP mfr_memfds_kept HugeTLB memfds currently opted in to keep poisoned pages mapped.\n"
	"# TYPE mfr_memfds_kept gauge\n"
	"mfr_memfds_kept 3\n"
	"# HELP mfr_raw_pages_kept Poisoned 4 KiB pages in kept hugepages not offlined yet.\n"
	"# TYPE mfr_raw_pages_kept gauge\n"
	"mfr_raw_pages_kept 4\n"
	"# HELP mfr_folios_pending Kept hugepages released by their memfd and not offlined yet.\n"
	"# TYPE mfr_folios_pending gauge\n"
	"mfr_folios_pending 5\n"
	"# HELP mfr_folios_offlined_total Poisoned hugepages dissolved and offlined since the module loaded.\n"
	"# TYPE mfr_folios_offlined_total counter\n"
	"mfr_folios_offlined_total 6\n"
	"# HELP mfr_raw_pages_isolated_total Poisoned 4 KiB pages taken off the page allocator for good.\n"
	"# TYPE mfr_raw_pages_isolated_total counter\n"
	"mfr_raw_pages_isolated_total 7\n"
	"# HELP mfr_healthy_pages_returned_total Healthy 4 KiB pages of offlined hugepages given back to the allocator.\n"
	"# TYPE mfr_healthy_pages_returned_total counter\n"
	"mfr_healthy_pages_returned_total 8\n"
	"# HELP mfr_budget_fallbacks_total Errors handled the default way because a memfd's budget was exceeded.\n"
	"# TYPE mfr_budget_fallbacks_total counter\n"
	"mfr_budget_fallbacks_total 9\n"
	"# HELP mfr_signals_sent_total SIGBUS signals sent for poisoned pages of kept hugepages.\n"
	"# TYPE mfr_signals_sent_total counter\n"
	"mfr_signals_sent_total 10\n"
	"# HELP mfr_rules Rules installed in the module.\n"
	"# TYPE mfr_rules gauge\n"
	"mfr_rules 11\n"
	"# HELP mfr_generation Generation of the module's state, changes with every change.\n"
	"# TYPE mfr_generation gauge\n"
	"mfr_generation 18446744073709551615\n"
	"# HELP mfr_events_suppressed_total Notifications not sent because their user was past its rate limit.\n"
	"# TYPE mfr_events_suppressed_total counter\n"
	"mfr_events_suppressed_total 13\n"
	"# HELP mfr_poisoned_pages Poisoned 4 KiB pages recorded in this boot, by state.\n"
	"# TYPE mfr_poisoned_pages gauge\n"
	"mfr_poisoned_pages{state=\"kept\"} 1\n"
	"mfr_poisoned_pages{state=\"pending\"} 2\n"
	"mfr_poisoned_pages{state=\"offlined\"} 3\n"
	"mfr_poisoned_pages{state=\"fallback\"} 4\n"
	"# HELP mfr_poisoned_pfns_earlier_boots Distinct poisoned pfns recorded in earlier boots.\n"
	"# TYPE mfr_poisoned_pfns_earlier_boots gauge\n"
	"mfr_poisoned_pfns_earlier_boots 17\n"
	"# HELP mfr_offline_dimm_changed Pfns of earlier boots recorded on another DIMM than the one at their address now (offlined all the same).\n"
	"# TYPE mfr_offline_dimm_changed gauge\n"
	"mfr_offline_dimm_changed 2\n"
	RECORDED_TEXT("3", "9")
	DAEMON_TEXT("0.1.0", "1", "0", "0", "1700000000.500", "1700000001.250",
		    "2", "2", EVENTS_TEXT("4", "5", "6", "7") ROWS_TEXT("8"),
		    "3", "1", "0", "1700000002.125");

/*
 * Without the module, and with a store that could not be read: the page
 * counts are left out, not written as zeros.
 */
static const char unloaded_text[] =
	"# HELP mfr_module_loaded Whether the mfr module is loaded (its family answers).\n"
	"# TYPE mfr_module_loaded gauge\n"
	"mfr_module_loaded 0\n"
	RECORDED_TEXT("0", "0")
	DAEMON_TEXT("", "0", "0", "1", "0.000", "0.000", "0", "0",
		    EVENTS_TEXT("0", "0", "0", "0"), "0", "0", "0", "0.000");

static ino_t inode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_ino;
}

int main(void)
{
	struct mfrd_metrics m = { .module_loaded = true,
				  .module_version = "0.1.0 \"dev\\x\n" };
	char path[4096], tmp[4200], *text;
	struct stat st;
	ino_t before;

	unit_init();
	snprintf(path, sizeof(path), "%s", unit_path("mfr.prom"));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);

	for (int a = 1; a <= MFR_A_STATUS_MAX; a++) {
		m.has[a] = true;
		m.status[a] = (uint64_t)a;
	}
	m.status[MFR_A_STATUS_GENERATION] = UINT64_MAX;
	for (int s = 0; s < MFRD_PAGE_STATES; s++)
		m.pages[s] = (uint64_t)s + 1;
	m.has_pages = m.has_earlier_boot_pfns = true;
	m.earlier_boot_pfns = 17;
	m.offline_dimm_changed = 2;
	m.offline_failed = 3;
	m.pages_recorded = 9;
	m.daemon_version = "0.1.0";
	m.protected = true;
	m.rules_pushed_time = 1700000000.5;
	m.reload_ok_time = 1700000001.25;
	m.reloads_failed = 2;
	m.rules_outside = 2;
	m.events_lost = 4;
	m.redumps = 5;
	m.journal_suppressed = 6;
	m.events_pruned = 7;
	m.has_events_rows = true;
	m.events_rows = 8;
	m.store_errors = 3;
	m.store_recovered = true;
	m.write_time = 1700000002.125;

	/* An old file and a stale PATH.tmp from a crash are both replaced. */
	unit_write(path, "old\n", -1);
	unit_write(tmp, "stale\n", -1);
	before = inode_of(path);
	CHECK(mfrd_metrics_write(path, &m) == 0, "write with the module");
	text = unit_read(path);
	CHECK_STR(text, loaded_text, "exposition text with the module");
	free(text);
	CHECK(access(tmp, F_OK) == -1 && errno == ENOENT, "no PATH.tmp left");
	CHECK(inode_of(path) != before, "a new inode: renamed, not rewritten");
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644,
	      "mode 0644, readable by node_exporter");

	memset(&m, 0, sizeof(m));
	m.ready_unprotected = true;
	CHECK(mfrd_metrics_write(path, &m) == 0, "write without the module");
	text = unit_read(path);
	CHECK_STR(text, unloaded_text, "exposition text without the module");
	free(text);

	/* A failed write leaves the last good file and no PATH.tmp. */
	CHECK(mkdir(tmp, 0755) == 0, "make PATH.tmp a directory");
	CHECK(mfrd_metrics_write(path, &m) == -EISDIR,
	      "PATH.tmp unwritable: -EISDIR");
	text = unit_read(path);
	CHECK_STR(text, unloaded_text, "the last good file is still there");
	free(text);
	rmdir(tmp);

	snprintf(path, sizeof(path), "%s", unit_path("no-such-dir/mfr.prom"));
	CHECK(mfrd_metrics_write(path, &m) == -ENOENT,
	      "a missing directory: -ENOENT");
	return check_exit_status();
}
