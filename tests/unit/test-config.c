// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test of mfrd-config: mfrd.conf and rules.d parsing, the defaults,
 * every class of error with its exact "FILE:LINE: message", and that a
 * load with any error returns nothing but the errors.
 */
#include <unistd.h>
#include <sys/stat.h>
#include <linux/mfr.h>

#include "mfrd-config.h"
#include "unit.h"

/* Compare a load's errors with want[] (NULL-terminated, "%s" = unit_dir). */
static void check_errors(const struct mfrd_errors *e, const char *const *want,
			 const char *what)
{
	size_t n = 0;
	char buf[8192];

	while (want[n])
		n++;
	CHECK(e->n == n, "%s: %zu errors", what, n);
	for (size_t i = 0; i < e->n || i < n; i++) {
		if (i < n)
			snprintf(buf, sizeof(buf), want[i], unit_dir);
		CHECK_STR(i < e->n ? e->msgs[i] : NULL, i < n ? buf : "(none)",
			  what);
	}
}

static void test_config_good(void)
{
	struct mfrd_config c = { 0 };
	struct mfrd_errors e = { 0 };
	const char *p = unit_path("good.conf");

	unit_write(p,
		   "# mfrd settings\n"
		   "\n"
		   "state_dir = /var/lib/mfrd-test\n"
		   "  metrics_file=/run/mfr.prom  \n"
		   "\tmetrics_interval =\t15\r\n"
		   "offline_recorded_pfns = no\n"
		   "   # indented comment\n"
		   "watchdog = no\n", -1);
	CHECK(mfrd_config_load(p, &c, &e) == 0 && e.n == 0,
	      "good mfrd.conf loads");
	CHECK_STR(c.state_dir, "/var/lib/mfrd-test", "state_dir");
	CHECK_STR(c.metrics_file, "/run/mfr.prom", "metrics_file, trimmed");
	CHECK(c.metrics_interval == 15, "metrics_interval 15");
	CHECK(!c.offline_recorded_pfns, "offline_recorded_pfns no");
	CHECK(!c.watchdog, "watchdog no");
	mfrd_config_free(&c);

	unit_write(p, "metrics_file = none\n", -1);
	CHECK(mfrd_config_load(p, &c, &e) == 0, "metrics_file = none loads");
	CHECK(!c.metrics_file, "metrics_file none: no metrics");
	mfrd_config_free(&c);

	CHECK(mfrd_config_load(unit_path("absent.conf"), &c, &e) == 0 &&
	      e.n == 0, "a missing mfrd.conf gives the defaults");
	CHECK_STR(c.state_dir, "/var/lib/mfrd", "default state_dir");
	CHECK_STR(c.metrics_file, "/var/lib/prometheus/node-exporter/mfr.prom",
		  "default metrics_file");
	CHECK(c.metrics_interval == 60 && c.offline_recorded_pfns &&
	      c.watchdog, "default interval, offline, watchdog");
	mfrd_config_free(&c);
}

