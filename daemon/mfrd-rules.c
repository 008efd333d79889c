// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pushing the configured rules to mfr.ko: one rule-replace request with
 * the whole set.  The module checks every rule before it installs any, and
 * swaps the two sets under the lock its matching takes: a memfd created
 * meanwhile gets the whole old set's decision or the whole new one's, a
 * refused rule leaves the module exactly as it was, and the set never
 * needs room for two copies of itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mfrd.h"
#include "mfrd-cgroups.h"
#include "mfrd-log.h"
#include "mfrd-rule-ids.h"
#include "mfrd-grow.h"

/* Room for one rule in the request: its nest and attributes. */
static size_t rule_size(const struct mfrd_rule *r)
{
	size_t size = 8 * 16;

	if (r->name_glob)
		size += strlen(r->name_glob) + 8;
	if (r->cgroup_path)
		size += strlen(r->cgroup_path) + 8;
	return size;
}

static int put_rule(struct nl_msg *req, const struct mfrd_rule *r)
{
	struct nlattr *nest = nla_nest_start(req, MFR_A_RULE_SET_RULE);

	if (!nest ||
	    (r->name_glob &&
	     nla_put_string(req, MFR_A_RULE_NAME_GLOB, r->name_glob)) ||
	    (r->cgroup_path &&
	     nla_put_string(req, MFR_A_RULE_CGROUP_PATH, r->cgroup_path)) ||
	    (r->cgroup_id &&
	     nla_put_u64(req, MFR_A_RULE_CGROUP_ID, r->cgroup_id)) ||
	    (r->has_uid && nla_put_u32(req, MFR_A_RULE_UID, r->uid)) ||
	    nla_put_u32(req, MFR_A_RULE_ACTION, r->action) ||
	    (r->has_budget && nla_put_u32(req, MFR_A_RULE_BUDGET, r->budget)))
		return -EMSGSIZE;
	nla_nest_end(req, nest);
	return 0;
}

/* The rule whose nest holds byte offset of the request, or NULL. */
static const struct mfrd_rule *rule_at(const struct mfrd_rules *rules,
				       const size_t *start, uint32_t offset)
{
	for (size_t i = rules->n; i-- > 0;)
		if (offset >= start[i])
			return &rules->v[i];
	return NULL;
}

static void log_refusal(struct mfrd *d, const struct mfrd_rules *rules,
			const size_t *start, int err)
{
	const struct mfr_genl_error *e = mfr_genl_last_error(d->req);
	const struct mfrd_rule *r = NULL;
	char *why = mfrd_genl_error_text(d->req, err), *text;
	struct mfrd_log *l;
	bool known;

	if (e->errnum == -err && e->offset)
		r = rule_at(rules, start, e->offset);
	if (r) {
		if (asprintf(&text, "%s:%u: rule refused by mfr.ko: %s; the previous rules stay",
			     r->file, r->line, why) < 0)
			abort();
	} else if (asprintf(&text, "rules refused by mfr.ko: %s; the previous rules stay",
			    why) < 0) {
		abort();
	}
	/* A retry refused as before is not news: debug only. */
	known = d->rules_retrying && d->rules_refusal &&
		!strcmp(d->rules_refusal, text);
	l = mfrd_log_new(known ? LOG_DEBUG : LOG_ERR,
			 MFRD_MSGID_CONFIG_REJECTED);
	mfrd_log_field(l, "MFR_RULES_KEPT", "%s", "previous");
	if (r) {
		mfrd_log_field(l, "CODE_FILE", "%s", r->file);
		mfrd_log_field(l, "CODE_LINE", "%u", r->line);
	}
	mfrd_log_message(l, "%s", text);
	mfrd_log_send(l);
	free(d->rules_refusal);
	d->rules_refusal = text;
	if (d->reload_error) {
		free(*d->reload_error);
		if (r) {
			if (asprintf(d->reload_error, "%s:%u: rule refused by mfr.ko: %s",
				     r->file, r->line, why) < 0)
				abort();
		} else if (asprintf(d->reload_error, "rules refused by mfr.ko: %s",
				    why) < 0) {
			abort();
		}
	}
	free(why);
}

struct id_list {
	uint32_t *v;
	size_t n, cap;
};

static int id_cb(uint8_t cmd, const struct mfr_attr_set *set,
		 struct nlattr **tb, void *arg)
{
	struct id_list *ids = arg;
	uint32_t *v;

