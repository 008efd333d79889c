/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/* Do not edit directly, auto-generated from: */
/*	module/mfr.yaml */
/* YNL-GEN uapi header */

#ifndef _UAPI_LINUX_MFR_H
#define _UAPI_LINUX_MFR_H

#define MFR_FAMILY_NAME		"mfr"
#define MFR_FAMILY_VERSION	1

#define MFR_RULES_MAX	1024

/**
 * enum mfr_policy - What happens to a HugeTLB memfd's hugepage on a memory
 *   error.
 * @MFR_POLICY_DEFAULT: The kernel's default handling (the hugepage is
 *   unmapped).
 * @MFR_POLICY_KEEP: The hugepage stays mapped; only the poisoned 4 KiB pages
 *   are lost.
 */
enum mfr_policy {
	MFR_POLICY_DEFAULT,
	MFR_POLICY_KEEP,
};

/**
 * enum mfr_memfd_state - Error state of a memfd the module tracks.
 * @MFR_MEMFD_STATE_CLEAN: No poisoned page.
 * @MFR_MEMFD_STATE_POISONED: Holds poisoned pages, all within its budget.
 * @MFR_MEMFD_STATE_OVER_BUDGET: An error past its budget got the default
 *   handling.
 */
enum mfr_memfd_state {
	MFR_MEMFD_STATE_CLEAN,
	MFR_MEMFD_STATE_POISONED,
	MFR_MEMFD_STATE_OVER_BUDGET,
};

/**
 * enum mfr_page_state - State of a poisoned 4 KiB page of a kept hugepage.
 * @MFR_PAGE_STATE_KEPT: Its hugepage is still mapped in the memfd.
 * @MFR_PAGE_STATE_PENDING: Its hugepage left the memfd and waits for the last
 *   reference (a pin such as an io_uring fixed buffer) to be offlined.
 * @MFR_PAGE_STATE_OFFLINED: Its hugepage was dissolved; this page is off the
 *   page allocator for good, the healthy pages went back to it.
 * @MFR_PAGE_STATE_FALLBACK: Its memfd's budget was exceeded; the hugepage got
 *   the kernel's default handling.
 */
enum mfr_page_state {
	MFR_PAGE_STATE_KEPT,
	MFR_PAGE_STATE_PENDING,
	MFR_PAGE_STATE_OFFLINED,
	MFR_PAGE_STATE_FALLBACK,
};

/**
 * enum mfr_signal_code - How a task was told of a poisoned page.
 * @MFR_SIGNAL_CODE_ACTION_REQUIRED: BUS_MCEERR_AR, the task touched the page.
 * @MFR_SIGNAL_CODE_ACTION_OPTIONAL: BUS_MCEERR_AO, early warning to a task
 *   mapping the page.
 */
enum mfr_signal_code {
	MFR_SIGNAL_CODE_ACTION_REQUIRED,
	MFR_SIGNAL_CODE_ACTION_OPTIONAL,
};

enum {
	MFR_A_STATUS_HOOKS_API_VERSION = 1,
	MFR_A_STATUS_MODULE_VERSION,
	MFR_A_STATUS_MEMFDS_KEPT,
	MFR_A_STATUS_RAW_PAGES_KEPT,
	MFR_A_STATUS_FOLIOS_PENDING,
	MFR_A_STATUS_FOLIOS_OFFLINED,
	MFR_A_STATUS_RAW_PAGES_ISOLATED,
	MFR_A_STATUS_HEALTHY_PAGES_RETURNED,
	MFR_A_STATUS_BUDGET_FALLBACKS,
	MFR_A_STATUS_SIGNALS_SENT,
	MFR_A_STATUS_RULES,
	MFR_A_STATUS_GENERATION,
	MFR_A_STATUS_EVENTS_SUPPRESSED,

	__MFR_A_STATUS_MAX,
	MFR_A_STATUS_MAX = (__MFR_A_STATUS_MAX - 1)
};

enum {
	MFR_A_RULE_ID = 1,
	MFR_A_RULE_NAME_GLOB,
	MFR_A_RULE_CGROUP_ID,
	MFR_A_RULE_CGROUP_PATH,
	MFR_A_RULE_UID,
	MFR_A_RULE_ACTION,
	MFR_A_RULE_BUDGET,
	MFR_A_RULE_GENERATION,

	__MFR_A_RULE_MAX,
	MFR_A_RULE_MAX = (__MFR_A_RULE_MAX - 1)
};

enum {
	MFR_A_RULE_SET_RULE = 1,
	MFR_A_RULE_SET_GENERATION,

	__MFR_A_RULE_SET_MAX,
	MFR_A_RULE_SET_MAX = (__MFR_A_RULE_SET_MAX - 1)
};

enum {
	MFR_A_MEMFD_INODE = 1,
	MFR_A_MEMFD_NAME,
	MFR_A_MEMFD_PID,
	MFR_A_MEMFD_COMM,
	MFR_A_MEMFD_CGROUP_ID,
	MFR_A_MEMFD_CGROUP_PATH,
	MFR_A_MEMFD_SIZE,
	MFR_A_MEMFD_HUGEPAGE_SIZE,
	MFR_A_MEMFD_POLICY,
	MFR_A_MEMFD_BUDGET,
	MFR_A_MEMFD_RAW_PAGES_POISONED,
	MFR_A_MEMFD_STATE,
	MFR_A_MEMFD_RULE_ID,
	MFR_A_MEMFD_FD,
	MFR_A_MEMFD_GENERATION,

	__MFR_A_MEMFD_MAX,
	MFR_A_MEMFD_MAX = (__MFR_A_MEMFD_MAX - 1)
};

enum {
	MFR_A_POISON_PFN = 1,
	MFR_A_POISON_HEAD_PFN,
	MFR_A_POISON_FOLIO_SIZE,
	MFR_A_POISON_INODE,
	MFR_A_POISON_OFFSET,
	MFR_A_POISON_STATE,
	MFR_A_POISON_TIMES_CONSUMED,
	MFR_A_POISON_PID,
	MFR_A_POISON_COMM,
	MFR_A_POISON_SIGNAL_CODE,
	MFR_A_POISON_BUDGET,
	MFR_A_POISON_RAW_PAGES_ISOLATED,
	MFR_A_POISON_HEALTHY_PAGES_RETURNED,
	MFR_A_POISON_GENERATION,

	__MFR_A_POISON_MAX,
	MFR_A_POISON_MAX = (__MFR_A_POISON_MAX - 1)
};

enum {
	MFR_CMD_STATUS_GET = 1,
	MFR_CMD_RULE_ADD,
	MFR_CMD_RULE_DEL,
	MFR_CMD_RULE_GET,
	MFR_CMD_MEMFD_GET,
	MFR_CMD_MEMFD_SET,
	MFR_CMD_POISON_GET,
	MFR_CMD_MEMFD_KEPT_NTF,
	MFR_CMD_MEMFD_EVICTED_NTF,
	MFR_CMD_PAGE_POISONED_NTF,
	MFR_CMD_PAGE_CONSUMED_NTF,
	MFR_CMD_BUDGET_EXCEEDED_NTF,
	MFR_CMD_FOLIO_PENDING_NTF,
	MFR_CMD_FOLIO_OFFLINED_NTF,
	MFR_CMD_RULE_REPLACE,
	MFR_CMD_PAGE_UNTRACKED_NTF,

	__MFR_CMD_MAX,
	MFR_CMD_MAX = (__MFR_CMD_MAX - 1)
};

#define MFR_MCGRP_EVENTS	"events"

#endif /* _UAPI_LINUX_MFR_H */
