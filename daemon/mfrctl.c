// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrctl: the operators' command line for the mfr module.  The whole
 * command line is checked before anything is sent, so a typo never
 * reaches the kernel; then one command runs over one netlink handle.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mfrctl.h"

struct command {
	const char *area;	/* first word */
	const char *verb;	/* second word, NULL for one-word commands */
	const char *synopsis;	/* arguments; '\n' continues the line */
	const char *help;
	const char *denied;	/* why a bare EPERM, if not the default */
	unsigned int nargs;	/* positional arguments after the words */
	unsigned int opts;	/* OPT_* it takes */
	int (*parse)(struct mfrctl *ctl, char **args);	/* may be NULL */
	int (*run)(struct mfrctl *ctl);
	bool dflt;		/* the area's verb when none is given */
	bool store;		/* reads mfrd's store, not the module */
	unsigned int maxargs;	/* optional positional arguments, up to */
	const struct column *cols;	/* a listing: -o, -n, -r apply */
	const size_t *ncols;
};

static const struct command commands[] = {
	{
		.area = "status",
		.help = "the module's versions, state generation and counters",
		.run = status_run,
	}, {
		.area = "stats",
		.help = "every counter, one \"name value\" line each",
		.run = stats_run,
	}, {
		.area = "rules", .verb = "list",
		.help = "the rules, in the order they are tried",
		.run = rules_list_run,
		.dflt = true, .cols = rule_cols, .ncols = &rule_ncols,
	}, {
		.area = "rules", .verb = "add",
		.synopsis = "[--name GLOB] [--cgroup PATH | --cgroup-id ID] "
			    "[--uid UID]\n--action keep|default [--budget N]",
		.help = "add a rule for memfds created from now on; "
			"prints its id",
		.opts = OPT_NAME | OPT_CGROUP | OPT_CGROUP_ID | OPT_UID |
			OPT_ACTION | OPT_BUDGET,
		.parse = rules_add_parse,
		.run = rules_add_run,
	}, {
		.area = "rules", .verb = "del",
		.synopsis = "ID",
		.help = "delete a rule",
		.nargs = 1,
		.parse = rules_del_parse,
		.run = rules_del_run,
	}, {
		.area = "memfd", .verb = "list",
		.help = "the memfds that keep poisoned pages mapped",
		.run = memfd_list_run,
		.dflt = true, .cols = memfd_cols, .ncols = &memfd_ncols,
	}, {
		.area = "memfd", .verb = "set",
		.synopsis = "PID FD keep|default [--budget N]",
		.help = "set the policy of memfd FD of process PID",
		.nargs = 3,
		.opts = OPT_BUDGET,
		.parse = memfd_set_parse,
		.run = memfd_set_run,
		.cols = memfd_cols, .ncols = &memfd_ncols,
	}, {
		.area = "poison", .verb = "list",
		.help = "the poisoned 4 KiB pages of kept hugepages",
		.run = poison_list_run,
		.dflt = true, .cols = poison_cols, .ncols = &poison_ncols,
	}, {
		.area = "monitor",
		.synopsis = "[-t] [--count N]",
		.help = "print events as they come, or the first N; -t: with times",
		/* the group is CAP_SYS_ADMIN's; ops also need CAP_NET_ADMIN */
		.denied = "needs CAP_SYS_ADMIN",
		.opts = OPT_COUNT,
		.run = monitor_run,
	}, {
		.area = "history",
		.synopsis = "[--name GLOB] [--cgroup PATH] [--boot ID] [--dimm LABEL]\n"
			    "[--since DATE] [--db FILE]",
		.help = "every poisoned page mfrd recorded, all boots, from its store; "
			"or those of a memfd name, a cgroup (a VM) and below, "
			"a boot, a DIMM, first seen since DATE (UTC)",
		.opts = OPT_DB | OPT_NAME | OPT_CGROUP | OPT_BOOT | OPT_DIMM |
			OPT_SINCE,
		.store = true,
		.run = history_run,
		.cols = history_cols, .ncols = &history_ncols,
	}, {
		.area = "summary",
		.synopsis = "[--name GLOB] [--cgroup PATH] [--boot ID] [--dimm LABEL]\n"
			    "[--since DATE] [--db FILE]",
		.help = "poisoned pages by DIMM, by memfd owner, by cgroup (one per VM "
			"under libvirt or systemd) and by boot; the same filters as history",
		.opts = OPT_DB | OPT_NAME | OPT_CGROUP | OPT_BOOT | OPT_DIMM |
			OPT_SINCE,
		.store = true,
		.run = summary_run,
	}, {
		.area = "forget",
		.synopsis = "PFN | --boot ID | --dimm LABEL [--dry-run] [--yes]\n"
			    "[--db FILE]",
		.help = "delete records from the store (after a DIMM was replaced); "
			"PFN in hex (0x1a2b), BOOT with or without dashes",
		.maxargs = 1,
		.opts = OPT_DB | OPT_BOOT | OPT_DIMM | OPT_DRY_RUN | OPT_YES,
		.store = true,
		.parse = forget_parse,
		.run = forget_run,
	}, {
		.area = "store", .verb = "ack",
		.synopsis = "[--db FILE]",
		.help = "acknowledge the store incidents mfrd reported "
			"(mfrd_store_recovered)",
		.opts = OPT_DB,
		.store = true,
		.run = store_ack_run,
	},
};

