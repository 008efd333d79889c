// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Parser of mfrd.conf and rules.d/NAME.conf (format in mfrd.conf(5)).  Both
 * are "key = value" lines with "#" comment lines; rule files group keys
 * under "[rule]" headers, one rule per section, the keys named after the
 * rule-add attributes of module/mfr.yaml so the mapping stays 1:1.
 *
 * Out of memory is not an input error: it aborts (systemd restarts us).
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <sys/stat.h>

#include "mfr-spec.h"
#include "mfrd-config.h"

/* The limits of the rule attributes in module/mfr.yaml ("checks"). */
#define NAME_GLOB_MAX_LEN	249
#define CGROUP_PATH_MAX_LEN	4095
#define BUDGET_MAX		1048576
#define PATH_MAX_LEN		(PATH_MAX - 1)

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p)
		abort();
	return p;
}

static char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		abort();
	return d;
}

void mfrd_errors_free(struct mfrd_errors *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->msgs[i]);
	free(e->msgs);
	e->msgs = NULL;
	e->n = 0;
}

/* Add "FILE:LINE: message", or "FILE: message" when line is 0. */
__attribute__((format(printf, 4, 5)))
static void err_add(struct mfrd_errors *e, const char *file,
		    unsigned int line, const char *fmt, ...)
{
	char *msg, *full;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (r < 0)
		abort();
	r = line ? asprintf(&full, "%s:%u: %s", file, line, msg) :
		   asprintf(&full, "%s: %s", file, msg);
	free(msg);
	if (r < 0)
		abort();
	e->msgs = xrealloc(e->msgs, (e->n + 1) * sizeof(*e->msgs));
	e->msgs[e->n++] = full;
}

/* One significant line of a file. */
enum line_kind { LINE_END, LINE_SECTION, LINE_KEY, LINE_BAD };

struct reader {
	FILE *f;
	const char *path;
	unsigned int line;
	char *buf;
	size_t cap;
	struct mfrd_errors *errs;
	char *key, *value;	/* LINE_KEY: pointers into buf */
	char *section;		/* LINE_SECTION: the name between brackets */
};

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' ||
			   end[-1] == '\n' || end[-1] == '\r'))
		*--end = '\0';
	return s;
}

/*
 * The next line that is neither blank nor a comment.  A malformed one is
 * reported here and returned as LINE_BAD, so callers just skip it.
 */
static enum line_kind next_line(struct reader *r)
{
	ssize_t len;
	char *s, *eq;

	for (;;) {
		errno = 0;
		len = getline(&r->buf, &r->cap, r->f);
		if (len < 0) {
			if (errno && errno != ENOMEM)
				err_add(r->errs, r->path, 0, "read error: %s",
					strerror(errno));
			else if (errno)
				abort();
			return LINE_END;
		}
		r->line++;
		if (strlen(r->buf) != (size_t)len) {
			err_add(r->errs, r->path, r->line, "NUL byte in line");
			return LINE_BAD;
		}
		s = trim(r->buf);
		if (*s && *s != '#')
			break;
	}
	if (*s == '[') {
		size_t n = strlen(s);

		if (s[n - 1] != ']') {
			err_add(r->errs, r->path, r->line,
				"malformed section header \"%s\"", s);
			return LINE_BAD;
		}
		s[n - 1] = '\0';
		r->section = trim(s + 1);
		return LINE_SECTION;
	}
	eq = strchr(s, '=');
	if (!eq) {
		err_add(r->errs, r->path, r->line,
			"not a \"key = value\" line: \"%s\"", s);
		return LINE_BAD;
	}
	*eq = '\0';
	r->key = trim(s);
	r->value = trim(eq + 1);
	if (!*r->key) {
		err_add(r->errs, r->path, r->line, "missing key before '='");
		return LINE_BAD;
	}
	if (!*r->value) {
		err_add(r->errs, r->path, r->line, "%s: empty value", r->key);
		return LINE_BAD;
	}
	return LINE_KEY;
}

static FILE *open_file(const char *path, struct mfrd_errors *errs,
		       bool missing_ok)
{
	FILE *f = fopen(path, "re");

	if (!f && !(missing_ok && errno == ENOENT))
		err_add(errs, path, 0, "%s", strerror(errno));
	return f;
}