	(void)cmd;
	(void)set;
	if (!tb[MFR_A_RULE_ID])
		return 0;
	v = mfrd_grow(ids->v, &ids->cap, ids->n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	ids->v = v;
	v[ids->n++] = nla_get_u32(tb[MFR_A_RULE_ID]);
	return 0;
}

/* The ids of the rules mfr.ko holds now; 0 or a negative errno. */
static int held_ids(struct mfrd *d, struct id_list *ids)
{
	*ids = (struct id_list){ 0 };
	return mfr_genl_dump(d->req, MFR_CMD_RULE_GET, id_cb, ids);
}

void mfrd_rules_check_outside(struct mfrd *d)
{
	struct mfrd_rule_drift drift;
	struct id_list now;
	unsigned int n;

	if (!d->connected || !d->rules_pushed_usec || d->rules_refused ||
	    !d->pushed_ids_known)
		return;
	if (held_ids(d, &now)) {
		free(now.v);	/* a dump cut short: try at the next write */
		return;
	}
	drift = mfrd_rule_ids_drift(d->pushed_ids, d->npushed_ids, now.v,
				    now.n);
	free(now.v);
	n = drift.added + drift.removed;
	if (n && n != d->rules_outside)
		mfrd_logf(LOG_WARNING, NULL,
			  "the rules in mfr.ko were changed behind mfrd's back (%u added, %u of mfrd's removed: mfrctl rules add/del?); that lasts only until mfrd's next reload or restart, which puts back the rules of %s",
			  drift.added, drift.removed, d->rules_dir);
	else if (!n && d->rules_outside)
		mfrd_logf(LOG_INFO, NULL,
			  "the rules in mfr.ko are again the ones mfrd pushed");
	d->rules_outside = n;
}

int mfrd_rules_push(struct mfrd *d, const struct mfrd_rules *rules)
{
	size_t *start, size = 64;
	struct id_list pushed;
	struct nl_msg *req;
	uint64_t *ids;
	int ret = -ENOMEM;

	if (!d->req)
		return -1;
	start = calloc(rules->n + 1, sizeof(*start));
	/*
	 * The cgroups as they are before the push: one recreated during it
	 * is seen as changed on the next tick (one push too many), never
	 * missed.
	 */
	ids = calloc(rules->n + 1, sizeof(*ids));
	if (!start || !ids)
		abort();
	mfrd_cgroup_ids_read(d->cgroup_root, rules, ids);
	for (size_t i = 0; i < rules->n; i++)
		size += rule_size(&rules->v[i]);
	req = mfr_genl_request_sized(d->req, MFR_CMD_RULE_REPLACE, size);
	if (!req)
		abort();
	for (size_t i = 0; i < rules->n; i++) {
		start[i] = nlmsg_hdr(req)->nlmsg_len;
		ret = put_rule(req, &rules->v[i]);
		if (ret) {
			mfrd_logf(LOG_ERR, NULL, "%s:%u: rule does not fit the request",
				  rules->v[i].file, rules->v[i].line);
			goto out;
		}
	}
	ret = mfr_genl_do(d->req, req, NULL, NULL);
	if (ret) {
		log_refusal(d, rules, start, ret);
		goto out;
	}
	d->rules_pushed_usec = mfrd_now_usec();
	mfrd_logf(LOG_INFO, NULL, "%zu rule%s pushed to mfr.ko", rules->n,
		  rules->n == 1 ? "" : "s");
	/* What to compare with later: mfr.ko gave them new ids. */
	free(d->pushed_ids);
	d->pushed_ids_known = !held_ids(d, &pushed);
	if (!d->pushed_ids_known) {
		free(pushed.v);
		pushed = (struct id_list){ 0 };
	}
	d->pushed_ids = pushed.v;
	d->npushed_ids = pushed.n;
	d->rules_outside = 0;
out:
	/* Of the set in force (a refused reload's set is dropped). */
	if (!ret || rules == &d->rules) {
		free(d->cgroup_ids);
		d->cgroup_ids = ids;
		ids = NULL;
	}
	free(ids);
	nlmsg_free(req);
	free(start);
	return ret ? -1 : 0;
}

void mfrd_rules_check_cgroups(struct mfrd *d)
{
	const struct mfrd_rule *r;
	uint64_t now = 0;
	long i;

	if (!d->connected || !d->cgroup_ids)
		return;
	i = mfrd_cgroup_ids_changed(d->cgroup_root, &d->rules, d->cgroup_ids,
				    &now);
	if (i < 0)
		return;
	if (d->rules_refused) {
		/* A cgroup appeared: the refused rule may pass now. */
		mfrd_rules_retry(d);
		return;
	}
	r = &d->rules.v[i];
	mfrd_logf(LOG_NOTICE, NULL,
		  "%s:%u: the cgroup %s was %s: pushing the rules again so that mfr.ko matches the cgroup there now",
		  r->file, r->line, r->cgroup_path,
		  !now ? "removed" : d->cgroup_ids[i] ? "created again" :
		  "created");
	if (mfrd_rules_push(d, &d->rules)) {
		d->rules_refused = true;
		mfrd_report_soon(d);
		return;
	}
	/* Our rule-replace moved the generation: re-base. */
	d->need_reconcile = mfrd_reconcile(d, "rules pushed") < 0;
	mfrd_report_soon(d);
}