/* Long-only options take values past the char range. */
enum {
	OPTV_NAME = 256,
	OPTV_CGROUP,
	OPTV_CGROUP_ID,
	OPTV_UID,
	OPTV_ACTION,
	OPTV_BUDGET,
	OPTV_COUNT,
	OPTV_DB,
	OPTV_BOOT,
	OPTV_DIMM,
	OPTV_DRY_RUN,
	OPTV_YES,
	OPTV_SINCE,
};

static const struct option options[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "pretty", no_argument, NULL, 'p' },
	{ "output", required_argument, NULL, 'o' },
	{ "noheadings", no_argument, NULL, 'n' },
	{ "raw", no_argument, NULL, 'r' },
	{ "timestamps", no_argument, NULL, 't' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "name", required_argument, NULL, OPTV_NAME },
	{ "cgroup", required_argument, NULL, OPTV_CGROUP },
	{ "cgroup-id", required_argument, NULL, OPTV_CGROUP_ID },
	{ "uid", required_argument, NULL, OPTV_UID },
	{ "action", required_argument, NULL, OPTV_ACTION },
	{ "budget", required_argument, NULL, OPTV_BUDGET },
	{ "count", required_argument, NULL, OPTV_COUNT },
	{ "db", required_argument, NULL, OPTV_DB },
	{ "boot", required_argument, NULL, OPTV_BOOT },
	{ "dimm", required_argument, NULL, OPTV_DIMM },
	{ "dry-run", no_argument, NULL, OPTV_DRY_RUN },
	{ "yes", no_argument, NULL, OPTV_YES },
	{ "since", required_argument, NULL, OPTV_SINCE },
	{ NULL, 0, NULL, 0 },
};

/* The spec's max-len checks of rule-add's strings. */
#define NAME_GLOB_MAX	249
#define CGROUP_PATH_MAX	4095

/* parse_command_line(): --help or --version was served, exit 0 */
#define PARSE_DONE	(-1)

static const struct command *usage_cmd;	/* for the hint of usage_error */

/* "rules add", as messages name a command */
static void command_name(const struct command *c, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s", c->area, c->verb ? " " : "",
		 c->verb ?: "");
}