static void test_config_bad(void)
{
	struct mfrd_config c = { .state_dir = (char *)"untouched" };
	struct mfrd_errors e = { 0 };
	const char *p = unit_path("bad.conf");
	static const char *const want[] = {
		"%s/bad.conf:2: state_dir: \"var/lib\" is not an absolute path",
		"%s/bad.conf:3: unknown key \"colour\"",
		"%s/bad.conf:4: metrics_interval: \"1O\" is not a decimal number",
		"%s/bad.conf:5: watchdog: \"maybe\" is not yes or no",
		"%s/bad.conf:6: metrics_file: duplicate, already set on line 1",
		"%s/bad.conf:7: not a \"key = value\" line: \"offline_recorded_pfns\"",
		"%s/bad.conf:8: offline_recorded_pfns: empty value",
		"%s/bad.conf:9: missing key before '='",
		"%s/bad.conf:10: sections are not used in this file: \"[daemon]\"",
		"%s/bad.conf:11: malformed section header \"[daemon\"",
		NULL,
	};

	unit_write(p,
		   "metrics_file = /a.prom\n"
		   "state_dir = var/lib\n"
		   "colour = blue\n"
		   "metrics_interval = 1O\n"
		   "watchdog = maybe\n"
		   "metrics_file = /b.prom\n"
		   "offline_recorded_pfns\n"
		   "offline_recorded_pfns =\n"
		   "= 1\n"
		   "[daemon]\n"
		   "[daemon\n", -1);
	CHECK(mfrd_config_load(p, &c, &e) == -1, "bad mfrd.conf fails");
	check_errors(&e, want, "bad mfrd.conf");
	CHECK_STR(c.state_dir, "untouched", "a failed load leaves cfg alone");
	mfrd_errors_free(&e);

	/* Range: the interval is 1 to 86400 seconds, numbers stay numbers. */
	static const char *const want_range[] = {
		"%s/bad.conf:1: metrics_interval: 0 is out of range (1 to 86400)",
		NULL,
	};
	unit_write(p, "metrics_interval = 0\n", -1);
	CHECK(mfrd_config_load(p, &c, &e) == -1, "interval 0 fails");
	check_errors(&e, want_range, "interval out of range");
	mfrd_errors_free(&e);

	static const char *const want_huge[] = {
		"%s/bad.conf:1: metrics_interval: 99999999999999999999999 is out of range (1 to 86400)",
		NULL,
	};
	unit_write(p, "metrics_interval = 99999999999999999999999\n", -1);
	CHECK(mfrd_config_load(p, &c, &e) == -1, "a number past u64 fails");
	check_errors(&e, want_huge, "number past u64");
	mfrd_errors_free(&e);

	static const char *const want_nul[] = {
		"%s/bad.conf:2: NUL byte in line",
		NULL,
	};
	static const char nul[] = "watchdog = yes\nstate_dir = /x\0y\n";

	unit_write(p, nul, sizeof(nul) - 1);
	CHECK(mfrd_config_load(p, &c, &e) == -1, "a NUL byte fails");
	check_errors(&e, want_nul, "NUL byte");
	mfrd_errors_free(&e);

	/* A directory cannot be read as a file: an error, not a crash. */
	static const char *const want_dir[] = {
		"%s: a directory: only a regular file is read",
		NULL,
	};
	CHECK(mfrd_config_load(unit_dir, &c, &e) == -1,
	      "a directory as mfrd.conf fails");
	check_errors(&e, want_dir, "directory as mfrd.conf");
	mfrd_errors_free(&e);
}

