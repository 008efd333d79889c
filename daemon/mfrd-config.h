// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrd's configuration: /etc/mfrd/mfrd.conf (daemon settings) and
 * /etc/mfrd/rules.d/NAME.conf (the rules pushed to mfr.ko), both described in
 * mfrd.conf(5).  Parsing never stops at the first bad line: every error is
 * reported as "FILE:LINE: message", and a load with any error yields no
 * result at all, so that the daemon keeps running on its previous one.
 */
#ifndef MFRD_CONFIG_H
#define MFRD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MFRD_CONFIG_FILE	"/etc/mfrd/mfrd.conf"
#define MFRD_RULES_DIR		"/etc/mfrd/rules.d"

/*
 * Error messages of one load, in file and line order.  At most
 * MFRD_ERRORS_MAX, the last saying how many more there were; at most
 * MFRD_FILE_ERRORS_MAX per file, after which the file is not read on.
 */
#define MFRD_ERRORS_MAX		100
#define MFRD_FILE_ERRORS_MAX	20
/* Longer lines are an error (the longest value, a cgroup path, is 4095). */
#define MFRD_LINE_MAX		8192

struct mfrd_errors {
	char **msgs;
	size_t n;
	size_t cap;
	size_t dropped;		/* beyond MFRD_ERRORS_MAX */
};

void mfrd_errors_free(struct mfrd_errors *e);

/*
 * Seconds mfrd withholds READY=1 while its rules are not in mfr.ko: a
 * bound, so that units ordered after it start (unprotected, and said so).
 */
#define MFRD_READY_TIMEOUT_DEFAULT	30

struct mfrd_config {
	char *state_dir;		/* the database lives here */
	char *metrics_file;		/* Prometheus textfile; NULL: none */
	unsigned int metrics_interval;	/* seconds between rewrites */
	bool offline_recorded_pfns;	/* hard-offline pfns of earlier boots */
	bool watchdog;			/* honour systemd's WatchdogSec= */
	bool ready_without_module;	/* READY=1 before mfr.ko is there */
	unsigned int ready_timeout;	/* ... or after this many seconds; 0: never */
	unsigned int events_max_age_days;	/* events log retention; 0: none */
	uint64_t events_max_rows;		/* ... and size; 0: none */
	unsigned int log_rate_limit_burst;	/* journal entries per kind ... */
	unsigned int log_rate_limit_interval;	/* ... per this many seconds */
	char *dmi_table;		/* SMBIOS table: which DIMM a pfn is on */
	char *ras_db;			/* rasdaemon's database: ... decoded */
};

/*
 * Files are read only if they are regular files (a FIFO would block, a
 * device never end).  Read a mfrd.conf: a missing file gives the defaults.  Returns 0 and
 * fills *cfg (free with mfrd_config_free()), or -1 with the errors in
 * *errs (the caller frees them) and *cfg untouched.
 */
int mfrd_config_load(const char *path, struct mfrd_config *cfg,
		     struct mfrd_errors *errs);
void mfrd_config_free(struct mfrd_config *cfg);

/* One rule, attribute for attribute as rule-add takes it. */
struct mfrd_rule {
	char *name_glob;		/* NULL: any name */
	char *cgroup_path;		/* NULL: see cgroup_id */
	uint64_t cgroup_id;		/* 0: any cgroup (if no path either) */
	bool has_uid;
	uint32_t uid;
	uint32_t action;		/* enum mfr_policy */
	bool has_budget;
	uint32_t budget;		/* 0: no limit */
	char *file;			/* where it was written, for messages */
	unsigned int line;		/* ... the line of its [rule] header */
	unsigned int cgroup_line;	/* ... of its cgroup-path or -id */
	bool bad;			/* an error was found in it */
};

struct mfrd_rules {
	struct mfrd_rule *v;		/* in the order they are to be added */
	size_t n;
	size_t cap;
};

/*
 * Read every *.conf file of dir (not starting with '.') in lexical
 * (byte) order; rules keep the order of the files and of their lines.  A
 * missing dir gives no rules.  Returns 0 and fills *rules (free with
 * mfrd_rules_free()), or -1 with the errors in *errs and *rules untouched.
 */
int mfrd_rules_load_dir(const char *dir, struct mfrd_rules *rules,
			struct mfrd_errors *errs);

/*
 * At mfrd's start: every rule that parses, from every file, in *rules
 * (free with mfrd_rules_free()), the errors in *errs (the caller frees
 * them); a rule with an error is left out, the others are not held back
 * by it.  Returns the number of errors.
 */
size_t mfrd_rules_load_dir_partial(const char *dir, struct mfrd_rules *rules,
				   struct mfrd_errors *errs);

/* The same for one file, which must exist. */
int mfrd_rules_load_file(const char *path, struct mfrd_rules *rules,
			 struct mfrd_errors *errs);

void mfrd_rules_free(struct mfrd_rules *rules);

/*
 * What only the host can tell: every cgroup-id is the inode number of a
 * directory under cgroup_root (the cgroup v2 mount, /sys/fs/cgroup).  A
 * cgroup-path need not exist: mfr.ko matches it by name when a memfd is
 * made.  Returns 0, or -1 with "FILE:LINE: message" errors in *errs.
 */
int mfrd_rules_check_host(const struct mfrd_rules *rules,
			  const char *cgroup_root, struct mfrd_errors *errs);

/*
 * "mfrd --check" of a rules directory: every file read, and the host
 * checks run on every rule that parsed, even when others did not.
 * Returns 0, or -1 with all the errors in *errs.
 */
int mfrd_rules_check_dir(const char *dir, const char *cgroup_root,
			 struct mfrd_errors *errs);

/*
 * The cgroup v2 hierarchy under sysfs_cgroup (/sys/fs/cgroup): itself on
 * a unified host, its "unified" directory on a hybrid one.  Returns a
 * malloc()ed path, or NULL (errno set) if neither is cgroup2.
 */
char *mfrd_cgroup2_root(const char *sysfs_cgroup);

#endif /* MFRD_CONFIG_H */
