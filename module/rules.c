// SPDX-License-Identifier: GPL-2.0-only
/*
 * Operator rules: which new HugeTLB memfds keep poisoned pages mapped,
 * decided at memfd_create() so that unmodified VMMs are opted in.  Rules
 * are tried in id order; the first one whose every criterion matches
 * decides.
 */
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/glob.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <net/genetlink.h>

#include "mfr-nl-gen.h"
#include "netlink.h"
#include "rules.h"
#include "stats.h"

/*
 * Rules are matched at every HugeTLB memfd_create(): the list is bounded
 * by MFR_RULES_MAX, which the uAPI header gives userspace too.
 */

struct mfr_rule {
	struct list_head node;
	u32 id;
	char *name_glob;	/* NULL: any name */
	u64 cgroup_id;		/* by id; 0: see cgroup_path */
	/*
	 * By path from the root of the cgroup v2 hierarchy, matched by name
	 * at each memfd_create(): the cgroup need not exist when the rule is
	 * added, and one removed and created again (a VM's scope) is matched
	 * all the same.  NULL (and no id): any cgroup.
	 */
	char *cgroup_path;
	int cgroup_level;	/* its number of names: "/" 0, "/a/b" 2 */
	bool match_uid;
	kuid_t uid;
	bool keep;
	u32 budget;
};

static LIST_HEAD(mfr_rules);
static DEFINE_MUTEX(mfr_rules_lock);
static unsigned int mfr_rules_nr;
static u32 mfr_rules_last_id;

static void mfr_rule_free(struct mfr_rule *rule)
{
	kfree(rule->name_glob);
	kfree(rule->cgroup_path);
	kfree(rule);
}

static bool mfr_cgroup_within(struct cgroup *cgrp, u64 ancestor_id)
{
	for (; cgrp; cgrp = cgroup_parent(cgrp))
		if (cgroup_id(cgrp) == ancestor_id)
			return true;
	return false;
}

/*
 * @cgrp is @path or below it: its ancestor at @path's level has @path's
 * names, compared from the last one up.  cgroup v2 directories cannot be
 * renamed, so a held cgroup's names (and its ancestors') are stable.
 */
static bool mfr_cgroup_under_path(struct cgroup *cgrp, const char *path,
				  int level)
{
	const char *end = path + strlen(path), *start;
	struct cgroup *anc;
	size_t len;

	if (cgrp->level < level)
		return false;
	for (anc = cgroup_ancestor(cgrp, level); level > 0;
	     level--, anc = cgroup_parent(anc)) {
		start = end;
		while (start[-1] != '/')
			start--;
		len = end - start;
		if (strlen(anc->kn->name) != len ||
		    memcmp(anc->kn->name, start, len))
			return false;
		end = start - 1;
	}
	return true;
}

static bool mfr_rule_matches(const struct mfr_rule *rule, const char *name,
			     struct cgroup *cgrp, kuid_t uid)
{
	if (rule->name_glob && !glob_match(rule->name_glob, name))
		return false;
	if (rule->cgroup_id && !mfr_cgroup_within(cgrp, rule->cgroup_id))
		return false;
	if (rule->cgroup_path &&
	    !mfr_cgroup_under_path(cgrp, rule->cgroup_path, rule->cgroup_level))
		return false;
	if (rule->match_uid && !uid_eq(rule->uid, uid))
		return false;
	return true;
}

/* @cgrp is held by the caller, which pins its ancestors too. */
struct mfr_rule_verdict mfr_rules_match(const char *name, struct cgroup *cgrp,
					kuid_t uid)
{
	struct mfr_rule_verdict verdict = {};
	struct mfr_rule *rule;

	mutex_lock(&mfr_rules_lock);
	list_for_each_entry(rule, &mfr_rules, node) {
		if (!mfr_rule_matches(rule, name, cgrp, uid))
			continue;
		verdict.rule_id = rule->id;
		verdict.keep = rule->keep;
		verdict.budget = rule->budget;
		break;
	}
	mutex_unlock(&mfr_rules_lock);
	return verdict;
}

unsigned int mfr_rules_count(void)
{
	return READ_ONCE(mfr_rules_nr);
}

void mfr_rules_flush(void)
{
	struct mfr_rule *rule, *tmp;

	mutex_lock(&mfr_rules_lock);
	list_for_each_entry_safe(rule, tmp, &mfr_rules, node) {
		list_del(&rule->node);
		mfr_rule_free(rule);
	}
	mfr_rules_nr = 0;
	mutex_unlock(&mfr_rules_lock);
}