static void test_rules_good(void)
{
	struct mfrd_rules r = { 0 };
	struct mfrd_errors e = { 0 };
	char d[4096];

	snprintf(d, sizeof(d), "%s", unit_path("rules.d"));
	mkdir(d, 0755);
	/* Byte order: "10-" before "9-"; only *.conf, no hidden files. */
	unit_write(unit_path("rules.d/9-last.conf"),
		   "[rule]\n"
		   "action = default\n", -1);
	unit_write(unit_path("rules.d/10-vms.conf"),
		   "# QEMU guests keep their hugepages\n"
		   "[rule]\n"
		   "name-glob = qemu-* guest\n"
		   "cgroup-path = /machine.slice\n"
		   "action = keep\n"
		   "budget = 64\n"
		   "\n"
		   "[ rule ]\n"
		   "name-glob = a#b#c\n"
		   "cgroup-id = 4242\n"
		   "uid = 0\n"
		   "action = keep\n"
		   "budget = 0\n", -1);
	unit_write(unit_path("rules.d/README"), "not a rule file\n", -1);
	unit_write(unit_path("rules.d/.hidden.conf"), "junk\n", -1);
	unit_write(unit_path("rules.d/50-off.conf.disabled"), "junk\n", -1);
	unit_write(unit_path("rules.d/20-empty.conf"), "# nothing yet\n", -1);

	CHECK(mfrd_rules_load_dir(d, &r, &e) == 0 && e.n == 0,
	      "good rules.d loads");
	CHECK(r.n == 3, "3 rules");
	if (r.n == 3) {
		CHECK_STR(r.v[0].name_glob, "qemu-* guest", "rule 1 name-glob");
		CHECK_STR(r.v[0].cgroup_path, "/machine.slice",
			  "rule 1 cgroup-path");
		CHECK(r.v[0].cgroup_id == 0 && !r.v[0].has_uid &&
		      r.v[0].action == MFR_POLICY_KEEP && r.v[0].has_budget &&
		      r.v[0].budget == 64, "rule 1 keep, budget 64, no uid");
		CHECK(r.v[0].line == 2, "rule 1 from line 2");
		CHECK_STR(r.v[1].name_glob, "a#b#c",
			  "rule 2 name-glob: # inside a word is kept");
		CHECK(!r.v[1].cgroup_path &&
		      r.v[1].cgroup_id == 4242 && r.v[1].has_uid &&
		      r.v[1].uid == 0 && r.v[1].has_budget &&
		      r.v[1].budget == 0, "rule 2 cgroup-id 4242, uid 0");
		CHECK(r.v[1].line == 8, "rule 2 from line 8");
		CHECK_STR(r.v[2].file, unit_path("rules.d/9-last.conf"),
			  "rule 3 from 9-last.conf, after 10-vms.conf");
		CHECK(r.v[2].action == MFR_POLICY_DEFAULT &&
		      !r.v[2].has_budget && !r.v[2].name_glob,
		      "rule 3 default, nothing else");
	}
	mfrd_rules_free(&r);

	CHECK(mfrd_rules_load_dir(unit_path("no-such.d"), &r, &e) == 0 &&
	      r.n == 0 && e.n == 0, "a missing rules.d gives no rules");

	/* Limits are the spec's: u32 uid but (uid_t)-1, budget 2^20. */
	unit_write(unit_path("limits.conf"),
		   "[rule]\nuid = 4294967294\nbudget = 1048576\n"
		   "cgroup-id = 18446744073709551615\naction = keep\n", -1);
	CHECK(mfrd_rules_load_file(unit_path("limits.conf"), &r, &e) == 0,
	      "largest uid, budget and cgroup-id load");
	CHECK(r.n == 1 && r.v[0].uid == 4294967294u &&
	      r.v[0].budget == 1048576 && r.v[0].cgroup_id == UINT64_MAX,
	      "largest values kept");
	mfrd_rules_free(&r);
}