/* Decimal digits only: no sign, blanks, base prefix or octal surprise. */
static bool parse_u64(struct reader *r, uint64_t min, uint64_t max,
		      uint64_t *out)
{
	const char *s = r->value;
	uint64_t v = 0;

	for (; *s; s++) {
		if (*s < '0' || *s > '9') {
			err_add(r->errs, r->path, r->line,
				"%s: \"%s\" is not a decimal number",
				r->key, r->value);
			return false;
		}
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10) {
			v = UINT64_MAX;
			break;
		}
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v < min || v > max || *s) {
		err_add(r->errs, r->path, r->line,
			"%s: %s is out of range (%" PRIu64 " to %" PRIu64 ")",
			r->key, r->value, min, max);
		return false;
	}
	*out = v;
	return true;
}

static bool parse_bool(struct reader *r, bool *out)
{
	if (!strcmp(r->value, "yes") || !strcmp(r->value, "no")) {
		*out = r->value[0] == 'y';
		return true;
	}
	err_add(r->errs, r->path, r->line, "%s: \"%s\" is not yes or no",
		r->key, r->value);
	return false;
}

static bool parse_path(struct reader *r, size_t max_len, char **out)
{
	if (r->value[0] != '/') {
		err_add(r->errs, r->path, r->line,
			"%s: \"%s\" is not an absolute path", r->key, r->value);
		return false;
	}
	if (strlen(r->value) > max_len) {
		err_add(r->errs, r->path, r->line,
			"%s: longer than %zu bytes", r->key, max_len);
		return false;
	}
	free(*out);
	*out = xstrdup(r->value);
	return true;
}

/*
 * A key given twice in one scope is an error rather than "last one wins":
 * with drop-in style files that is more often a mistake than intent.
 */
static bool first_time(struct reader *r, unsigned int *seen)
{
	if (*seen) {
		err_add(r->errs, r->path, r->line,
			"%s: duplicate, already set on line %u", r->key, *seen);
		return false;
	}
	*seen = r->line;
	return true;
}

/* ---- mfrd.conf ---- */

enum { C_STATE_DIR, C_METRICS_FILE, C_METRICS_INTERVAL, C_OFFLINE, C_WATCHDOG,
       C_READY_WITHOUT_MODULE, C_EVENTS_MAX_AGE_DAYS, C_EVENTS_MAX_ROWS,
       C_LOG_RATE_LIMIT_BURST, C_LOG_RATE_LIMIT_INTERVAL, C_DMI_TABLE, C_NR };
static const char *const config_keys[C_NR] = {
	[C_STATE_DIR] = "state_dir",
	[C_METRICS_FILE] = "metrics_file",
	[C_METRICS_INTERVAL] = "metrics_interval",
	[C_OFFLINE] = "offline_recorded_pfns",
	[C_WATCHDOG] = "watchdog",
	[C_READY_WITHOUT_MODULE] = "ready_without_module",
	[C_EVENTS_MAX_AGE_DAYS] = "events_max_age_days",
	[C_EVENTS_MAX_ROWS] = "events_max_rows",
	[C_LOG_RATE_LIMIT_BURST] = "log_rate_limit_burst",
	[C_LOG_RATE_LIMIT_INTERVAL] = "log_rate_limit_interval",
	[C_DMI_TABLE] = "dmi_table",
};

static int key_index(const char *const *keys, int n, const char *key)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(keys[i], key))
			return i;
	return -1;
}

void mfrd_config_free(struct mfrd_config *cfg)
{
	free(cfg->state_dir);
	free(cfg->metrics_file);
	free(cfg->dmi_table);
	cfg->state_dir = cfg->metrics_file = cfg->dmi_table = NULL;
}

