// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The textfile writer.  Names follow Prometheus practice: the "mfr_"
 * prefix, "_total" on counters.  The module's counters start from zero
 * at each module load, which Prometheus treats as a counter reset.  Pfns
 * never become labels: that would be one series per bad page.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mfr-spec.h"
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
	header(f, "mfr_poisoned_pages", "gauge",
	       "Poisoned 4 KiB pages recorded in this boot, by state.");
	for (int s = 0; s < MFRD_PAGE_STATES; s++)
		fprintf(f, "mfr_poisoned_pages{state=\"%s\"} %" PRIu64 "\n",
			mfr_enum_name(&mfr_page_state_enum, s), m->pages[s]);
	header(f, "mfr_poisoned_pfns_earlier_boots", "gauge",
	       "Distinct poisoned pfns recorded in earlier boots.");
	fprintf(f, "mfr_poisoned_pfns_earlier_boots %" PRIu64 "\n",
		m->earlier_boot_pfns);
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Make the rename itself durable. */
static int sync_dir(const char *path)
{
	char *copy = strdup(path);
	int fd, r = 0;

	if (!copy)
		return -ENOMEM;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(copy);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		r = -errno;
	close(fd);
	return r;
}

int mfrd_metrics_write(const char *path, const struct mfrd_metrics *m)
{
	char *buf = NULL, *tmp = NULL;
	size_t len = 0;
	int fd = -1, r;
	FILE *f;

	f = open_memstream(&buf, &len);
	if (!f)
		return -errno;
	format(f, m);
	if (fclose(f) != 0) {
		r = -ENOMEM;
		goto out;
	}
	if (asprintf(&tmp, "%s.tmp", path) < 0) {
		tmp = NULL;
		r = -ENOMEM;
		goto out;
	}
	/* node_exporter reads only *.prom, so it never sees PATH.tmp. */
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  0644);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	/* Whatever our umask, node_exporter runs as another user. */
	r = fchmod(fd, 0644) < 0 ? -errno : write_all(fd, buf, len);
	if (!r && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r)
		unlink(tmp);
	else
		r = sync_dir(path);
out:
	free(tmp);
	free(buf);
	return r;
}