static void test_rules_bad(void)
{
	struct mfrd_rules r = { .n = 12345 };
	struct mfrd_errors e = { 0 };
	char glob[300];
	FILE *f;
	char p[4096];
	static const char *const want[] = {
		"%s/bad-rules.conf:2: action: outside a [rule] section",
		"%s/bad-rules.conf:4: unknown key \"name\"",
		"%s/bad-rules.conf:5: uid: \"root\" is not a decimal number",
		"%s/bad-rules.conf:6: budget: 1048577 is out of range (0 to 1048576)",
		"%s/bad-rules.conf:7: action: \"drop\" is not keep or default",
		"%s/bad-rules.conf:8: action: duplicate, already set on line 7",
		"%s/bad-rules.conf:10: cgroup-path: \"machine.slice\" is not an absolute path",
		"%s/bad-rules.conf:11: cgroup-id: the rule already has cgroup-path on line 10, give only one",
		"%s/bad-rules.conf:12: uid: 4294967295 is out of range (0 to 4294967294)",
		"%s/bad-rules.conf:9: rule has no action (keep or default)",
		"%s/bad-rules.conf:14: unknown section \"[rules]\", want [rule]",
		"%s/bad-rules.conf:15: action: outside a [rule] section",
		"%s/bad-rules.conf:17: name-glob: longer than 249 bytes",
		"%s/bad-rules.conf:18: budget: \"-1\" is not a decimal number",
		"%s/bad-rules.conf:19: uid: \"\\x22 0x10\\x22\": values are not quoted, write it without the quotes",
		"%s/bad-rules.conf:20: cgroup-id: 0 is out of range (1 to 18446744073709551615)",
		"%s/bad-rules.conf:16: rule has no action (keep or default)",
		NULL,
	};

	snprintf(p, sizeof(p), "%s", unit_path("bad-rules.conf"));
	memset(glob, 'a', 250);
	glob[250] = '\0';
	f = fopen(p, "w");
	fprintf(f,
		"# line 1\n"
		"action = keep\n"		/* 2: before any [rule] */
		"[rule]\n"			/* 3 */
		"name = x\n"			/* 4: unknown key */
		"uid = root\n"			/* 5: not a number */
		"budget = 1048577\n"		/* 6: out of range */
		"action = drop\n"		/* 7: bad enum */
		"action = keep\n"		/* 8: duplicate */
		"[rule]\n"			/* 9: no valid action at all */
		"cgroup-path = machine.slice\n"	/* 10: relative */
		"cgroup-id = 7\n"		/* 11: both cgroups */
		"uid = 4294967295\n"		/* 12: (uid_t)-1 */
		"name-glob = fine\n"		/* 13 */
		"[rules]\n"			/* 14: unknown section */
		"action = keep\n"		/* 15: outside */
		"[rule]\n"			/* 16 */
		"name-glob = %s\n"		/* 17: too long */
		"budget = -1\n"			/* 18 */
		"uid = \" 0x10\"\n"		/* 19: quotes are not syntax */
		"cgroup-id = 0\n",		/* 20 */
		glob);
	fclose(f);
	CHECK(mfrd_rules_load_file(p, &r, &e) == -1, "bad rules file fails");
	check_errors(&e, want, "bad rules");
	CHECK(r.n == 12345, "a failed load leaves rules alone");
	mfrd_errors_free(&e);

	/* One bad file in a directory fails the whole load. */
	char d[4096];

	snprintf(d, sizeof(d), "%s", unit_path("mixed.d"));
	static const char *const want_mixed[] = {
		"%s/mixed.d/20-typo.conf:3: unknown key \"acton\"",
		"%s/mixed.d/20-typo.conf:2: rule has no action (keep or default)",
		"%s/mixed.d/30-dir.conf: a directory: only a regular file is read",
		NULL,
	};
	mkdir(d, 0755);
	unit_write(unit_path("mixed.d/10-good.conf"),
		   "[rule]\naction = keep\n", -1);
	unit_write(unit_path("mixed.d/20-typo.conf"),
		   "\n[rule]\nacton = keep\n", -1);
	mkdir(unit_path("mixed.d/30-dir.conf"), 0755);
	CHECK(mfrd_rules_load_dir(d, &r, &e) == -1,
	      "a directory with a bad file fails");
	check_errors(&e, want_mixed, "mixed rules.d");
	CHECK(r.n == 12345, "no partial result from a directory");
	mfrd_errors_free(&e);

	static const char *const want_missing[] = {
		"%s/none.conf: No such file or directory",
		NULL,
	};
	CHECK(mfrd_rules_load_file(unit_path("none.conf"), &r, &e) == -1,
	      "a missing rules file fails");
	check_errors(&e, want_missing, "missing rules file");
	mfrd_errors_free(&e);

	static const char *const want_notdir[] = {
		"%s/bad-rules.conf: Not a directory",
		NULL,
	};
	CHECK(mfrd_rules_load_dir(p, &r, &e) == -1,
	      "a file as rules.d fails");
	check_errors(&e, want_notdir, "file as rules.d");
	mfrd_errors_free(&e);
}

