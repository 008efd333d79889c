// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pushing the configured rules to mfr.ko.  The module has no transaction,
 * so the switch is make-before-break: the new rules are added after the
 * old ones (the module tries rules by id, so the old ones keep deciding
 * until they go), then the old ones are deleted.  A memfd created during
 * the switch sees either the whole old set or the whole new one, and a
 * refused rule leaves the module exactly as it was.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mfrd.h"
#include "mfrd-log.h"

struct ids {
	uint32_t *v;
	size_t n;
};

static int add_id(struct ids *ids, uint32_t id)
{
	uint32_t *v = realloc(ids->v, (ids->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	v[ids->n++] = id;
	ids->v = v;
	return 0;
}

static int collect_id(uint8_t cmd, const struct mfr_attr_set *set,
		      struct nlattr **tb, void *arg)
{
	(void)cmd;
	(void)set;
	return tb[MFR_A_RULE_ID] ?
	       add_id(arg, nla_get_u32(tb[MFR_A_RULE_ID])) : 0;
}

static int rule_del(struct mfr_genl *g, uint32_t id)
{
	struct nl_msg *req = mfr_genl_request(g, MFR_CMD_RULE_DEL);
	int ret = -ENOMEM;

	if (req && !nla_put_u32(req, MFR_A_RULE_ID, id))
		ret = mfr_genl_do(g, req, NULL, NULL);
	nlmsg_free(req);
	/* Deleted meanwhile (mfrctl rules del): gone is what we wanted. */
	return ret == -ENOENT ? 0 : ret;
}

static int rule_add(struct mfr_genl *g, const struct mfrd_rule *r,
		    struct ids *added)
{
	struct nl_msg *req = mfr_genl_request(g, MFR_CMD_RULE_ADD);
	struct ids got = { 0 };
	int ret = -ENOMEM;

	if (!req ||
	    (r->name_glob &&
	     nla_put_string(req, MFR_A_RULE_NAME_GLOB, r->name_glob)) ||
	    (r->cgroup_path &&
	     nla_put_string(req, MFR_A_RULE_CGROUP_PATH, r->cgroup_path)) ||
	    (r->cgroup_id &&
	     nla_put_u64(req, MFR_A_RULE_CGROUP_ID, r->cgroup_id)) ||
	    (r->has_uid && nla_put_u32(req, MFR_A_RULE_UID, r->uid)) ||
	    nla_put_u32(req, MFR_A_RULE_ACTION, r->action) ||
	    (r->has_budget && nla_put_u32(req, MFR_A_RULE_BUDGET, r->budget)))
		goto out;
	ret = mfr_genl_do(g, req, collect_id, &got);
	if (!ret && got.n == 1)
		ret = add_id(added, got.v[0]);
	else if (!ret)
		ret = -EBADMSG;		/* no id in the reply */
out:
	nlmsg_free(req);
	free(got.v);
	return ret;
}

int mfrd_rules_push(struct mfrd *d, const struct mfrd_rules *rules)
{
	struct ids old = { 0 }, added = { 0 };
	size_t i;
	char *why;
	int ret;

	ret = mfr_genl_dump(d->req, MFR_CMD_RULE_GET, collect_id, &old);
	if (ret) {
		why = mfrd_genl_error_text(d->req, ret);
		mfrd_logf(LOG_ERR, NULL, "cannot list the rules of mfr.ko: %s",
			  why);
		free(why);
		goto out;
	}
	for (i = 0; i < rules->n; i++) {
		const struct mfrd_rule *r = &rules->v[i];
		struct mfrd_log *l;

		ret = rule_add(d->req, r, &added);
		if (!ret)
			continue;
		why = mfrd_genl_error_text(d->req, ret);
		l = mfrd_log_new(LOG_ERR, MFRD_MSGID_CONFIG_REJECTED);
		mfrd_log_field(l, "CODE_FILE", "%s", r->file);
		mfrd_log_field(l, "CODE_LINE", "%u", r->line);
		mfrd_log_field(l, "MFR_RULES_KEPT", "%s", "previous");
		mfrd_log_message(l, "%s:%u: rule refused by mfr.ko: %s",
				 r->file, r->line, why);
		mfrd_log_send(l);
		free(why);
		break;
	}
	if (ret) {
		/* Back to the old set: take our partial new one out again. */
		for (i = 0; i < added.n; i++) {
			int err = rule_del(d->req, added.v[i]);

			if (err)
				mfrd_logf(LOG_ERR, NULL,
					  "cannot take back rule %u: %s",
					  added.v[i], mfr_genl_strerror(err));
		}
		goto out;
	}
	for (i = 0; i < old.n; i++) {
		ret = rule_del(d->req, old.v[i]);
		if (ret) {
			why = mfrd_genl_error_text(d->req, ret);
			mfrd_logf(LOG_ERR, NULL,
				  "cannot delete old rule %u of mfr.ko: %s",
				  old.v[i], why);
			free(why);
			goto out;
		}
	}
	mfrd_logf(LOG_INFO, NULL, "%zu rule%s pushed to mfr.ko", rules->n,
		  rules->n == 1 ? "" : "s");
out:
	free(old.v);
	free(added.v);
	return ret ? -1 : 0;
}
