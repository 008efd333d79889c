// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * module/mfr.yaml in C.  Tables are indexed by the constants of the
 * generated uAPI header, and sized by its *_MAX values so that a spec
 * change adding an attribute breaks the build here until it is described.
 */
#include <stddef.h>
#include <string.h>

#include "mfr-spec.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const char *const policy_names[] = {
	[MFR_POLICY_DEFAULT] = "default",
	[MFR_POLICY_KEEP] = "keep",
};

static const char *const memfd_state_names[] = {
	[MFR_MEMFD_STATE_CLEAN] = "clean",
	[MFR_MEMFD_STATE_POISONED] = "poisoned",
	[MFR_MEMFD_STATE_OVER_BUDGET] = "over-budget",
};

static const char *const page_state_names[] = {
	[MFR_PAGE_STATE_KEPT] = "kept",
	[MFR_PAGE_STATE_PENDING] = "pending",
	[MFR_PAGE_STATE_OFFLINED] = "offlined",
	[MFR_PAGE_STATE_FALLBACK] = "fallback",
};

static const char *const signal_code_names[] = {
	[MFR_SIGNAL_CODE_ACTION_REQUIRED] = "action-required",
	[MFR_SIGNAL_CODE_ACTION_OPTIONAL] = "action-optional",
};

#define ENUM(n)	{ .names = n, .count = ARRAY_SIZE(n) }
const struct mfr_enum mfr_policy_enum = ENUM(policy_names);
const struct mfr_enum mfr_memfd_state_enum = ENUM(memfd_state_names);
const struct mfr_enum mfr_page_state_enum = ENUM(page_state_names);
const struct mfr_enum mfr_signal_code_enum = ENUM(signal_code_names);

#define U32(n)		{ .name = n, .type = MFR_ATTR_U32 }
#define UINT(n)		{ .name = n, .type = MFR_ATTR_UINT }
#define STRING(n)	{ .name = n, .type = MFR_ATTR_STRING }
#define ENUM_U32(n, e)	{ .name = n, .type = MFR_ATTR_U32, .values = &e }

static const struct mfr_attr status_attrs[] = {
	[MFR_A_STATUS_HOOKS_API_VERSION] = U32("hooks-api-version"),
	[MFR_A_STATUS_MODULE_VERSION] = STRING("module-version"),
	[MFR_A_STATUS_MEMFDS_KEPT] = UINT("memfds-kept"),
	[MFR_A_STATUS_RAW_PAGES_KEPT] = UINT("raw-pages-kept"),
	[MFR_A_STATUS_FOLIOS_PENDING] = UINT("folios-pending"),
	[MFR_A_STATUS_FOLIOS_OFFLINED] = UINT("folios-offlined"),
	[MFR_A_STATUS_RAW_PAGES_ISOLATED] = UINT("raw-pages-isolated"),
	[MFR_A_STATUS_HEALTHY_PAGES_RETURNED] = UINT("healthy-pages-returned"),
	[MFR_A_STATUS_BUDGET_FALLBACKS] = UINT("budget-fallbacks"),
	[MFR_A_STATUS_SIGNALS_SENT] = UINT("signals-sent"),
	[MFR_A_STATUS_RULES] = UINT("rules"),
	[MFR_A_STATUS_GENERATION] = UINT("generation"),
};

static const struct mfr_attr rule_attrs[] = {
	[MFR_A_RULE_ID] = U32("id"),
	[MFR_A_RULE_NAME_GLOB] = STRING("name-glob"),
	[MFR_A_RULE_CGROUP_ID] = UINT("cgroup-id"),
	[MFR_A_RULE_CGROUP_PATH] = STRING("cgroup-path"),
	[MFR_A_RULE_UID] = U32("uid"),
	[MFR_A_RULE_ACTION] = ENUM_U32("action", mfr_policy_enum),
	[MFR_A_RULE_BUDGET] = U32("budget"),
	[MFR_A_RULE_GENERATION] = UINT("generation"),
};

