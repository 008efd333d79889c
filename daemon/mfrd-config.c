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
#include <stdbool.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ftw.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#include "mfr-spec.h"
#include "mfrd-config.h"
#include "mfrd-grow.h"

/* The limits of the rule attributes in module/mfr.yaml ("checks"). */
#define NAME_GLOB_MAX_LEN	249
#define CGROUP_PATH_MAX_LEN	4095
#define BUDGET_MAX		1048576
#define PATH_MAX_LEN		(PATH_MAX - 1)

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
	*e = (struct mfrd_errors){ 0 };
}

static void err_push(struct mfrd_errors *e, char *msg)
{
	char **v = mfrd_grow(e->msgs, &e->cap, e->n, sizeof(*e->msgs));

	if (!v)
		abort();
	e->msgs = v;
	e->msgs[e->n++] = msg;
}

/* Add "FILE:LINE: message", or "FILE: message" when line is 0. */
static void err_vadd(struct mfrd_errors *e, const char *file,
		     unsigned int line, const char *fmt, va_list ap)
{
	char *msg, *full;
	int r;

	/* A binary file must not log hundreds of lines: the rest is counted. */
	if (e->n >= MFRD_ERRORS_MAX) {
		e->dropped++;
		return;
	}
	if (vasprintf(&msg, fmt, ap) < 0)
		abort();
	r = line ? asprintf(&full, "%s:%u: %s", file, line, msg) :
		   asprintf(&full, "%s: %s", file, msg);
	free(msg);
	if (r < 0)
		abort();
	err_push(e, full);
}

__attribute__((format(printf, 4, 5)))
static void err_add(struct mfrd_errors *e, const char *file,
		    unsigned int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vadd(e, file, line, fmt, ap);
	va_end(ap);
}

/* At the end of a load: say how many errors the cap left out. */
static void err_finish(struct mfrd_errors *e)
{
	char *msg;

	if (!e->dropped)
		return;
	if (asprintf(&msg, "%zu more error%s not shown (at most %d are)",
		     e->dropped, e->dropped == 1 ? "" : "s",
		     MFRD_ERRORS_MAX) < 0)
		abort();
	err_push(e, msg);
	e->dropped = 0;
}

/*
 * Text from a file as an error message shows it: printable ASCII as is,
 * anything else (and '"', '\\') as \xNN, cut after SHOWN_MAX bytes of it.
 */
#define SHOWN_MAX	64
#define SHOWN_SIZE	(SHOWN_MAX * 4 + 4)

static const char *shown(const char *s, char buf[SHOWN_SIZE])
{
	size_t o = 0, i;

	for (i = 0; s[i] && i < SHOWN_MAX; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c > 0x7e || c == '"' || c == '\\')
			o += (size_t)snprintf(buf + o, SHOWN_SIZE - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
	}
	if (s[i])
		o += (size_t)snprintf(buf + o, SHOWN_SIZE - o, "...");
	buf[o] = '\0';
	return buf;
}

/* One significant line of a file. */
enum line_kind { LINE_END, LINE_SECTION, LINE_KEY, LINE_BAD };

struct reader {
	FILE *f;
	const char *path;
	unsigned int line;
	char *buf;		/* MFRD_LINE_MAX + 1 bytes */
	struct mfrd_errors *errs;
	unsigned int nerr;	/* errors in this file */
	char *key, *value;	/* LINE_KEY: pointers into buf */
	char *section;		/* LINE_SECTION: the name between brackets */
	/* key and value as messages show them (escaped, cut) */
	char key_shown[SHOWN_SIZE], value_shown[SHOWN_SIZE];
};

/* An error of the file being read, at line (0: the file itself). */
__attribute__((format(printf, 3, 4)))
static void rerr(struct reader *r, unsigned int line, const char *fmt, ...)
{
	va_list ap;

	r->nerr++;
	va_start(ap, fmt);
	err_vadd(r->errs, r->path, line, fmt, ap);
	va_end(ap);
}

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