/* The keys of protection and bounded growth: defaults and values. */
static void test_config_growth_keys(void)
{
	struct mfrd_config c = { 0 };
	struct mfrd_errors e = { 0 };
	char p[4096];

	snprintf(p, sizeof(p), "%s", unit_path("growth.conf"));
	unit_write(p, "# defaults\n", -1);
	CHECK(mfrd_config_load(p, &c, &e) == 0, "an empty mfrd.conf loads");
	CHECK(!c.ready_without_module && c.ready_timeout == 30 &&
	      c.events_max_age_days == 90 &&
	      c.events_max_rows == 100000 && c.log_rate_limit_burst == 50 &&
	      c.log_rate_limit_interval == 60,
	      "defaults: not ready without the module for 30 s, 90 days, 100000 rows, 50 per 60 s");
	mfrd_config_free(&c);
	unit_write(p, "ready_without_module = yes\nevents_max_age_days = 0\n"
		   "events_max_rows = 5\nlog_rate_limit_burst = 0\n"
		   "log_rate_limit_interval = 1\nready_timeout = 0\n", -1);
	CHECK(mfrd_config_load(p, &c, &e) == 0 && c.ready_without_module &&
	      c.ready_timeout == 0 &&
	      c.events_max_age_days == 0 && c.events_max_rows == 5 &&
	      c.log_rate_limit_burst == 0 && c.log_rate_limit_interval == 1,
	      "the values given are taken");
	mfrd_config_free(&c);
	static const char *const want[] = {
		"%s/growth.conf:1: log_rate_limit_interval: 0 is out of range (1 to 86400)",
		NULL,
	};
	unit_write(p, "log_rate_limit_interval = 0\n", -1);
	CHECK(mfrd_config_load(p, &c, &e) == -1, "interval 0 fails");
	check_errors(&e, want, "rate limit interval 0");
	mfrd_errors_free(&e);
}

/* What the module would refuse, refused before it is asked. */
static void test_rules_module_limits(void)
{
	struct mfrd_rules r = { 0 };
	struct mfrd_errors e = { 0 };
	char p[4096], *text = NULL, want_max[512];
	size_t size = 0;
	FILE *f;

	snprintf(p, sizeof(p), "%s", unit_path("limits.conf"));
	static const char *const want_budget[] = {
		"%s/limits.conf:5: budget: only for action keep",
		NULL,
	};
	unit_write(p, "[rule]\nname-glob = scratch-*\naction = default\n"
		   "\nbudget = 4\n", -1);
	CHECK(mfrd_rules_load_file(p, &r, &e) == -1,
	      "a budget on a default rule fails");
	check_errors(&e, want_budget, "budget on default");
	mfrd_errors_free(&e);

	/* MFR_RULES_MAX rules load, one more does not. */
	f = open_memstream(&text, &size);
	CHECK(f != NULL, "memstream");
	for (int i = 0; i < MFR_RULES_MAX; i++)
		fprintf(f, "[rule]\nname-glob = vm-%d\naction = keep\n", i);
	fclose(f);
	unit_write(p, text, -1);
	CHECK(mfrd_rules_load_file(p, &r, &e) == 0 && r.n == MFR_RULES_MAX,
	      "%d rules load", MFR_RULES_MAX);
	mfrd_rules_free(&r);
	free(text);
	text = NULL;
	f = open_memstream(&text, &size);
	for (int i = 0; i <= MFR_RULES_MAX; i++)
		fprintf(f, "[rule]\nname-glob = vm-%d\naction = keep\n", i);
	fclose(f);
	unit_write(p, text, -1);
	free(text);
	snprintf(want_max, sizeof(want_max),
		 "%%s/limits.conf:%d: rule %d of %d: mfr.ko holds at most %d rules",
		 3 * MFR_RULES_MAX + 1, MFR_RULES_MAX + 1, MFR_RULES_MAX + 1,
		 MFR_RULES_MAX);
	const char *const want_too_many[] = { want_max, NULL };
	CHECK(mfrd_rules_load_file(p, &r, &e) == -1,
	      "%d rules fail", MFR_RULES_MAX + 1);
	check_errors(&e, want_too_many, "too many rules");
	mfrd_errors_free(&e);

	/*
	 * A cgroup-path need not exist: mfr.ko matches it by name when a
	 * memfd is made (a slice made by the first guest).
	 */
	CHECK(mkdir(unit_path("cg"), 0755) == 0 &&
	      mkdir(unit_path("cg/machine.slice"), 0755) == 0,
	      "make a cgroup tree");
	unit_write(p, "[rule]\ncgroup-path = /machine.slice\naction = keep\n"
		   "[rule]\ncgroup-path = /no.slice\naction = keep\n", -1);
	CHECK(mfrd_rules_load_file(p, &r, &e) == 0, "cgroup rules parse");
	char root[4096];
	snprintf(root, sizeof(root), "%s", unit_path("cg"));
	CHECK(mfrd_rules_check_host(&r, root, &e) == 0,
	      "a cgroup-path that does not exist yet passes the host check");
	mfrd_rules_free(&r);

	/* cgroup-id: the inode number of a directory under the root. */
	struct stat st;
	char ids[256];

	CHECK(stat(unit_path("cg/machine.slice"), &st) == 0, "stat the cgroup");
	snprintf(ids, sizeof(ids),
		 "[rule]\ncgroup-id = %llu\naction = keep\n[rule]\ncgroup-id = 1\naction = keep\n",
		 (unsigned long long)st.st_ino);
	unit_write(p, ids, -1);
	CHECK(mfrd_rules_load_file(p, &r, &e) == 0, "cgroup-id rules parse");
	CHECK(mfrd_rules_check_host(&r, root, &e) == -1 && e.n == 1,
	      "an unknown cgroup-id fails the host check, the known one does not");
	if (e.n == 1) {
		char buf[8192];

		snprintf(buf, sizeof(buf),
			 "%s/limits.conf:5: cgroup-id: 1: no such cgroup v2 under %s/cg",
			 unit_dir, unit_dir);
		CHECK_STR(e.msgs[0], buf, "cgroup-id error");
	}
	mfrd_errors_free(&e);
	mfrd_rules_free(&r);
}

