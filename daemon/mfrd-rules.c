// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pushing the configured rules to mfr.ko: one rule-replace request with
 * the whole set.  The module checks every rule before it installs any, and
 * swaps the two sets under the lock its matching takes: a memfd created
 * meanwhile gets the whole old set's decision or the whole new one's, a
 * refused rule leaves the module exactly as it was, and the set never
 * needs room for two copies of itself.
 *
 * A reload is all or nothing: a refused rule keeps the previous set, and
 * "systemctl reload" fails with its FILE:LINE.  Otherwise (the start, a
 * module loaded, a retry) one refused rule must not leave the others out:
 * it is taken out of the request (the extended ACK's offset names it) and
 * the rest pushed again, so every rule the module takes is in force.  A
 * cgroup-path rule needs no cgroup yet: the module matches it by name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mfrd.h"
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
	known = d->rules_retrying;
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

	if (!d->connected || !d->rules_pushed_usec || !d->pushed_ids_known)
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

/*
 * One rule-replace with the rules of rules not skipped.  0, or -1 with
 * *blamed the index of the rule the module refused (-1: none named).
 */
static int replace(struct mfrd *d, const struct mfrd_rules *rules,
		   const bool *skip, long *blamed)
{
	const struct mfr_genl_error *e;
	size_t *start, *index, n = 0, size = 64;
	struct mfrd_rules sent;
	struct nl_msg *req;
	int ret = 0;

	*blamed = -1;
	start = calloc(rules->n + 1, sizeof(*start));
	index = calloc(rules->n + 1, sizeof(*index));
	sent.v = calloc(rules->n + 1, sizeof(*sent.v));
	if (!start || !index || !sent.v)
		abort();
	for (size_t i = 0; i < rules->n; i++)
		if (!skip || !skip[i]) {
			size += rule_size(&rules->v[i]);
			index[n] = i;
			sent.v[n++] = rules->v[i];
		}
	sent.n = n;
	req = mfr_genl_request_sized(d->req, MFR_CMD_RULE_REPLACE, size);
	if (!req)
		abort();
	for (size_t i = 0; i < n && !ret; i++) {
		start[i] = nlmsg_hdr(req)->nlmsg_len;
		ret = put_rule(req, &sent.v[i]);
		if (ret)
			mfrd_logf(LOG_ERR, NULL, "%s:%u: rule does not fit the request",
				  sent.v[i].file, sent.v[i].line);
	}
	if (!ret)
		ret = mfr_genl_do(d->req, req, NULL, NULL);
	if (ret && ret != -EMSGSIZE) {
		log_refusal(d, &sent, start, ret);
		e = mfr_genl_last_error(d->req);
		if (e->errnum == -ret && e->offset)
			for (size_t i = n; i-- > 0;)
				if (e->offset >= start[i]) {
					*blamed = (long)index[i];
					break;
				}
	}
	nlmsg_free(req);
	free(start);
	free(index);
	free(sent.v);
	return ret ? -1 : 0;
}

/* What to compare with later: mfr.ko gave the pushed rules new ids. */
static void remember_pushed(struct mfrd *d, size_t n)
{
	struct id_list pushed;

	d->rules_pushed_usec = mfrd_now_usec();
	mfrd_logf(LOG_INFO, NULL, "%zu rule%s pushed to mfr.ko", n,
		  n == 1 ? "" : "s");
	free(d->pushed_ids);
	d->pushed_ids_known = !held_ids(d, &pushed);
	if (!d->pushed_ids_known) {
		free(pushed.v);
		pushed = (struct id_list){ 0 };
	}
	d->pushed_ids = pushed.v;
	d->npushed_ids = pushed.n;
	d->rules_outside = 0;
}

int mfrd_rules_push(struct mfrd *d, const struct mfrd_rules *rules, bool all)
{
	bool *skip;
	size_t nskip = 0;
	long blamed;
	int ret;

	if (!d->req)
		return -1;
	if (all) {
		ret = replace(d, rules, NULL, &blamed);
		if (!ret)
			remember_pushed(d, rules->n);
		return ret;
	}
	/* Each try leaves out one more refused rule: at most n + 1 tries. */
	skip = calloc(rules->n + 1, sizeof(*skip));
	if (!skip)
		abort();
	while ((ret = replace(d, rules, skip, &blamed)) && blamed >= 0 &&
	       !skip[blamed]) {
		skip[blamed] = true;
		nskip++;
	}
	if (!ret)
		remember_pushed(d, rules->n - nskip);
	/* A refusal naming no rule leaves the module's set as it was. */
	if (ret)
		for (size_t i = 0; i < rules->n; i++)
			skip[i] = true;
	if (rules == &d->rules) {
		free(d->refused);
		d->refused = skip;
		d->nrefused = ret ? rules->n : nskip;
	} else {
		free(skip);
	}
	return ret;
}

