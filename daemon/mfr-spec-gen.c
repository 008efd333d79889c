// SPDX-License-Identifier: GPL-2.0-or-later
/* Do not edit directly, auto-generated from module/mfr.yaml */
/* by scripts/ynl-regen.py: "make ynl-regen". */

#include "mfr-spec.h"

static const char *const policy_names[] = {
	[MFR_POLICY_DEFAULT] = "default",
	[MFR_POLICY_KEEP] = "keep",
};

const struct mfr_enum mfr_policy_enum = {
	.names = policy_names,
	.count = sizeof(policy_names) / sizeof(policy_names[0]),
};

static const char *const memfd_state_names[] = {
	[MFR_MEMFD_STATE_CLEAN] = "clean",
	[MFR_MEMFD_STATE_POISONED] = "poisoned",
	[MFR_MEMFD_STATE_OVER_BUDGET] = "over-budget",
};

const struct mfr_enum mfr_memfd_state_enum = {
	.names = memfd_state_names,
	.count = sizeof(memfd_state_names) / sizeof(memfd_state_names[0]),
};

static const char *const page_state_names[] = {
	[MFR_PAGE_STATE_KEPT] = "kept",
	[MFR_PAGE_STATE_PENDING] = "pending",
	[MFR_PAGE_STATE_OFFLINED] = "offlined",
	[MFR_PAGE_STATE_FALLBACK] = "fallback",
};

const struct mfr_enum mfr_page_state_enum = {
	.names = page_state_names,
	.count = sizeof(page_state_names) / sizeof(page_state_names[0]),
};

static const char *const signal_code_names[] = {
	[MFR_SIGNAL_CODE_ACTION_REQUIRED] = "action-required",
	[MFR_SIGNAL_CODE_ACTION_OPTIONAL] = "action-optional",
};

const struct mfr_enum mfr_signal_code_enum = {
	.names = signal_code_names,
	.count = sizeof(signal_code_names) / sizeof(signal_code_names[0]),
};

static const struct mfr_attr status_attrs[] = {
	[MFR_A_STATUS_HOOKS_API_VERSION] = { .name = "hooks-api-version", .type = MFR_ATTR_U32 },
	[MFR_A_STATUS_MODULE_VERSION] = { .name = "module-version", .type = MFR_ATTR_STRING },
	[MFR_A_STATUS_MEMFDS_KEPT] = { .name = "memfds-kept", .type = MFR_ATTR_UINT },
	[MFR_A_STATUS_RAW_PAGES_KEPT] = { .name = "raw-pages-kept", .type = MFR_ATTR_UINT },
	[MFR_A_STATUS_FOLIOS_PENDING] = { .name = "folios-pending", .type = MFR_ATTR_UINT },
	[MFR_A_STATUS_FOLIOS_OFFLINED] = { .name = "folios-offlined", .type = MFR_ATTR_UINT },
	[MFR_A_STATUS_RAW_PAGES_ISOLATED] = { .name = "raw-pages-isolated", .type = MFR_ATTR_UINT },
	[MFR_A_STATUS_HEALTHY_PAGES_RETURNED] = { .name = "healthy-pages-returned", .type = MFR_ATTR_UINT },
	[MFR_A_STATUS_BUDGET_FALLBACKS] = { .name = "budget-fallbacks", .type = MFR_ATTR_UINT },
	[MFR_A_STATUS_SIGNALS_SENT] = { .name = "signals-sent", .type = MFR_ATTR_UINT },
	[MFR_A_STATUS_RULES] = { .name = "rules", .type = MFR_ATTR_UINT },
	[MFR_A_STATUS_GENERATION] = { .name = "generation", .type = MFR_ATTR_UINT },
	[MFR_A_STATUS_EVENTS_SUPPRESSED] = { .name = "events-suppressed", .type = MFR_ATTR_UINT },
};