/* "<prefix>rules add [--name GLOB] ...", continuation lines aligned */
static void print_synopsis(FILE *f, const char *prefix,
			   const struct command *c)
{
	const char *s = c->synopsis ?: "";
	char name[32];
	int indent;

	command_name(c, name, sizeof(name));
	indent = fprintf(f, "%s%s%s", prefix, name, *s ? " " : "");
	for (; *s; s++) {
		fputc(*s, f);
		if (*s == '\n')
			fprintf(f, "%*s", indent, "");
	}
	fputc('\n', f);
}

static const char options_help[] =
	"  -j, --json        JSON output (snake_case keys): one document per\n"
	"                    command, one object per line for monitor\n"
	"  -p, --pretty      indented JSON (with -j)\n"
	"  -o, --output COLS the columns of a listing, comma-separated\n"
	"  -n, --noheadings  no header line in listings\n"
	"  -r, --raw         listings unaligned, one space between columns,\n"
	"                    blanks and control characters escaped (\\x20)\n"
	"  -t, --timestamps  monitor: the time of each event\n"
	"  -h, --help        show this help (or a command's) and exit\n"
	"  -V, --version     show the version and exit\n";

static void print_command_help(const struct command *c)
{
	char name[32];
	size_t i;

	print_synopsis(stdout, "  ", c);
	printf("      %s%s\n", c->help,
	       c->dflt ? " (also without the verb)" : "");
	if (!c->cols)
		return;
	printf("      columns (-o):");
	for (i = 0; i < *c->ncols; i++) {
		column_name(&c->cols[i], name, sizeof(name));
		printf("%s %s", i ? "," : "", name);
	}
	putchar('\n');
}

/* The help of every command, of an area's ("rules"), or of one. */
static void print_help(const char *area, const struct command *only)
{
	size_t i;

	printf("Usage: mfrctl [OPTIONS] %s%s\n", area ?: "COMMAND",
	       area ? " [VERB] [ARGS]" : " [ARGS]");
	if (!area)
		printf("Steer and observe per-memfd memory-failure recovery (mfr.ko).\n");
	printf("\nCommands:\n");
	for (i = 0; i < ARRAY_SIZE(commands); i++) {
		if ((only && &commands[i] != only) ||
		    (area && strcmp(commands[i].area, area)))
			continue;
		print_command_help(&commands[i]);
	}
	if (only && only->cols) {
		printf("\nColumns:\n");
		for (i = 0; i < *only->ncols; i++) {
			char name[32];

			column_name(&only->cols[i], name, sizeof(name));
			printf("  %-10s %s\n", name, only->cols[i].help);
		}
	}
	printf("\nOptions:\n%s"
	       "\nExit status: 0 success, 1 failure, 2 usage error,\n"
	       "3 mfr module not loaded, 4 permission denied.  See mfrctl(8).\n",
	       options_help);
}

