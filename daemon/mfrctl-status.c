// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrctl status and stats: the status-get reply, as a summary for people
 * (status) or as one counter per line (stats, for scripts and metrics).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "mfrctl.h"

/* status summary lines, in this order */
static const struct {
	unsigned int attr;
	const char *label;
} status_lines[] = {
	{ MFR_A_STATUS_MODULE_VERSION, "module version" },
	{ MFR_A_STATUS_HOOKS_API_VERSION, "hook API version" },
	{ MFR_A_STATUS_GENERATION, "generation" },
	{ MFR_A_STATUS_RULES, "rules" },
	{ MFR_A_STATUS_MEMFDS_KEPT, "memfds kept" },
	{ MFR_A_STATUS_RAW_PAGES_KEPT, "raw pages kept" },
	{ MFR_A_STATUS_FOLIOS_PENDING, "folios pending" },
	{ MFR_A_STATUS_FOLIOS_OFFLINED, "folios offlined" },
	{ MFR_A_STATUS_RAW_PAGES_ISOLATED, "raw pages isolated" },
	{ MFR_A_STATUS_HEALTHY_PAGES_RETURNED, "healthy pages returned" },
	{ MFR_A_STATUS_BUDGET_FALLBACKS, "budget fallbacks" },
	{ MFR_A_STATUS_SIGNALS_SENT, "signals sent" },
	{ MFR_A_STATUS_EVENTS_SUPPRESSED, "events suppressed" },
};

_Static_assert(ARRAY_SIZE(status_lines) == MFR_A_STATUS_MAX,
	       "every status attribute has a line");

/* Counters are everything but the versions. */
static bool is_counter(unsigned int attr)
{
	return attr != MFR_A_STATUS_MODULE_VERSION &&
	       attr != MFR_A_STATUS_HOOKS_API_VERSION;
}

static int print_status(struct mfrctl *ctl, struct nlattr **tb)
{
	const struct mfr_attr_set *set = &mfr_attr_sets[MFR_SET_STATUS];
	unsigned int attr;
	size_t i;
	char *v;

	if (ctl->json)
		return json_print_attrs(set, tb);
	for (i = 0; i < ARRAY_SIZE(status_lines); i++) {
		attr = status_lines[i].attr;
		v = tb[attr] ? attr_text(set, attr, tb[attr], false) :
			       strdup("-");
		if (!v)
			return -ENOMEM;
		printf("%-24s%s\n", status_lines[i].label, v);
		free(v);
	}
	return 0;
}

static int print_stats(struct mfrctl *ctl, struct nlattr **tb)
{
	json_object *doc = NULL;
	const char *name;
	char key[64];
	unsigned int i;
	int ret;

	if (ctl->json) {
		doc = json_object_new_object();
		if (!doc)
			return -ENOMEM;
	}
	for (i = 1; i <= MFR_A_STATUS_MAX; i++) {
		if (!is_counter(i) || !tb[i])
			continue;
		name = mfr_attr_sets[MFR_SET_STATUS].attrs[i].name;
		if (!doc) {
			printf("%s %llu\n", name,
			       (unsigned long long)mfr_genl_get_uint(tb[i]));
			continue;
		}
		json_key(name, key, sizeof(key));
		ret = json_add(doc, key,
			       json_object_new_uint64(mfr_genl_get_uint(tb[i])));
		if (ret) {
			json_object_put(doc);
			return ret;
		}
	}
	if (!doc)
		return 0;
	ret = json_print(doc);
	json_object_put(doc);
	return ret;
}

struct status_req {
	struct mfrctl *ctl;
	bool stats;
};

static int status_reply(uint8_t cmd, const struct mfr_attr_set *set,
			struct nlattr **tb, void *arg)
{
	struct status_req *r = arg;

	(void)cmd;
	(void)set;
	return r->stats ? print_stats(r->ctl, tb) : print_status(r->ctl, tb);
}

static int get_status(struct mfrctl *ctl, bool stats)
{
	struct status_req r = { .ctl = ctl, .stats = stats };
	struct nl_msg *req;
	int ret;

	req = mfr_genl_request(ctl->genl, MFR_CMD_STATUS_GET);
	if (!req)
		return mfrctl_fail(ctl, -ENOMEM);
	ret = mfr_genl_do(ctl->genl, req, status_reply, &r);
	nlmsg_free(req);
	return ret ? mfrctl_fail(ctl, ret) : EXIT_OK;
}

int status_run(struct mfrctl *ctl)
{
	return get_status(ctl, false);
}

int stats_run(struct mfrctl *ctl)
{
	return get_status(ctl, true);
}
