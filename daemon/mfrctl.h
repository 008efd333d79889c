// SPDX-License-Identifier: GPL-2.0-or-later
/* What mfrctl's commands share: the parsed command line and error paths. */
#ifndef MFRCTL_H
#define MFRCTL_H

#include <stdbool.h>
#include <stdint.h>

#include "mfr-genl.h"
#include "output.h"

/* Exit statuses, documented in mfrctl(8). */
enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1,	/* the kernel refused, or an operation failed */
	EXIT_USAGE = 2,		/* bad command line; nothing was sent */
	EXIT_NO_MODULE = 3,	/* no "mfr" generic netlink family */
	EXIT_DENIED = 4,	/* EPERM or EACCES */
};

/* Options, as bits of struct mfrctl.given and of what a command takes. */
enum {
	OPT_NAME = 1 << 0,
	OPT_CGROUP = 1 << 1,
	OPT_CGROUP_ID = 1 << 2,
	OPT_UID = 1 << 3,
	OPT_ACTION = 1 << 4,
	OPT_BUDGET = 1 << 5,
	OPT_COUNT = 1 << 6,
	OPT_DB = 1 << 7,
	OPT_BOOT = 1 << 8,
	OPT_DIMM = 1 << 9,
	OPT_DRY_RUN = 1 << 10,
	OPT_YES = 1 << 11,
	OPT_SINCE = 1 << 12,
};

/* mfrd's store, for history, summary and forget. */
#define MFRCTL_DB_PATH	"/var/lib/mfrd/mfrd.db"

struct mfrctl {
	const char *what;	/* the command, as errors name it */
	const char *denied;	/* the likely reason of an EPERM */
	bool json;		/* output_opts.json */
	struct mfr_genl *genl;

	unsigned int given;	/* OPT_* seen on the command line */
	const char *name_glob;
	const char *cgroup_path;
	uint64_t cgroup_id;
	uint32_t uid;
	uint32_t action;	/* enum mfr_policy */
	uint32_t budget;
	uint32_t count;
	const char *db_path;	/* --db */
	const char *forget_boot;
	const char *forget_dimm;
	int64_t since_usec;	/* --since */
	uint64_t forget_pfn;
	const char *forget_pfn_arg;	/* as given, for the journal */

	/* positional arguments */
	uint32_t rule_id;
	uint32_t pid;
	uint32_t fd;
	uint32_t policy;	/* enum mfr_policy */
};

/* Most pages a budget can be (the spec's "max" check). */
#define MFR_BUDGET_MAX	1048576

/*
 * Parse a decimal number in [min, max] strictly: digits only, no sign,
 * no blanks, no overflow.  Returns 0, or prints why "what" is wrong and
 * returns EXIT_USAGE.
 */
int parse_number(const char *what, const char *s, uint64_t min, uint64_t max,
		 uint64_t *out);
int parse_u32(const char *what, const char *s, uint32_t min, uint32_t max,
	      uint32_t *out);

/* Parse "keep" or "default".  0 or EXIT_USAGE. */
int parse_policy(const char *what, const char *s, uint32_t *out);

/* Print a command-line error and the usage hint; returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Report a failed operation (err: negative errno or -MFR_GENL_E*) with
 * the kernel's extack message, and return the exit status it maps to.
 */
int mfrctl_fail(struct mfrctl *ctl, int err);

/* Dump cmd and print the records with cols. */
int list_records(struct mfrctl *ctl, uint8_t cmd, const struct column *cols,
		 size_t ncols);

/* The commands (one file each area). */
int status_run(struct mfrctl *ctl);
int stats_run(struct mfrctl *ctl);
int rules_list_run(struct mfrctl *ctl);
int rules_add_parse(struct mfrctl *ctl, char **args);
int rules_add_run(struct mfrctl *ctl);
int rules_del_parse(struct mfrctl *ctl, char **args);
int rules_del_run(struct mfrctl *ctl);
int memfd_list_run(struct mfrctl *ctl);
int memfd_set_parse(struct mfrctl *ctl, char **args);
int memfd_set_run(struct mfrctl *ctl);
int poison_list_run(struct mfrctl *ctl);
int monitor_run(struct mfrctl *ctl);
int history_run(struct mfrctl *ctl);
int summary_run(struct mfrctl *ctl);
int forget_parse(struct mfrctl *ctl, char **args);
int forget_run(struct mfrctl *ctl);
int store_ack_run(struct mfrctl *ctl);

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The columns of each listing, for -o and --help. */
extern const struct column rule_cols[], memfd_cols[], poison_cols[],
	history_cols[];
extern const size_t rule_ncols, memfd_ncols, poison_ncols, history_ncols;

#endif /* MFRCTL_H */