static void config_key(struct reader *r, struct mfrd_config *c,
		       unsigned int *seen)
{
	int k = key_index(config_keys, C_NR, r->key);
	uint64_t v;

	if (k < 0) {
		err_add(r->errs, r->path, r->line, "unknown key \"%s\"",
			r->key);
		return;
	}
	if (!first_time(r, &seen[k]))
		return;
	switch (k) {
	case C_STATE_DIR:
		parse_path(r, PATH_MAX_LEN, &c->state_dir);
		break;
	case C_METRICS_FILE:
		if (!strcmp(r->value, "none")) {
			free(c->metrics_file);
			c->metrics_file = NULL;
		} else {
			parse_path(r, PATH_MAX_LEN, &c->metrics_file);
		}
		break;
	case C_METRICS_INTERVAL:
		if (parse_u64(r, 1, 86400, &v))
			c->metrics_interval = (unsigned int)v;
		break;
	case C_OFFLINE:
		parse_bool(r, &c->offline_recorded_pfns);
		break;
	case C_WATCHDOG:
		parse_bool(r, &c->watchdog);
		break;
	case C_READY_WITHOUT_MODULE:
		parse_bool(r, &c->ready_without_module);
		break;
	case C_EVENTS_MAX_AGE_DAYS:
		if (parse_u64(r, 0, 36500, &v))
			c->events_max_age_days = (unsigned int)v;
		break;
	case C_EVENTS_MAX_ROWS:
		if (parse_u64(r, 0, UINT32_MAX, &v))
			c->events_max_rows = v;
		break;
	case C_LOG_RATE_LIMIT_BURST:
		if (parse_u64(r, 0, 1000000, &v))
			c->log_rate_limit_burst = (unsigned int)v;
		break;
	case C_DMI_TABLE:
		parse_path(r, PATH_MAX_LEN, &c->dmi_table);
		break;
	case C_LOG_RATE_LIMIT_INTERVAL:
		if (parse_u64(r, 1, 86400, &v))
			c->log_rate_limit_interval = (unsigned int)v;
		break;
	}
}

int mfrd_config_load(const char *path, struct mfrd_config *cfg,
		     struct mfrd_errors *errs)
{
	struct mfrd_config c = {
		.state_dir = xstrdup("/var/lib/mfrd"),
		.metrics_file =
			xstrdup("/var/lib/prometheus/node-exporter/mfr.prom"),
		.metrics_interval = 60,
		.offline_recorded_pfns = true,
		.watchdog = true,
		.events_max_age_days = 90,
		.events_max_rows = 100000,
		.log_rate_limit_burst = 50,
		.log_rate_limit_interval = 60,
		.dmi_table = xstrdup("/sys/firmware/dmi/tables/DMI"),
	};
	struct mfrd_errors e = { 0 };
	struct reader r = { .path = path, .errs = &e };
	unsigned int seen[C_NR] = { 0 };
	enum line_kind kind;

	r.f = open_file(path, &e, true);
	while (r.f && (kind = next_line(&r)) != LINE_END) {
		if (kind == LINE_SECTION)
			err_add(&e, path, r.line,
				"sections are not used in this file: \"[%s]\"",
				r.section);
		else if (kind == LINE_KEY)
			config_key(&r, &c, seen);
	}
	if (r.f)
		fclose(r.f);
	free(r.buf);
	if (e.n) {
		mfrd_config_free(&c);
		*errs = e;
		return -1;
	}
	*cfg = c;
	return 0;
}

/* ---- rules.d/NAME.conf ---- */

enum { R_NAME_GLOB, R_CGROUP_PATH, R_CGROUP_ID, R_UID, R_ACTION, R_BUDGET,
       R_NR };
static const char *const rule_keys[R_NR] = {
	[R_NAME_GLOB] = "name-glob",
	[R_CGROUP_PATH] = "cgroup-path",
	[R_CGROUP_ID] = "cgroup-id",
	[R_UID] = "uid",
	[R_ACTION] = "action",
	[R_BUDGET] = "budget",
};

static void rule_free(struct mfrd_rule *rule)
{
	free(rule->name_glob);
	free(rule->cgroup_path);
	free(rule->file);
}

void mfrd_rules_free(struct mfrd_rules *rules)
{
	for (size_t i = 0; i < rules->n; i++)
		rule_free(&rules->v[i]);
	free(rules->v);
	rules->v = NULL;
	rules->n = 0;
}