/*
 * Hostile or mistaken input: files that are no regular files, endless
 * lines, binary junk, long and unprintable bad lines, and values written
 * as in other formats.  Each is refused with a bounded, readable error.
 */
static void test_hostile_input(void)
{
	struct mfrd_config c = { 0 };
	struct mfrd_rules r = { 0 };
	struct mfrd_errors e = { 0 };
	char p[4096], *junk;
	FILE *f;

	/* A FIFO would block the open, /dev/zero never end: not read. */
	snprintf(p, sizeof(p), "%s", unit_path("fifo.conf"));
	CHECK(mkfifo(p, 0600) == 0, "make a FIFO");
	alarm(20);	/* a hang is a failure */
	CHECK(mfrd_config_load(p, &c, &e) == -1 && e.n == 1 &&
	      strstr(e.msgs[0], "fifo.conf: a FIFO: only a regular file is read"),
	      "a FIFO as mfrd.conf: refused at once (%s)", e.n ? e.msgs[0] : "");
	mfrd_errors_free(&e);
	CHECK(mfrd_rules_load_file(p, &r, &e) == -1 && e.n == 1 &&
	      strstr(e.msgs[0], "a FIFO: only a regular file is read"),
	      "a FIFO as a rules file: refused at once");
	mfrd_errors_free(&e);
	CHECK(mfrd_config_load("/dev/zero", &c, &e) == -1 && e.n == 1 &&
	      !strcmp(e.msgs[0], "/dev/zero: a character device: only a regular file is read"),
	      "/dev/zero as mfrd.conf: refused");
	mfrd_errors_free(&e);
	alarm(0);

	/* A 5 MB line: one short error, the next line still read. */
	snprintf(p, sizeof(p), "%s", unit_path("long.conf"));
	f = fopen(p, "w");
	for (int i = 0; f && i < 5 * 1024 * 1024; i++)
		fputc(i % 7 ? 'x' : '=', f);
	fputs("\nwatchdog = maybe\n", f);
	fclose(f);
	CHECK(mfrd_config_load(p, &c, &e) == -1 && e.n == 2,
	      "a 5 MB line and a bad value: two errors");
	if (e.n == 2) {
		char want[4096];

		snprintf(want, sizeof(want), "%s/long.conf:1: line longer than %d bytes",
			 unit_dir, MFRD_LINE_MAX);
		CHECK_STR(e.msgs[0], want, "the long line, not echoed");
		CHECK(strstr(e.msgs[1], "long.conf:2: watchdog:") != NULL,
		      "the line after it is read");
	}
	mfrd_errors_free(&e);

	/* A bad line is echoed escaped and cut. */
	junk = malloc(2001);
	memset(junk, 'j', 2000);
	junk[0] = '\x01';
	junk[1] = '"';
	junk[2000] = '\0';
	snprintf(p, sizeof(p), "%s", unit_path("junk.conf"));
	f = fopen(p, "w");
	fprintf(f, "%s\n", junk);
	fclose(f);
	free(junk);
	CHECK(mfrd_config_load(p, &c, &e) == -1 && e.n == 1, "a 2000-byte bad line");
	if (e.n == 1) {
		char want[4096];

		snprintf(want, sizeof(want),
			 "%s/junk.conf:1: not a \"key = value\" line: \"\\x01\\x22%.62s...\"",
			 unit_dir, "jjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjjj");
		CHECK_STR(e.msgs[0], want, "echoed escaped, cut after 64 bytes");
	}
	mfrd_errors_free(&e);

	/* Binary junk: at most MFRD_FILE_ERRORS_MAX errors from one file. */
	snprintf(p, sizeof(p), "%s", unit_path("binary.conf"));
	f = fopen(p, "w");
	for (int i = 0; f && i < 500; i++)
		fprintf(f, "\x7f" "ELF%c%c\n", i % 2 ? 0 : 1, 2);
	fclose(f);
	CHECK(mfrd_rules_load_file(p, &r, &e) == -1 &&
	      e.n == MFRD_FILE_ERRORS_MAX + 1,
	      "500 bad lines: %d errors and one saying the rest is not read (%zu)",
	      MFRD_FILE_ERRORS_MAX, e.n);
	CHECK(e.n && strstr(e.msgs[e.n - 1], "binary.conf: 20 errors: the rest of the file is not read"),
	      "... the last one names the file");
	mfrd_errors_free(&e);

	/* Many bad files: every file read, at most MFRD_ERRORS_MAX errors. */
	char d[4096];

	snprintf(d, sizeof(d), "%s", unit_path("many.d"));
	mkdir(d, 0755);
	for (int i = 0; i < 8; i++) {
		char name[64];

		snprintf(name, sizeof(name), "many.d/%02d.conf", i);
		snprintf(p, sizeof(p), "%s", unit_path("%s", name));
		f = fopen(p, "w");
		for (int j = 0; f && j < 30; j++)
			fputs("bad line\n", f);
		fclose(f);
	}
	CHECK(mfrd_rules_load_dir(d, &r, &e) == -1 &&
	      e.n == MFRD_ERRORS_MAX + 1,
	      "8 bad files: %d errors and a count of the rest (%zu)",
	      MFRD_ERRORS_MAX, e.n);
	CHECK(e.n && !strcmp(e.msgs[e.n - 1], "68 more errors not shown (at most 100 are)"),
	      "... 68 more not shown (8 files x 21 = 168)");
	mfrd_errors_free(&e);

	/* Values written as in other formats, and paths the kernel refuses. */
	static const char *const want[] = {
		"%s/values.conf:2: name-glob: \"\\x22qemu-*\\x22\": values are not quoted, write it without the quotes",
		"%s/values.conf:3: name-glob: \"qemu-* # our VMs\": a comment goes on a line of its own (a '#' after a blank)",
		"%s/values.conf:4: cgroup-path: \"/machine.slice/../system.slice\": not a path of cgroup names (no empty, \".\" or \"..\" name, no \"/\" at the end)",
		"%s/values.conf:7: cgroup-path: \"/./machine.slice\": not a path of cgroup names (no empty, \".\" or \"..\" name, no \"/\" at the end)",
		"%s/values.conf:8: action: \"keep\\x09# always\": a comment goes on a line of its own (a '#' after a blank)",
		"%s/values.conf:6: rule has no action (keep or default)",
		NULL,
	};
	snprintf(p, sizeof(p), "%s", unit_path("values.conf"));
	unit_write(p,
		   "[rule]\n"
		   "name-glob = \"qemu-*\"\n"
		   "name-glob = qemu-* # our VMs\n"
		   "cgroup-path = /machine.slice/../system.slice\n"
		   "action = keep\n"
		   "[rule]\n"
		   "cgroup-path = /./machine.slice\n"
		   "action = keep\t# always\n", -1);
	CHECK(mfrd_rules_load_file(p, &r, &e) == -1, "quoted, commented, dotted values fail");
	check_errors(&e, want, "values of other formats");
	mfrd_errors_free(&e);
}