enum read_result { READ_LINE, READ_EOF, READ_TOO_LONG, READ_NUL };

/*
 * One line into r->buf, at most MFRD_LINE_MAX bytes kept: a longer one
 * is read to its end and dropped, so no file makes mfrd grow.
 */
static enum read_result read_line(struct reader *r)
{
	size_t len = 0;
	bool nul = false;
	int c;

	while ((c = getc_unlocked(r->f)) != EOF && c != '\n') {
		if (!c)
			nul = true;
		if (len < MFRD_LINE_MAX)
			r->buf[len] = (char)c;
		len++;
	}
	if (c == EOF && !len)
		return READ_EOF;
	r->line++;
	if (len > MFRD_LINE_MAX)
		return READ_TOO_LONG;
	r->buf[len] = '\0';
	return nul ? READ_NUL : READ_LINE;
}

/*
 * A value written as in another format: quoted, or with a comment after
 * it.  Kept as written, it would never match (a name-glob with quotes).
 */
static bool foreign_value(struct reader *r)
{
	const char *v = r->value;
	size_t n = strlen(v);

	if (v[0] == '"' || v[0] == '\'' || (n > 1 && (v[n - 1] == '"' ||
						      v[n - 1] == '\''))) {
		rerr(r, r->line, "%s: \"%s\": values are not quoted, write it without the quotes",
		     r->key_shown, r->value_shown);
		return true;
	}
	if (strstr(v, " #") || strstr(v, "\t#")) {
		rerr(r, r->line, "%s: \"%s\": a comment goes on a line of its own (a '#' after a blank)",
		     r->key_shown, r->value_shown);
		return true;
	}
	return false;
}

/*
 * The next line that is neither blank nor a comment.  A malformed one is
 * reported here and returned as LINE_BAD, so callers just skip it.
 */
static enum line_kind next_line(struct reader *r)
{
	char *s, *eq, b[SHOWN_SIZE];

	for (;;) {
		if (r->nerr >= MFRD_FILE_ERRORS_MAX) {
			rerr(r, 0,
				"%u errors: the rest of the file is not read",
				r->nerr);
			return LINE_END;
		}
		errno = 0;
		switch (read_line(r)) {
		case READ_EOF:
			if (ferror(r->f))
				rerr(r, 0, "read error: %s", strerror(errno));
			return LINE_END;
		case READ_TOO_LONG:
			rerr(r, r->line, "line longer than %d bytes", MFRD_LINE_MAX);
			return LINE_BAD;
		case READ_NUL:
			rerr(r, r->line, "NUL byte in line");
			return LINE_BAD;
		case READ_LINE:
			break;
		}
		s = trim(r->buf);
		if (*s && *s != '#')
			break;
	}
	if (*s == '[') {
		size_t n = strlen(s);

		if (s[n - 1] != ']') {
			rerr(r, r->line, "malformed section header \"%s\"",
			     shown(s, b));
			return LINE_BAD;
		}
		s[n - 1] = '\0';
		r->section = trim(s + 1);
		return LINE_SECTION;
	}
	eq = strchr(s, '=');
	if (!eq) {
		rerr(r, r->line, "not a \"key = value\" line: \"%s\"",
		     shown(s, b));
		return LINE_BAD;
	}
	*eq = '\0';
	r->key = trim(s);
	r->value = trim(eq + 1);
	shown(r->key, r->key_shown);
	shown(r->value, r->value_shown);
	if (!*r->key) {
		rerr(r, r->line, "missing key before '='");
		return LINE_BAD;
	}
	if (!*r->value) {
		rerr(r, r->line, "%s: empty value", r->key_shown);
		return LINE_BAD;
	}
	return foreign_value(r) ? LINE_BAD : LINE_KEY;
}

/* What a non-regular file is, for the error. */
static const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "not a regular file";
}