static const struct mfr_attr rule_attrs[] = {
	[MFR_A_RULE_ID] = { .name = "id", .type = MFR_ATTR_U32 },
	[MFR_A_RULE_NAME_GLOB] = { .name = "name-glob", .type = MFR_ATTR_STRING },
	[MFR_A_RULE_CGROUP_ID] = { .name = "cgroup-id", .type = MFR_ATTR_UINT },
	[MFR_A_RULE_CGROUP_PATH] = { .name = "cgroup-path", .type = MFR_ATTR_STRING },
	[MFR_A_RULE_UID] = { .name = "uid", .type = MFR_ATTR_U32 },
	[MFR_A_RULE_ACTION] = { .name = "action", .type = MFR_ATTR_U32, .values = &mfr_policy_enum },
	[MFR_A_RULE_BUDGET] = { .name = "budget", .type = MFR_ATTR_U32 },
	[MFR_A_RULE_GENERATION] = { .name = "generation", .type = MFR_ATTR_UINT },
};

static const struct mfr_attr rule_set_attrs[] = {
	[MFR_A_RULE_SET_RULE] = { .name = "rule", .type = MFR_ATTR_NEST, .nested = &mfr_attr_sets[MFR_SET_RULE] },
	[MFR_A_RULE_SET_GENERATION] = { .name = "generation", .type = MFR_ATTR_UINT },
};

static const struct mfr_attr memfd_attrs[] = {
	[MFR_A_MEMFD_INODE] = { .name = "inode", .type = MFR_ATTR_UINT },
	[MFR_A_MEMFD_NAME] = { .name = "name", .type = MFR_ATTR_STRING },
	[MFR_A_MEMFD_PID] = { .name = "pid", .type = MFR_ATTR_U32 },
	[MFR_A_MEMFD_COMM] = { .name = "comm", .type = MFR_ATTR_STRING },
	[MFR_A_MEMFD_CGROUP_ID] = { .name = "cgroup-id", .type = MFR_ATTR_UINT },
	[MFR_A_MEMFD_CGROUP_PATH] = { .name = "cgroup-path", .type = MFR_ATTR_STRING },
	[MFR_A_MEMFD_SIZE] = { .name = "size", .type = MFR_ATTR_UINT },
	[MFR_A_MEMFD_HUGEPAGE_SIZE] = { .name = "hugepage-size", .type = MFR_ATTR_UINT },
	[MFR_A_MEMFD_POLICY] = { .name = "policy", .type = MFR_ATTR_U32, .values = &mfr_policy_enum },
	[MFR_A_MEMFD_BUDGET] = { .name = "budget", .type = MFR_ATTR_U32 },
	[MFR_A_MEMFD_RAW_PAGES_POISONED] = { .name = "raw-pages-poisoned", .type = MFR_ATTR_U32 },
	[MFR_A_MEMFD_STATE] = { .name = "state", .type = MFR_ATTR_U32, .values = &mfr_memfd_state_enum },
	[MFR_A_MEMFD_RULE_ID] = { .name = "rule-id", .type = MFR_ATTR_U32 },
	[MFR_A_MEMFD_FD] = { .name = "fd", .type = MFR_ATTR_U32 },
	[MFR_A_MEMFD_GENERATION] = { .name = "generation", .type = MFR_ATTR_UINT },
};

static const struct mfr_attr poison_attrs[] = {
	[MFR_A_POISON_PFN] = { .name = "pfn", .type = MFR_ATTR_UINT },
	[MFR_A_POISON_HEAD_PFN] = { .name = "head-pfn", .type = MFR_ATTR_UINT },
	[MFR_A_POISON_FOLIO_SIZE] = { .name = "folio-size", .type = MFR_ATTR_UINT },
	[MFR_A_POISON_INODE] = { .name = "inode", .type = MFR_ATTR_UINT },
	[MFR_A_POISON_OFFSET] = { .name = "offset", .type = MFR_ATTR_UINT },
	[MFR_A_POISON_STATE] = { .name = "state", .type = MFR_ATTR_U32, .values = &mfr_page_state_enum },
	[MFR_A_POISON_TIMES_CONSUMED] = { .name = "times-consumed", .type = MFR_ATTR_U32 },
	[MFR_A_POISON_PID] = { .name = "pid", .type = MFR_ATTR_U32 },
	[MFR_A_POISON_COMM] = { .name = "comm", .type = MFR_ATTR_STRING },
	[MFR_A_POISON_SIGNAL_CODE] = { .name = "signal-code", .type = MFR_ATTR_U32, .values = &mfr_signal_code_enum },
	[MFR_A_POISON_BUDGET] = { .name = "budget", .type = MFR_ATTR_U32 },
	[MFR_A_POISON_RAW_PAGES_ISOLATED] = { .name = "raw-pages-isolated", .type = MFR_ATTR_U32 },
	[MFR_A_POISON_HEALTHY_PAGES_RETURNED] = { .name = "healthy-pages-returned", .type = MFR_ATTR_U32 },
	[MFR_A_POISON_GENERATION] = { .name = "generation", .type = MFR_ATTR_UINT },
};