/*
 * A cgroup path as the hierarchy names it: "/" then names separated by
 * one "/", none empty, "." or "..", no "/" at the end.  Returns its
 * number of names, or -EINVAL.
 */
static int mfr_cgroup_path_level(const char *path)
{
	const char *p = path + 1, *end;
	int level = 0;

	if (path[0] != '/')
		return -EINVAL;
	if (!*p)
		return 0;
	for (;; p = end + 1) {
		end = strchrnul(p, '/');
		if (end == p || (end - p == 1 && p[0] == '.') ||
		    (end - p == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		level++;
		if (!*end)
			return level;
	}
}

/*
 * The cgroup criterion: by id, resolved now (an id is never reused, so a
 * cgroup gone is refused); or by path, kept as a path and matched by
 * name, whether or not the cgroup exists yet.
 */
static int mfr_rule_set_cgroup(struct mfr_rule *rule, struct nlattr **tb,
			       struct netlink_ext_ack *extack)
{
	struct nlattr *id_attr = tb[MFR_A_RULE_CGROUP_ID];
	struct nlattr *path_attr = tb[MFR_A_RULE_CGROUP_PATH];
	struct cgroup *cgrp;

	if (id_attr && path_attr) {
		NL_SET_ERR_MSG_ATTR(extack, path_attr,
				    "give cgroup-id or cgroup-path, not both");
		return -EINVAL;
	}
	if (path_attr) {
		rule->cgroup_level = mfr_cgroup_path_level(nla_data(path_attr));
		if (rule->cgroup_level < 0) {
			NL_SET_ERR_MSG_ATTR(extack, path_attr,
					    "cgroup-path: not an absolute path of cgroup names (\"/\" first, no empty, \".\" or \"..\" name, no \"/\" last)");
			return -EINVAL;
		}
		rule->cgroup_path = nla_strdup(path_attr, GFP_KERNEL);
		return rule->cgroup_path ? 0 : -ENOMEM;
	}
	if (!id_attr)
		return 0;
	cgrp = cgroup_get_from_id(nla_get_uint(id_attr));
	if (IS_ERR(cgrp)) {
		NL_SET_ERR_MSG_ATTR(extack, id_attr,
				    "cgroup-id: no such cgroup v2");
		return -ENOENT;
	}
	rule->cgroup_id = cgroup_id(cgrp);
	cgroup_put(cgrp);
	return 0;
}

/* @nest: the rule's nest in a rule-replace, NULL for a rule-add. */
static int mfr_rule_parse(struct mfr_rule *rule, struct nlattr **tb,
			  const struct nlattr *nest,
			  struct netlink_ext_ack *extack)
{
	if (!tb[MFR_A_RULE_ACTION]) {
		NL_SET_ERR_ATTR_MISS(extack, nest, MFR_A_RULE_ACTION);
		NL_SET_ERR_MSG(extack, "action: missing");
		return -EINVAL;
	}
	rule->keep = nla_get_u32(tb[MFR_A_RULE_ACTION]) == MFR_POLICY_KEEP;

	if (tb[MFR_A_RULE_BUDGET]) {
		if (!rule->keep) {
			NL_SET_ERR_MSG_ATTR(extack, tb[MFR_A_RULE_BUDGET],
					    "budget: only for action keep");
			return -EINVAL;
		}
		rule->budget = nla_get_u32(tb[MFR_A_RULE_BUDGET]);
	}

	if (tb[MFR_A_RULE_NAME_GLOB]) {
		if (!*(char *)nla_data(tb[MFR_A_RULE_NAME_GLOB])) {
			NL_SET_ERR_MSG_ATTR(extack, tb[MFR_A_RULE_NAME_GLOB],
					    "name-glob: empty");
			return -EINVAL;
		}
		rule->name_glob = nla_strdup(tb[MFR_A_RULE_NAME_GLOB],
					     GFP_KERNEL);
		if (!rule->name_glob)
			return -ENOMEM;
	}

	if (tb[MFR_A_RULE_UID]) {
		rule->uid = make_kuid(current_user_ns(),
				      nla_get_u32(tb[MFR_A_RULE_UID]));
		if (!uid_valid(rule->uid)) {
			NL_SET_ERR_MSG_ATTR(extack, tb[MFR_A_RULE_UID],
					    "uid: not valid in this user namespace");
			return -EINVAL;
		}
		rule->match_uid = true;
	}

	return mfr_rule_set_cgroup(rule, tb, extack);
}

int mfr_nl_rule_add_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mfr_rule *rule;
	struct sk_buff *msg;
	u64 generation;
	void *hdr;
	int err;

	rule = kzalloc(sizeof(*rule), GFP_KERNEL);
	if (!rule)
		return -ENOMEM;
	err = mfr_rule_parse(rule, info->attrs, NULL, info->extack);
	if (err)
		goto err_free;

	msg = mfr_nl_reply_new(info, &hdr);
	if (!msg) {
		err = -ENOMEM;
		goto err_free;
	}

	mutex_lock(&mfr_rules_lock);
	if (mfr_rules_nr >= MFR_RULES_MAX || mfr_rules_last_id == U32_MAX) {
		mutex_unlock(&mfr_rules_lock);
		NL_SET_ERR_MSG_FMT(info->extack, "too many rules (at most %u)",
				   MFR_RULES_MAX);
		err = -ENOSPC;
		goto err_msg;
	}
	rule->id = ++mfr_rules_last_id;
	list_add_tail(&rule->node, &mfr_rules);
	WRITE_ONCE(mfr_rules_nr, mfr_rules_nr + 1);
	generation = mfr_state_changed();
	mutex_unlock(&mfr_rules_lock);

	if (nla_put_u32(msg, MFR_A_RULE_ID, rule->id) ||
	    nla_put_uint(msg, MFR_A_RULE_GENERATION, generation)) {
		/* The rule is in; only the reply is lost. */
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	return mfr_nl_reply_send(msg, hdr, info);

err_msg:
	nlmsg_free(msg);
err_free:
	mfr_rule_free(rule);
	return err;
}

int mfr_nl_rule_del_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mfr_rule *rule, *found = NULL;
	u32 id;

	if (mfr_nl_missing(info, MFR_A_RULE_ID, "id"))
		return -EINVAL;
	id = nla_get_u32(info->attrs[MFR_A_RULE_ID]);

	mutex_lock(&mfr_rules_lock);
	list_for_each_entry(rule, &mfr_rules, node) {
		if (rule->id == id) {
			found = rule;
			list_del(&rule->node);
			WRITE_ONCE(mfr_rules_nr, mfr_rules_nr - 1);
			mfr_state_changed();
			break;
		}
	}
	mutex_unlock(&mfr_rules_lock);

	if (!found) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[MFR_A_RULE_ID],
				    "id: no such rule");
		return -ENOENT;
	}
	mfr_rule_free(found);
	return 0;
}