/*
 * "mfrd --check" of a directory: every file read, and the cgroups of the
 * rules that parsed checked even when another file has errors.
 */
static void test_check_dir(void)
{
	struct mfrd_errors e = { 0 };
	char d[4096], root[4096];
	static const char *const want[] = {
		"%s/check.d/10-typo.conf:2: unknown key \"acton\"",
		"%s/check.d/10-typo.conf:1: rule has no action (keep or default)",
		"%s/check.d/20-cgroup.conf:3: cgroup-id: 1: no such cgroup v2 under %s/cg2",
		NULL,
	};
	struct mfrd_rules r = { 0 };

	snprintf(d, sizeof(d), "%s", unit_path("check.d"));
	snprintf(root, sizeof(root), "%s", unit_path("cg2"));
	mkdir(d, 0755);
	mkdir(root, 0755);
	unit_write(unit_path("check.d/10-typo.conf"),
		   "[rule]\nacton = keep\n[rule]\nname-glob = good-*\naction = keep\n", -1);
	unit_write(unit_path("check.d/20-cgroup.conf"),
		   "[rule]\naction = keep\ncgroup-id = 1\n", -1);
	CHECK(mfrd_rules_check_dir(d, root, &e) == -1 && e.n == 3,
	      "check of a directory: the typo and the missing cgroup id (%zu errors)", e.n);
	for (size_t i = 0; i < 3 && i < e.n; i++) {
		char buf[8192];

		snprintf(buf, sizeof(buf), want[i], unit_dir, unit_dir);
		CHECK_STR(e.msgs[i], buf, "check of a directory");
	}
	mfrd_errors_free(&e);
	unit_write(unit_path("check.d/20-cgroup.conf"),
		   "[rule]\naction = keep\ncgroup-path = /gone.slice\n", -1);
	CHECK(mfrd_rules_check_dir(d, root, &e) == -1 && e.n == 2,
	      "a cgroup path that does not exist yet is no error: the typo alone");
	mfrd_errors_free(&e);

	/* At mfrd's start: the rules that parse, the typo's rule left out. */
	CHECK(mfrd_rules_load_dir_partial(d, &r, &e) == 2 && r.n == 2 &&
	      !strcmp(r.v[0].name_glob, "good-*") &&
	      !strcmp(r.v[1].cgroup_path, "/gone.slice"),
	      "partial load: 2 errors, the 2 good rules of both files (%zu)", r.n);
	mfrd_rules_free(&r);
	mfrd_errors_free(&e);
	CHECK(mfrd_cgroup2_root(unit_dir) == NULL,
	      "a directory that is no cgroup2 mount is not the cgroup v2 root");
}

int main(void)
{
	unit_init();
	test_config_good();
	test_config_bad();
	test_rules_good();
	test_rules_bad();
	test_rules_module_limits();
	test_config_growth_keys();
	test_hostile_input();
	test_check_dir();
	return check_exit_status();
}