int usage_error(const char *fmt, ...)
{
	const struct command *c = usage_cmd;
	va_list ap;

	fputs("mfrctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (c)
		print_synopsis(stderr, "usage: mfrctl ", c);
	if (c)
		fprintf(stderr, "Try 'mfrctl %s%s%s --help' for more information.\n",
			c->area, c->verb ? " " : "", c->verb ?: "");
	else
		fputs("Try 'mfrctl --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

int parse_number(const char *what, const char *s, uint64_t min, uint64_t max,
		 uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull() would take blanks, signs ("-1" wraps) and "0x" */
	if (*s < '0' || *s > '9')
		goto bad;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end || errno || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	return usage_error("invalid %s '%s': expected an integer from %llu to %llu",
			   what, s, (unsigned long long)min,
			   (unsigned long long)max);
}

int parse_u32(const char *what, const char *s, uint32_t min, uint32_t max,
	      uint32_t *out)
{
	uint64_t v = 0;
	int ret = parse_number(what, s, min, max, &v);

	if (!ret)
		*out = v;
	return ret;
}

int parse_policy(const char *what, const char *s, uint32_t *out)
{
	int v = mfr_enum_value(&mfr_policy_enum, s);

	if (v < 0)
		return usage_error("invalid %s '%s': expected keep or default",
				   what, s);
	*out = v;
	return 0;
}

int mfrctl_fail(struct mfrctl *ctl, int err)
{
	if (err == -MFR_GENL_ENOFAMILY) {
		fprintf(stderr, "mfrctl: %s\n", mfr_genl_strerror(err));
		return EXIT_NO_MODULE;
	}
	fprintf(stderr, "mfrctl: %s: ", ctl->what);
	if (mfr_genl_print_error(stderr, ctl->genl, err) &&
	    (err == -EPERM || err == -EACCES))
		fprintf(stderr, ": %s", ctl->denied);
	fputc('\n', stderr);
	return err == -EPERM || err == -EACCES ? EXIT_DENIED : EXIT_FAILED;
}

int list_records(struct mfrctl *ctl, uint8_t cmd, const struct column *cols,
		 size_t ncols)
{
	struct listing l;
	int ret;

	ret = listing_init(&l, cols, ncols, ctl->json, false);
	if (!ret)
		ret = mfr_genl_dump(ctl->genl, cmd, listing_add, &l);
	if (!ret)
		ret = listing_print(&l);
	listing_free(&l);
	return ret ? mfrctl_fail(ctl, ret) : EXIT_OK;
}

static const char *option_name(int opt)
{
	const struct option *o;

	for (o = options; o->name; o++)
		if (o->val == opt)
			return o->name;
	return "?";
}

static unsigned int option_bit(int opt)
{
	return 1u << (opt - OPTV_NAME);
}

/*
 * --since: a UTC date "2026-11-26", with a time "2026-11-26T10:00",
 * "...T10:00:30", optionally ending in "Z", as history prints times.
 */
static int parse_since(const char *s, int64_t *usec)
{
	static const char *const formats[] = {
		"%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d",
	};
	struct tm tm;
	const char *end;

	for (size_t i = 0; i < ARRAY_SIZE(formats); i++) {
		memset(&tm, 0, sizeof(tm));
		end = strptime(s, formats[i], &tm);
		if (end && (!*end || !strcmp(end, "Z"))) {
			*usec = (int64_t)timegm(&tm) * 1000000;
			return 0;
		}
	}
	return usage_error("invalid date '%s': expected YYYY-MM-DD[THH:MM[:SS]][Z], in UTC",
			   s);
}

/* One option with its value, checked now: 0 or EXIT_USAGE. */
static int parse_option(struct mfrctl *ctl, int opt, const char *arg)
{
	unsigned int bit = option_bit(opt);

	if (ctl->given & bit)
		return usage_error("option --%s given twice", option_name(opt));
	ctl->given |= bit;

	switch (opt) {
	case OPTV_NAME:
		if (strlen(arg) > NAME_GLOB_MAX)
			return usage_error("--name: the glob is longer than %d characters",
					   NAME_GLOB_MAX);
		ctl->name_glob = arg;
		return 0;
	case OPTV_CGROUP:
		if (!*arg || strlen(arg) > CGROUP_PATH_MAX)
			return usage_error("--cgroup: the path must have 1 to %d characters",
					   CGROUP_PATH_MAX);
		ctl->cgroup_path = arg;
		return 0;
	case OPTV_CGROUP_ID:
		return parse_number("cgroup id", arg, 1, UINT64_MAX,
				    &ctl->cgroup_id);
	case OPTV_UID:
		/* (uid_t)-1 is no one's uid */
		return parse_u32("uid", arg, 0, UINT32_MAX - 1, &ctl->uid);
	case OPTV_ACTION:
		return parse_policy("action", arg, &ctl->action);
	case OPTV_BUDGET:
		return parse_u32("budget", arg, 0, MFR_BUDGET_MAX, &ctl->budget);
	case OPTV_COUNT:
		return parse_u32("count", arg, 1, UINT32_MAX, &ctl->count);
	case OPTV_DB:
		ctl->db_path = arg;
		return 0;
	case OPTV_BOOT:
		if (!*arg)
			return usage_error("--boot: empty boot id");
		ctl->forget_boot = arg;
		return 0;
	case OPTV_DIMM:
		if (!*arg)
			return usage_error("--dimm: empty label");
		ctl->forget_dimm = arg;
		return 0;
	case OPTV_SINCE:
		return parse_since(arg, &ctl->since_usec);
	case OPTV_DRY_RUN:
	case OPTV_YES:
		return 0;	/* in ctl->given */
	}
	return usage_error("unexpected option");
}

_Static_assert(OPT_NAME == 1 << (OPTV_NAME - OPTV_NAME) &&
	      OPT_COUNT == 1 << (OPTV_COUNT - OPTV_NAME) &&
	      OPT_DIMM == 1 << (OPTV_DIMM - OPTV_NAME) &&
	      OPT_YES == 1 << (OPTV_YES - OPTV_NAME) &&
	      OPT_SINCE == 1 << (OPTV_SINCE - OPTV_NAME),
	      "OPT_* bits follow the OPTV_* order");

static bool find_area(const char *word)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].area, word))
			return true;
	return false;
}