static void rule_key(struct reader *r, struct mfrd_rule *rule,
		     unsigned int *seen)
{
	int k = key_index(rule_keys, R_NR, r->key);
	uint64_t v;
	int a;

	if (k < 0) {
		err_add(r->errs, r->path, r->line, "unknown key \"%s\"",
			r->key);
		return;
	}
	if (!first_time(r, &seen[k]))
		return;
	/* The kernel takes one cgroup criterion, by path or by id. */
	if ((k == R_CGROUP_PATH && seen[R_CGROUP_ID]) ||
	    (k == R_CGROUP_ID && seen[R_CGROUP_PATH])) {
		err_add(r->errs, r->path, r->line,
			"%s: the rule already has %s on line %u, give only one",
			r->key, rule_keys[k == R_CGROUP_ID ? R_CGROUP_PATH :
							     R_CGROUP_ID],
			seen[k == R_CGROUP_ID ? R_CGROUP_PATH : R_CGROUP_ID]);
		return;
	}
	switch (k) {
	case R_NAME_GLOB:
		if (strlen(r->value) > NAME_GLOB_MAX_LEN)
			err_add(r->errs, r->path, r->line,
				"%s: longer than %d bytes", r->key,
				NAME_GLOB_MAX_LEN);
		else
			rule->name_glob = xstrdup(r->value);
		break;
	case R_CGROUP_PATH:
		parse_path(r, CGROUP_PATH_MAX_LEN, &rule->cgroup_path);
		break;
	case R_CGROUP_ID:
		if (parse_u64(r, 1, UINT64_MAX, &v))
			rule->cgroup_id = v;
		break;
	case R_UID:
		/* (uid_t)-1 is "no uid" to the kernel, never a real one. */
		if (parse_u64(r, 0, UINT32_MAX - 1, &v)) {
			rule->has_uid = true;
			rule->uid = (uint32_t)v;
		}
		break;
	case R_ACTION:
		a = mfr_enum_value(&mfr_policy_enum, r->value);
		if (a < 0) {
			err_add(r->errs, r->path, r->line,
				"%s: \"%s\" is not keep or default", r->key,
				r->value);
			rule->action = UINT32_MAX;	/* neither */
		} else
			rule->action = (uint32_t)a;
		break;
	case R_BUDGET:
		if (parse_u64(r, 0, BUDGET_MAX, &v)) {
			rule->has_budget = true;
			rule->budget = (uint32_t)v;
		}
		break;
	}
}

static void rule_end(struct reader *r, struct mfrd_rules *rules,
		     const unsigned int *seen)
{
	struct mfrd_rule *rule = &rules->v[rules->n - 1];

	/* An action by default would be a guess at the operator's intent. */
	if (!seen[R_ACTION])
		err_add(r->errs, r->path, rule->line,
			"rule has no action (keep or default)");
	/* The module refuses it: a budget only limits what is kept. */
	else if (rule->has_budget && rule->action == MFR_POLICY_DEFAULT)
		err_add(r->errs, r->path, seen[R_BUDGET],
			"budget: only for action keep");
}

/* Append the rules of one open file to *rules; errors go to r->errs. */
static void rules_read(struct reader *r, struct mfrd_rules *rules)
{
	unsigned int seen[R_NR];
	bool in_rule = false;
	enum line_kind kind;

	while ((kind = next_line(r)) != LINE_END) {
		if (kind == LINE_SECTION) {
			if (in_rule)
				rule_end(r, rules, seen);
			in_rule = !strcmp(r->section, "rule");
			if (!in_rule) {
				err_add(r->errs, r->path, r->line,
					"unknown section \"[%s]\", want [rule]",
					r->section);
				continue;
			}
			rules->v = xrealloc(rules->v,
					    (rules->n + 1) * sizeof(*rules->v));
			rules->v[rules->n++] = (struct mfrd_rule){
				.file = xstrdup(r->path),
				.line = r->line,
			};
			memset(seen, 0, sizeof(seen));
		} else if (kind == LINE_KEY) {
			if (in_rule)
				rule_key(r, &rules->v[rules->n - 1], seen);
			else
				err_add(r->errs, r->path, r->line,
					"%s: outside a [rule] section", r->key);
		}
	}
	if (in_rule)
		rule_end(r, rules, seen);
}

static void rules_file(const char *path, struct mfrd_rules *rules,
		       struct mfrd_errors *errs)
{
	struct reader r = { .path = path, .errs = errs };

	r.f = open_file(path, errs, false);
	if (!r.f)
		return;
	rules_read(&r, rules);
	fclose(r.f);
	free(r.buf);
}