/*
 * Open path for reading if it is a regular file: O_NONBLOCK so that a
 * FIFO does not block the open, fstat() on what was opened.
 */
static bool open_file(struct reader *r, bool missing_ok)
{
	struct stat st;
	int fd;

	r->buf = malloc(MFRD_LINE_MAX + 1);
	if (!r->buf)
		abort();
	fd = open(r->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (!(missing_ok && errno == ENOENT))
			rerr(r, 0, "%s", strerror(errno));
		return false;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		rerr(r, 0, "%s: only a regular file is read",
		     fstat(fd, &st) ? strerror(errno) : file_kind(st.st_mode));
		close(fd);
		return false;
	}
	if (fcntl(fd, F_SETFL, 0) || !(r->f = fdopen(fd, "r"))) {
		rerr(r, 0, "%s", strerror(errno));
		close(fd);
		return false;
	}
	return true;
}

static void close_file(struct reader *r)
{
	if (r->f)
		fclose(r->f);
	free(r->buf);
	r->f = NULL;
	r->buf = NULL;
}

/* Decimal digits only: no sign, blanks, base prefix or octal surprise. */
static bool parse_u64(struct reader *r, uint64_t min, uint64_t max,
		      uint64_t *out)
{
	const char *s = r->value;
	uint64_t v = 0;

	for (; *s; s++) {
		if (*s < '0' || *s > '9') {
			rerr(r, r->line,
				"%s: \"%s\" is not a decimal number",
				r->key_shown, r->value_shown);
			return false;
		}
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10) {
			v = UINT64_MAX;
			break;
		}
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v < min || v > max || *s) {
		rerr(r, r->line,
			"%s: %s is out of range (%" PRIu64 " to %" PRIu64 ")",
			r->key_shown, r->value_shown, min, max);
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
	rerr(r, r->line, "%s: \"%s\" is not yes or no",
		r->key_shown, r->value_shown);
	return false;
}

static bool parse_path(struct reader *r, size_t max_len, char **out)
{
	if (r->value[0] != '/') {
		rerr(r, r->line,
			"%s: \"%s\" is not an absolute path", r->key_shown, r->value_shown);
		return false;
	}
	if (strlen(r->value) > max_len) {
		rerr(r, r->line,
			"%s: longer than %zu bytes", r->key_shown, max_len);
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
		rerr(r, r->line,
			"%s: duplicate, already set on line %u", r->key_shown, *seen);
		return false;
	}
	*seen = r->line;
	return true;
}

/* ---- mfrd.conf ---- */

enum { C_STATE_DIR, C_METRICS_FILE, C_METRICS_INTERVAL, C_OFFLINE, C_WATCHDOG,
       C_READY_WITHOUT_MODULE, C_READY_TIMEOUT, C_EVENTS_MAX_AGE_DAYS, C_EVENTS_MAX_ROWS,
       C_LOG_RATE_LIMIT_BURST, C_LOG_RATE_LIMIT_INTERVAL, C_DMI_TABLE,
       C_RAS_DB, C_NR };
static const char *const config_keys[C_NR] = {
	[C_STATE_DIR] = "state_dir",
	[C_METRICS_FILE] = "metrics_file",
	[C_METRICS_INTERVAL] = "metrics_interval",
	[C_OFFLINE] = "offline_recorded_pfns",
	[C_WATCHDOG] = "watchdog",
	[C_READY_WITHOUT_MODULE] = "ready_without_module",
	[C_READY_TIMEOUT] = "ready_timeout",
	[C_EVENTS_MAX_AGE_DAYS] = "events_max_age_days",
	[C_EVENTS_MAX_ROWS] = "events_max_rows",
	[C_LOG_RATE_LIMIT_BURST] = "log_rate_limit_burst",
	[C_LOG_RATE_LIMIT_INTERVAL] = "log_rate_limit_interval",
	[C_DMI_TABLE] = "dmi_table",
	[C_RAS_DB] = "rasdaemon_db",
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
	free(cfg->ras_db);
	cfg->state_dir = cfg->metrics_file = cfg->dmi_table = cfg->ras_db = NULL;
}