static const struct command *find_command(int nwords, char **words)
{
	const struct command *c;
	bool area = false;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(commands); i++) {
		c = &commands[i];
		if (strcmp(c->area, words[0]))
			continue;
		area = true;
		if (!c->verb || (nwords > 1 && !strcmp(c->verb, words[1])))
			return c;
	}
	/* "mfrctl rules": the area's default verb */
	for (i = 0; area && nwords == 1 && i < ARRAY_SIZE(commands); i++)
		if (commands[i].dflt && !strcmp(commands[i].area, words[0]))
			return &commands[i];
	if (!area) {
		usage_error("unknown command '%s'", words[0]);
	} else {
		char verbs[64] = "";

		for (i = 0; i < ARRAY_SIZE(commands); i++)
			if (!strcmp(commands[i].area, words[0]))
				snprintf(verbs + strlen(verbs),
					 sizeof(verbs) - strlen(verbs), "%s%s",
					 *verbs ? ", " : "", commands[i].verb);
		if (nwords < 2)
			usage_error("%s: missing subcommand (%s)", words[0],
				    verbs);
		else
			usage_error("unknown command '%s %s' (%s %s)", words[0],
				    words[1], words[0], verbs);
	}
	return NULL;
}

/* Check the command line into ctl; 0, or the exit status to end with. */
static int parse_command_line(struct mfrctl *ctl, int argc, char **argv,
			      const struct command **cmdp, char ***argsp)
{
	const struct command *c;
	int opt, nwords, nargs, ret;
	bool help = false;
	unsigned int stray;
	char name[32];
	char **words;

	opterr = 0;	/* our messages, with the usage hint */
	while ((opt = getopt_long(argc, argv, ":jpo:nrthV", options, NULL)) != -1) {
		switch (opt) {
		case 'j':
			ctl->json = output_opts.json = true;
			break;
		case 'p':
			output_opts.pretty = true;
			break;
		case 'o':
			output_opts.columns = optarg;
			break;
		case 'n':
			output_opts.noheadings = true;
			break;
		case 'r':
			output_opts.raw = true;
			break;
		case 't':
			output_opts.timestamps = true;
			break;
		case 'h':
			help = true;
			break;
		case 'V':
			printf("mfrctl %s\n", MFRCTL_VERSION);
			return PARSE_DONE;
		case ':':
			return usage_error("option '%s' needs a value",
					   argv[optind - 1]);
		case '?':
			if (optopt && strncmp(argv[optind - 1], "--", 2))
				return usage_error("unknown option '-%c'",
						   optopt);
			return usage_error("unknown option '%s'",
					   argv[optind - 1]);
		default:
			ret = parse_option(ctl, opt, optarg);
			if (ret)
				return ret;
		}
	}

	words = argv + optind;
	nwords = argc - optind;
	if (help) {
		/* "mfrctl rules --help", "mfrctl rules add --help" */
		c = NULL;
		for (size_t i = 0; nwords && i < ARRAY_SIZE(commands); i++)
			if (!strcmp(commands[i].area, words[0]) &&
			    (!commands[i].verb ||
			     (nwords > 1 && !strcmp(commands[i].verb, words[1]))))
				c = &commands[i];
		print_help(nwords && (c || find_area(words[0])) ? words[0] : NULL,
			   c);
		return PARSE_DONE;
	}
	if (!nwords)
		return usage_error("no command given");
	c = find_command(nwords, words);
	if (!c)
		return EXIT_USAGE;
	usage_cmd = c;
	command_name(c, name, sizeof(name));
	if (output_opts.pretty && !output_opts.json)
		return usage_error("-p (pretty JSON) needs -j");
	if ((output_opts.columns || output_opts.noheadings || output_opts.raw) &&
	    (!c->cols || output_opts.json))
		return usage_error("-o, -n and -r apply to the tables of listings, not to %s%s",
				   output_opts.json ? "JSON output of " : "", name);
	if (output_opts.timestamps && c->run != monitor_run)
		return usage_error("-t applies to monitor, not to %s", name);
	if (output_opts.columns) {
		size_t idx[*c->ncols], bad_len;
		const char *bad;

		if (columns_select(c->cols, *c->ncols, output_opts.columns, idx,
				   &bad, &bad_len) < 0)
			return usage_error("-o: unknown or repeated column '%.*s' (see 'mfrctl %s --help')",
					   (int)bad_len, bad, name);
	}

	/* a default verb: "mfrctl rules" runs "rules list" */
	nargs = nwords - (c->verb && nwords > 1 ? 2 : 1);
	if (nargs < (int)c->nargs)
		return usage_error("%s: missing argument", name);
	if (nargs > (int)(c->maxargs > c->nargs ? c->maxargs : c->nargs))
		return usage_error("unexpected argument '%s'",
				   words[nwords - nargs +
					 (c->maxargs > c->nargs ? c->maxargs : c->nargs)]);
	stray = ctl->given & ~c->opts;
	if (stray)
		return usage_error("option --%s does not apply to %s",
				   option_name(OPTV_NAME + __builtin_ctz(stray)),
				   name);
	*cmdp = c;
	*argsp = words + (nwords - nargs);
	return 0;
}