const struct mfr_attr_set mfr_attr_sets[MFR_SET_COUNT] = {
	[MFR_SET_STATUS] = { .name = "status", .max = MFR_A_STATUS_MAX, .attrs = status_attrs },
	[MFR_SET_RULE] = { .name = "rule", .max = MFR_A_RULE_MAX, .attrs = rule_attrs },
	[MFR_SET_RULE_SET] = { .name = "rule-set", .max = MFR_A_RULE_SET_MAX, .attrs = rule_set_attrs },
	[MFR_SET_MEMFD] = { .name = "memfd", .max = MFR_A_MEMFD_MAX, .attrs = memfd_attrs },
	[MFR_SET_POISON] = { .name = "poison", .max = MFR_A_POISON_MAX, .attrs = poison_attrs },
};

const struct mfr_cmd mfr_cmds[MFR_CMD_MAX + 1] = {
	[MFR_CMD_STATUS_GET] = { .name = "status-get", .set = MFR_SET_STATUS },
	[MFR_CMD_RULE_ADD] = { .name = "rule-add", .set = MFR_SET_RULE },
	[MFR_CMD_RULE_DEL] = { .name = "rule-del", .set = MFR_SET_RULE },
	[MFR_CMD_RULE_GET] = { .name = "rule-get", .set = MFR_SET_RULE },
	[MFR_CMD_MEMFD_GET] = { .name = "memfd-get", .set = MFR_SET_MEMFD },
	[MFR_CMD_MEMFD_SET] = { .name = "memfd-set", .set = MFR_SET_MEMFD },
	[MFR_CMD_POISON_GET] = { .name = "poison-get", .set = MFR_SET_POISON },
	[MFR_CMD_MEMFD_KEPT_NTF] = { .name = "memfd-kept-ntf", .set = MFR_SET_MEMFD, .event = "memfd-kept" },
	[MFR_CMD_MEMFD_EVICTED_NTF] = { .name = "memfd-evicted-ntf", .set = MFR_SET_MEMFD, .event = "memfd-evicted" },
	[MFR_CMD_PAGE_POISONED_NTF] = { .name = "page-poisoned-ntf", .set = MFR_SET_POISON, .event = "page-poisoned" },
	[MFR_CMD_PAGE_CONSUMED_NTF] = { .name = "page-consumed-ntf", .set = MFR_SET_POISON, .event = "page-consumed" },
	[MFR_CMD_BUDGET_EXCEEDED_NTF] = { .name = "budget-exceeded-ntf", .set = MFR_SET_POISON, .event = "budget-exceeded" },
	[MFR_CMD_FOLIO_PENDING_NTF] = { .name = "folio-pending-ntf", .set = MFR_SET_POISON, .event = "folio-pending" },
	[MFR_CMD_FOLIO_OFFLINED_NTF] = { .name = "folio-offlined-ntf", .set = MFR_SET_POISON, .event = "folio-offlined" },
	[MFR_CMD_RULE_REPLACE] = { .name = "rule-replace", .set = MFR_SET_RULE_SET },
	[MFR_CMD_PAGE_UNTRACKED_NTF] = { .name = "page-untracked-ntf", .set = MFR_SET_POISON, .event = "page-untracked" },
};