/* Parse every rule of a rule-replace onto @rules; nothing is installed. */
static int mfr_rule_replace_parse(struct genl_info *info,
				  struct list_head *rules, unsigned int *nr)
{
	struct nlattr *tb[MFR_A_RULE_BUDGET + 1];
	struct mfr_rule *rule;
	struct nlattr *nest;
	int rem, err;

	nlmsg_for_each_attr_type(nest, MFR_A_RULE_SET_RULE, info->nlhdr,
				 GENL_HDRLEN, rem) {
		if (*nr == MFR_RULES_MAX) {
			NL_SET_ERR_MSG_ATTR_FMT(info->extack, nest,
						"too many rules (at most %u)",
						MFR_RULES_MAX);
			return -ENOSPC;
		}
		err = nla_parse_nested(tb, MFR_A_RULE_BUDGET, nest,
				       mfr_rule_entry_nl_policy, info->extack);
		if (err)
			return err;
		if (tb[MFR_A_RULE_ID]) {
			NL_SET_ERR_MSG_ATTR(info->extack, tb[MFR_A_RULE_ID],
					    "id: given by the module, not by the request");
			return -EINVAL;
		}
		rule = kzalloc(sizeof(*rule), GFP_KERNEL);
		if (!rule)
			return -ENOMEM;
		list_add_tail(&rule->node, rules);
		(*nr)++;
		err = mfr_rule_parse(rule, tb, nest, info->extack);
		if (err)
			return err;
	}
	return 0;
}