static int finish(struct mfrd_rules *tmp, struct mfrd_errors *e,
		  struct mfrd_rules *rules, struct mfrd_errors *errs)
{
	/* The module holds at most MFR_RULES_MAX and refuses a bigger set. */
	if (tmp->n > MFR_RULES_MAX)
		err_add(e, tmp->v[MFR_RULES_MAX].file,
			tmp->v[MFR_RULES_MAX].line,
			"rule %d of %zu: mfr.ko holds at most %d rules",
			MFR_RULES_MAX + 1, tmp->n, MFR_RULES_MAX);
	if (e->n) {
		mfrd_rules_free(tmp);
		*errs = *e;
		return -1;
	}
	*rules = *tmp;
	return 0;
}

int mfrd_rules_load_file(const char *path, struct mfrd_rules *rules,
			 struct mfrd_errors *errs)
{
	struct mfrd_rules tmp = { 0 };
	struct mfrd_errors e = { 0 };

	rules_file(path, &tmp, &e);
	return finish(&tmp, &e, rules, errs);
}

static int conf_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 5 &&
	       !strcmp(d->d_name + n - 5, ".conf");
}

/* Byte order, not the locale's collation: the same order on every host. */
static int byte_order(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int mfrd_rules_load_dir(const char *dir, struct mfrd_rules *rules,
			struct mfrd_errors *errs)
{
	struct mfrd_rules tmp = { 0 };
	struct mfrd_errors e = { 0 };
	struct dirent **names;
	struct stat st;
	char *path;
	int n;

	n = scandir(dir, &names, conf_name, byte_order);
	if (n < 0) {
		if (errno == ENOMEM)
			abort();
		if (errno != ENOENT)
			err_add(&e, dir, 0, "%s", strerror(errno));
		return finish(&tmp, &e, rules, errs);
	}
	for (int i = 0; i < n; i++) {
		if (asprintf(&path, "%s/%s", dir, names[i]->d_name) < 0)
			abort();
		if (stat(path, &st) < 0)
			err_add(&e, path, 0, "%s", strerror(errno));
		else if (!S_ISREG(st.st_mode))
			err_add(&e, path, 0, "not a regular file");
		else
			rules_file(path, &tmp, &e);
		free(path);
		free(names[i]);
	}
	free(names);
	return finish(&tmp, &e, rules, errs);
}

/* nftw() has no argument for its callback. */
static uint64_t wanted_cgroup_id;

static int is_wanted_cgroup(const char *path, const struct stat *st, int type,
			    struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	return type == FTW_D && st->st_ino == wanted_cgroup_id;
}

/*
 * A cgroup v2 id is its directory's inode number in cgroupfs (kernfs node
 * ids on 64-bit kernels): 1 if a directory under root has it, 0 if none,
 * -1 if the tree cannot be walked.
 */
static int cgroup_id_exists(const char *root, uint64_t id)
{
	wanted_cgroup_id = id;
	return nftw(root, is_wanted_cgroup, 16, FTW_PHYS | FTW_MOUNT);
}

int mfrd_rules_check_host(const struct mfrd_rules *rules,
			  const char *cgroup_root, struct mfrd_errors *errs)
{
	struct mfrd_errors e = { 0 };
	struct stat st;
	char *path;
	int found;

	for (size_t i = 0; i < rules->n; i++) {
		const struct mfrd_rule *r = &rules->v[i];

		if (r->cgroup_id) {
			found = cgroup_id_exists(cgroup_root, r->cgroup_id);
			if (found < 0)
				err_add(&e, r->file, r->line,
					"cgroup-id: cannot look for it under %s: %s",
					cgroup_root, strerror(errno));
			else if (!found)
				err_add(&e, r->file, r->line,
					"cgroup-id: %" PRIu64 ": no such cgroup v2 under %s",
					r->cgroup_id, cgroup_root);
		}
		if (!r->cgroup_path)
			continue;
		if (asprintf(&path, "%s%s", cgroup_root, r->cgroup_path) < 0)
			abort();
		if (stat(path, &st) < 0)
			err_add(&e, r->file, r->line,
				"cgroup-path: %s: no such cgroup v2 (%s: %s)",
				r->cgroup_path, path, strerror(errno));
		else if (!S_ISDIR(st.st_mode))
			err_add(&e, r->file, r->line,
				"cgroup-path: %s: not a cgroup (%s is not a directory)",
				r->cgroup_path, path);
		free(path);
	}
	if (e.n) {
		*errs = e;
		return -1;
	}
	return 0;
}