static const struct mfr_attr rule_set_attrs[] = {
	[MFR_A_RULE_SET_RULE] = { .name = "rule", .type = MFR_ATTR_NEST,
				  .nested = &mfr_attr_sets[MFR_SET_RULE] },
	[MFR_A_RULE_SET_GENERATION] = UINT("generation"),
};

static const struct mfr_attr memfd_attrs[] = {
	[MFR_A_MEMFD_INODE] = UINT("inode"),
	[MFR_A_MEMFD_NAME] = STRING("name"),
	[MFR_A_MEMFD_PID] = U32("pid"),
	[MFR_A_MEMFD_COMM] = STRING("comm"),
	[MFR_A_MEMFD_CGROUP_ID] = UINT("cgroup-id"),
	[MFR_A_MEMFD_CGROUP_PATH] = STRING("cgroup-path"),
	[MFR_A_MEMFD_SIZE] = UINT("size"),
	[MFR_A_MEMFD_HUGEPAGE_SIZE] = UINT("hugepage-size"),
	[MFR_A_MEMFD_POLICY] = ENUM_U32("policy", mfr_policy_enum),
	[MFR_A_MEMFD_BUDGET] = U32("budget"),
	[MFR_A_MEMFD_RAW_PAGES_POISONED] = U32("raw-pages-poisoned"),
	[MFR_A_MEMFD_STATE] = ENUM_U32("state", mfr_memfd_state_enum),
	[MFR_A_MEMFD_RULE_ID] = U32("rule-id"),
	[MFR_A_MEMFD_FD] = U32("fd"),
	[MFR_A_MEMFD_GENERATION] = UINT("generation"),
};

static const struct mfr_attr poison_attrs[] = {
	[MFR_A_POISON_PFN] = UINT("pfn"),
	[MFR_A_POISON_HEAD_PFN] = UINT("head-pfn"),
	[MFR_A_POISON_FOLIO_SIZE] = UINT("folio-size"),
	[MFR_A_POISON_INODE] = UINT("inode"),
	[MFR_A_POISON_OFFSET] = UINT("offset"),
	[MFR_A_POISON_STATE] = ENUM_U32("state", mfr_page_state_enum),
	[MFR_A_POISON_TIMES_CONSUMED] = U32("times-consumed"),
	[MFR_A_POISON_PID] = U32("pid"),
	[MFR_A_POISON_COMM] = STRING("comm"),
	[MFR_A_POISON_SIGNAL_CODE] = ENUM_U32("signal-code", mfr_signal_code_enum),
	[MFR_A_POISON_BUDGET] = U32("budget"),
	[MFR_A_POISON_RAW_PAGES_ISOLATED] = U32("raw-pages-isolated"),
	[MFR_A_POISON_HEALTHY_PAGES_RETURNED] = U32("healthy-pages-returned"),
	[MFR_A_POISON_GENERATION] = UINT("generation"),
};

_Static_assert(ARRAY_SIZE(status_attrs) == MFR_A_STATUS_MAX + 1,
	       "status attribute set out of date with linux/mfr.h");
_Static_assert(ARRAY_SIZE(rule_attrs) == MFR_A_RULE_MAX + 1,
	       "rule attribute set out of date with linux/mfr.h");
_Static_assert(ARRAY_SIZE(rule_set_attrs) == MFR_A_RULE_SET_MAX + 1,
	       "rule-set attribute set out of date with linux/mfr.h");
_Static_assert(ARRAY_SIZE(memfd_attrs) == MFR_A_MEMFD_MAX + 1,
	       "memfd attribute set out of date with linux/mfr.h");
_Static_assert(ARRAY_SIZE(poison_attrs) == MFR_A_POISON_MAX + 1,
	       "poison attribute set out of date with linux/mfr.h");