/* The ids given are first .. first + nr - 1, in the request's order. */
static int mfr_rule_replace_reply(struct genl_info *info, u32 first,
				  unsigned int nr, u64 generation)
{
	size_t size = nla_total_size(sizeof(u64)) +
		      nr * nla_total_size(nla_total_size(sizeof(u32)));
	struct nlattr *nest;
	struct sk_buff *msg;
	unsigned int i;
	void *hdr;

	msg = genlmsg_new(size, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_iput(msg, info);
	if (!hdr)
		goto err;
	for (i = 0; i < nr; i++) {
		nest = nla_nest_start(msg, MFR_A_RULE_SET_RULE);
		if (!nest || nla_put_u32(msg, MFR_A_RULE_ID, first + i))
			goto err;
		nla_nest_end(msg, nest);
	}
	if (nla_put_uint(msg, MFR_A_RULE_SET_GENERATION, generation))
		goto err;
	return mfr_nl_reply_send(msg, hdr, info);
err:
	nlmsg_free(msg);
	return -EMSGSIZE;
}

/*
 * All or nothing: the new rules are parsed and their cgroups resolved
 * before the lock is taken, then the two lists trade places under the
 * lock mfr_rules_match() takes, so no memfd sees a mix of the two.
 */
int mfr_nl_rule_replace_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct mfr_rule *rule, *tmp;
	unsigned int nr = 0;
	u64 generation;
	LIST_HEAD(rules);
	LIST_HEAD(old);
	u32 first;
	int err;

	err = mfr_rule_replace_parse(info, &rules, &nr);
	if (err)
		goto out;

	mutex_lock(&mfr_rules_lock);
	if (U32_MAX - mfr_rules_last_id < nr) {
		mutex_unlock(&mfr_rules_lock);
		NL_SET_ERR_MSG(info->extack, "rule ids exhausted");
		err = -ENOSPC;
		goto out;
	}
	first = mfr_rules_last_id + 1;
	list_for_each_entry(rule, &rules, node)
		rule->id = ++mfr_rules_last_id;
	list_splice_init(&mfr_rules, &old);
	list_splice_init(&rules, &mfr_rules);
	/* What is freed below is the old set. */
	list_splice(&old, &rules);
	WRITE_ONCE(mfr_rules_nr, nr);
	generation = mfr_state_changed();
	mutex_unlock(&mfr_rules_lock);

	/* The rules are in; only the reply can still fail. */
	err = mfr_rule_replace_reply(info, first, nr, generation);
out:
	list_for_each_entry_safe(rule, tmp, &rules, node) {
		list_del(&rule->node);
		mfr_rule_free(rule);
	}
	return err;
}

static int mfr_rule_fill(struct sk_buff *msg, const struct mfr_rule *rule,
			 u64 generation)
{
	if (nla_put_u32(msg, MFR_A_RULE_ID, rule->id) ||
	    (rule->name_glob &&
	     nla_put_string(msg, MFR_A_RULE_NAME_GLOB, rule->name_glob)) ||
	    (rule->cgroup_id &&
	     nla_put_uint(msg, MFR_A_RULE_CGROUP_ID, rule->cgroup_id)) ||
	    (rule->cgroup_path &&
	     nla_put_string(msg, MFR_A_RULE_CGROUP_PATH, rule->cgroup_path)) ||
	    (rule->match_uid &&
	     nla_put_u32(msg, MFR_A_RULE_UID,
			 from_kuid_munged(current_user_ns(), rule->uid))) ||
	    nla_put_u32(msg, MFR_A_RULE_ACTION,
			rule->keep ? MFR_POLICY_KEEP : MFR_POLICY_DEFAULT) ||
	    (rule->budget && nla_put_u32(msg, MFR_A_RULE_BUDGET, rule->budget)) ||
	    nla_put_uint(msg, MFR_A_RULE_GENERATION, generation))
		return -EMSGSIZE;
	return 0;
}

/* Resumes after the last rule id sent: ids only grow along the list. */
int mfr_nl_rule_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	u32 *last_id = (u32 *)cb->ctx;
	struct mfr_rule *rule;
	u64 generation;
	void *hdr;
	int err = 0;

	mutex_lock(&mfr_rules_lock);
	generation = mfr_nl_dump_seq(cb);
	list_for_each_entry(rule, &mfr_rules, node) {
		if (rule->id <= *last_id)
			continue;
		hdr = mfr_nl_dump_put(skb, cb, MFR_CMD_RULE_GET);
		if (!hdr) {
			err = -EMSGSIZE;
			break;
		}
		err = mfr_rule_fill(skb, rule, generation);
		if (err) {
			genlmsg_cancel(skb, hdr);
			break;
		}
		genlmsg_end(skb, hdr);
		*last_id = rule->id;
	}
	mutex_unlock(&mfr_rules_lock);
	return mfr_nl_dump_done(skb, err);
}