/* A full disk or a closed pipe must not pass for success. */
static int flush_output(const char *what, int status)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "mfrctl: %s%swriting the output: %s\n",
			what ?: "", what ? ": " : "", strerror(errno));
		return status ?: EXIT_FAILED;
	}
	return status;
}

int main(int argc, char **argv)
{
	struct mfrctl ctl = { 0 };
	const struct command *c = NULL;
	char what[32];
	char **args;
	int ret;

	ret = parse_command_line(&ctl, argc, argv, &c, &args);
	if (ret == PARSE_DONE)
		return flush_output(NULL, EXIT_OK);
	if (ret)
		return ret;
	command_name(c, what, sizeof(what));
	ctl.what = what;
	/* a refusal without a message comes from genl's admin-perm check */
	ctl.denied = c->denied ?: "needs CAP_NET_ADMIN and CAP_SYS_ADMIN";
	if (c->parse) {
		ret = c->parse(&ctl, args);
		if (ret)
			return ret;
	}

	if (c->store)
		return flush_output(what, c->run(&ctl));
	ret = mfr_genl_open(&ctl.genl);
	if (ret)
		return mfrctl_fail(&ctl, ret);
	ret = c->run(&ctl);
	mfr_genl_close(ctl.genl);
	return flush_output(what, ret);
}