static void config_key(struct reader *r, struct mfrd_config *c,
		       unsigned int *seen)
{
	int k = key_index(config_keys, C_NR, r->key);
	uint64_t v;

	if (k < 0) {
		rerr(r, r->line, "unknown key \"%s\"",
			r->key_shown);
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
	case C_READY_TIMEOUT:
		if (parse_u64(r, 0, 86400, &v))
			c->ready_timeout = (unsigned int)v;
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
	case C_RAS_DB:
		parse_path(r, PATH_MAX_LEN, &c->ras_db);
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
		.ready_timeout = MFRD_READY_TIMEOUT_DEFAULT,
		.events_max_age_days = 90,
		.events_max_rows = 100000,
		.log_rate_limit_burst = 50,
		.log_rate_limit_interval = 60,
		.dmi_table = xstrdup("/sys/firmware/dmi/tables/DMI"),
		.ras_db = xstrdup("/var/lib/rasdaemon/ras-mc_event.db"),
	};
	struct mfrd_errors e = { 0 };
	struct reader r = { .path = path, .errs = &e };
	unsigned int seen[C_NR] = { 0 };
	enum line_kind kind;

	char b[SHOWN_SIZE];

	open_file(&r, true);
	while (r.f && (kind = next_line(&r)) != LINE_END) {
		if (kind == LINE_SECTION)
			rerr(&r, r.line,
			     "sections are not used in this file: \"[%s]\"",
			     shown(r.section, b));
		else if (kind == LINE_KEY)
			config_key(&r, &c, seen);
	}
	close_file(&r);
	err_finish(&e);
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

/*
 * mfr.ko matches a cgroup path name by name from the root: "." and ".."
 * are no cgroup's names, nor is an empty one ("//", a "/" at the end),
 * and it refuses such a path.  "/" alone is the root: every cgroup.
 */
static bool bad_cgroup_path(struct reader *r)
{
	const char *p = r->value + 1, *end;
	size_t n;

	if (!*p)
		return false;
	for (;; p = end + 1) {
		end = p + strcspn(p, "/");
		n = (size_t)(end - p);
		if (!n || (n == 1 && p[0] == '.') ||
		    (n == 2 && !strncmp(p, "..", 2))) {
			rerr(r, r->line,
			     "%s: \"%s\": not a path of cgroup names (no empty, \".\" or \"..\" name, no \"/\" at the end)",
			     r->key_shown, r->value_shown);
			return true;
		}
		if (!*end)
			return false;
	}
}

static void rule_key(struct reader *r, struct mfrd_rule *rule,
		     unsigned int *seen)
{
	int k = key_index(rule_keys, R_NR, r->key);
	uint64_t v;
	int a;

	if (k < 0) {
		rerr(r, r->line, "unknown key \"%s\"",
			r->key_shown);
		return;
	}
	if (!first_time(r, &seen[k]))
		return;
	/* The kernel takes one cgroup criterion, by path or by id. */
	if ((k == R_CGROUP_PATH && seen[R_CGROUP_ID]) ||
	    (k == R_CGROUP_ID && seen[R_CGROUP_PATH])) {
		rerr(r, r->line,
			"%s: the rule already has %s on line %u, give only one",
			r->key_shown, rule_keys[k == R_CGROUP_ID ? R_CGROUP_PATH :
							     R_CGROUP_ID],
			seen[k == R_CGROUP_ID ? R_CGROUP_PATH : R_CGROUP_ID]);
		return;
	}
	switch (k) {
	case R_NAME_GLOB:
		if (strlen(r->value) > NAME_GLOB_MAX_LEN)
			rerr(r, r->line,
				"%s: longer than %d bytes", r->key_shown,
				NAME_GLOB_MAX_LEN);
		else
			rule->name_glob = xstrdup(r->value);
		break;
	case R_CGROUP_PATH:
		if (r->value[0] != '/' || !bad_cgroup_path(r))
			parse_path(r, CGROUP_PATH_MAX_LEN, &rule->cgroup_path);
		rule->cgroup_line = r->line;
		break;
	case R_CGROUP_ID:
		if (parse_u64(r, 1, UINT64_MAX, &v))
			rule->cgroup_id = v;
		rule->cgroup_line = r->line;
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
			rerr(r, r->line,
				"%s: \"%s\" is not keep or default", r->key_shown,
				r->value_shown);
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
		rerr(r, rule->line,
			"rule has no action (keep or default)");
	/* The module refuses it: a budget only limits what is kept. */
	else if (rule->has_budget && rule->action == MFR_POLICY_DEFAULT)
		rerr(r, seen[R_BUDGET],
			"budget: only for action keep");
}

/*
 * Append the rules of one open file to *rules; errors go to r->errs, and
 * a rule any error was found in (a line of it, or the rule as a whole)
 * is marked bad.
 */
static void rules_read(struct reader *r, struct mfrd_rules *rules)
{
	unsigned int seen[R_NR], before;
	bool in_rule = false;
	enum line_kind kind;
	char b[SHOWN_SIZE];
	void *v;

	for (;;) {
		before = r->nerr;
		kind = next_line(r);
		if (kind == LINE_END)
			break;
		if (kind == LINE_SECTION) {
			if (in_rule) {
				rule_end(r, rules, seen);
				rules->v[rules->n - 1].bad |= r->nerr > before;
				before = r->nerr;
			}
			in_rule = !strcmp(r->section, "rule");
			if (!in_rule) {
				rerr(r, r->line,
				     "unknown section \"[%s]\", want [rule]",
				     shown(r->section, b));
				continue;
			}
			v = mfrd_grow(rules->v, &rules->cap, rules->n,
				      sizeof(*rules->v));
			if (!v)
				abort();
			rules->v = v;
			rules->v[rules->n++] = (struct mfrd_rule){
				.file = xstrdup(r->path),
				.line = r->line,
			};
			memset(seen, 0, sizeof(seen));
		} else if (kind == LINE_KEY) {
			if (in_rule)
				rule_key(r, &rules->v[rules->n - 1], seen);
			else
				rerr(r, r->line,
					"%s: outside a [rule] section", r->key_shown);
		}
		if (in_rule && r->nerr > before)
			rules->v[rules->n - 1].bad = true;
	}
	if (in_rule) {
		before = r->nerr;
		rule_end(r, rules, seen);
		rules->v[rules->n - 1].bad |= r->nerr > before;
	}
}

static void rules_file(const char *path, struct mfrd_rules *rules,
		       struct mfrd_errors *errs)
{
	struct reader r = { .path = path, .errs = errs };

	if (open_file(&r, false))
		rules_read(&r, rules);
	close_file(&r);
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
	err_finish(e);
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

/* Every rules file of dir into tmp, errors into e. */
static void load_dir(const char *dir, struct mfrd_rules *tmp,
		     struct mfrd_errors *e)
{
	struct dirent **names;
	struct stat st;
	char *path;
	int n;

	n = scandir(dir, &names, conf_name, byte_order);
	if (n < 0) {
		if (errno == ENOMEM)
			abort();
		if (errno != ENOENT)
			err_add(e, dir, 0, "%s", strerror(errno));
		return;
	}
	for (int i = 0; i < n; i++) {
		if (asprintf(&path, "%s/%s", dir, names[i]->d_name) < 0)
			abort();
		/* stat(): a symlink to a rules file is fine, one to a FIFO not */
		if (stat(path, &st) < 0)
			err_add(e, path, 0, "%s", strerror(errno));
		else if (!S_ISREG(st.st_mode))
			err_add(e, path, 0, "%s: only a regular file is read",
				file_kind(st.st_mode));
		else
			rules_file(path, tmp, e);
		free(path);
		free(names[i]);
	}
	free(names);
}

int mfrd_rules_load_dir(const char *dir, struct mfrd_rules *rules,
			struct mfrd_errors *errs)
{
	struct mfrd_rules tmp = { 0 };
	struct mfrd_errors e = { 0 };

	load_dir(dir, &tmp, &e);
	return finish(&tmp, &e, rules, errs);
}

size_t mfrd_rules_load_dir_partial(const char *dir, struct mfrd_rules *rules,
				   struct mfrd_errors *errs)
{
	struct mfrd_rules tmp = { 0 };
	struct mfrd_errors e = { 0 };
	size_t n = 0;

	load_dir(dir, &tmp, &e);
	for (size_t i = 0; i < tmp.n; i++) {
		if (tmp.v[i].bad || n == MFR_RULES_MAX) {
			if (!tmp.v[i].bad)
				err_add(&e, tmp.v[i].file, tmp.v[i].line,
					"rule %zu of %zu: mfr.ko holds at most %d rules",
					i + 1, tmp.n, MFR_RULES_MAX);
			rule_free(&tmp.v[i]);
			continue;
		}
		tmp.v[n++] = tmp.v[i];
	}
	tmp.n = n;
	err_finish(&e);
	*rules = tmp;
	*errs = e;
	return e.n;
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

/* The host checks of mfrd_rules_check_host(), errors appended to e. */
static void check_host(const struct mfrd_rules *rules, const char *cgroup_root,
		       struct mfrd_errors *e)
{
	int found;

	for (size_t i = 0; i < rules->n; i++) {
		const struct mfrd_rule *r = &rules->v[i];
		unsigned int line = r->cgroup_line ?: r->line;

		if (r->cgroup_id) {
			found = cgroup_id_exists(cgroup_root, r->cgroup_id);
			if (found < 0)
				err_add(e, r->file, line,
					"cgroup-id: cannot look for it under %s: %s",
					cgroup_root, strerror(errno));
			else if (!found)
				err_add(e, r->file, line,
					"cgroup-id: %" PRIu64 ": no such cgroup v2 under %s",
					r->cgroup_id, cgroup_root);
		}
	}
}

int mfrd_rules_check_host(const struct mfrd_rules *rules,
			  const char *cgroup_root, struct mfrd_errors *errs)
{
	struct mfrd_errors e = { 0 };

	check_host(rules, cgroup_root, &e);
	err_finish(&e);
	if (e.n) {
		*errs = e;
		return -1;
	}
	return 0;
}

int mfrd_rules_check_dir(const char *dir, const char *cgroup_root,
			 struct mfrd_errors *errs)
{
	struct mfrd_rules tmp = { 0 };
	struct mfrd_errors e = { 0 };

	load_dir(dir, &tmp, &e);
	/* The rules that parsed are checked even if others did not. */
	check_host(&tmp, cgroup_root, &e);
	return finish(&tmp, &e, &tmp, errs) ? -1 : (mfrd_rules_free(&tmp), 0);
}

static bool is_cgroup2(const char *path)
{
	struct statfs fs;

	return !statfs(path, &fs) && fs.f_type == CGROUP2_SUPER_MAGIC;
}

char *mfrd_cgroup2_root(const char *sysfs_cgroup)
{
	char *unified;

	if (is_cgroup2(sysfs_cgroup))
		return xstrdup(sysfs_cgroup);
	if (asprintf(&unified, "%s/unified", sysfs_cgroup) < 0)
		abort();
	if (is_cgroup2(unified))
		return unified;
	free(unified);
	errno = ENOENT;
	return NULL;
}