#define SET(n, a)	{ .name = n, .max = ARRAY_SIZE(a) - 1, .attrs = a }
const struct mfr_attr_set mfr_attr_sets[] = {
	[MFR_SET_STATUS] = SET("status", status_attrs),
	[MFR_SET_RULE] = SET("rule", rule_attrs),
	[MFR_SET_MEMFD] = SET("memfd", memfd_attrs),
	[MFR_SET_POISON] = SET("poison", poison_attrs),
	[MFR_SET_RULE_SET] = SET("rule-set", rule_set_attrs),
};

struct mfr_cmd {
	const char *name;
	enum mfr_set_id set;
	const char *event;	/* notifications only */
};

static const struct mfr_cmd cmds[] = {
	[MFR_CMD_STATUS_GET] = { "status-get", MFR_SET_STATUS },
	[MFR_CMD_RULE_ADD] = { "rule-add", MFR_SET_RULE },
	[MFR_CMD_RULE_DEL] = { "rule-del", MFR_SET_RULE },
	[MFR_CMD_RULE_GET] = { "rule-get", MFR_SET_RULE },
	[MFR_CMD_MEMFD_GET] = { "memfd-get", MFR_SET_MEMFD },
	[MFR_CMD_MEMFD_SET] = { "memfd-set", MFR_SET_MEMFD },
	[MFR_CMD_POISON_GET] = { "poison-get", MFR_SET_POISON },
	/* "notify: memfd-get" and "notify: poison-get": those ops' sets */
	[MFR_CMD_MEMFD_KEPT_NTF] = { "memfd-kept-ntf", MFR_SET_MEMFD,
				     "memfd-kept" },
	[MFR_CMD_MEMFD_EVICTED_NTF] = { "memfd-evicted-ntf", MFR_SET_MEMFD,
					"memfd-evicted" },
	[MFR_CMD_PAGE_POISONED_NTF] = { "page-poisoned-ntf", MFR_SET_POISON,
					"page-poisoned" },
	[MFR_CMD_PAGE_CONSUMED_NTF] = { "page-consumed-ntf", MFR_SET_POISON,
					"page-consumed" },
	[MFR_CMD_BUDGET_EXCEEDED_NTF] = { "budget-exceeded-ntf", MFR_SET_POISON,
					  "budget-exceeded" },
	[MFR_CMD_FOLIO_PENDING_NTF] = { "folio-pending-ntf", MFR_SET_POISON,
					"folio-pending" },
	[MFR_CMD_FOLIO_OFFLINED_NTF] = { "folio-offlined-ntf", MFR_SET_POISON,
					 "folio-offlined" },
	[MFR_CMD_RULE_REPLACE] = { "rule-replace", MFR_SET_RULE_SET },
};

_Static_assert(ARRAY_SIZE(cmds) == MFR_CMD_MAX + 1,
	       "command table out of date with linux/mfr.h");

static const struct mfr_cmd *cmd_lookup(uint8_t cmd)
{
	if (cmd >= ARRAY_SIZE(cmds) || !cmds[cmd].name)
		return NULL;
	return &cmds[cmd];
}

const struct mfr_attr_set *mfr_cmd_attr_set(uint8_t cmd)
{
	const struct mfr_cmd *c = cmd_lookup(cmd);

	return c ? &mfr_attr_sets[c->set] : NULL;
}

const char *mfr_cmd_name(uint8_t cmd)
{
	const struct mfr_cmd *c = cmd_lookup(cmd);

	return c ? c->name : NULL;
}

const char *mfr_event_name(uint8_t cmd)
{
	const struct mfr_cmd *c = cmd_lookup(cmd);

	return c ? c->event : NULL;
}

const char *mfr_enum_name(const struct mfr_enum *e, uint64_t value)
{
	return value < e->count ? e->names[value] : NULL;
}

int mfr_enum_value(const struct mfr_enum *e, const char *name)
{
	unsigned int i;

	for (i = 0; i < e->count; i++)
		if (e->names[i] && !strcmp(e->names[i], name))
			return i;
	return -1;
}

const char *mfr_attr_name(const struct mfr_attr_set *set, unsigned int attr)
{
	return attr <= set->max ? set->attrs[attr].name : NULL;
}
