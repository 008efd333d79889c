// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrctl's two faces: libsmartcols tables and "key=value" text for
 * people, JSON (json-c) with the spec's attribute names in snake_case
 * for scripts.
 */
#ifndef MFRCTL_OUTPUT_H
#define MFRCTL_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include <json-c/json.h>
#include <libsmartcols.h>
#include <netlink/attr.h>

#include "mfr-spec.h"

/* JSON: objects take ownership of val, also when adding fails. */
int json_add(json_object *obj, const char *key, json_object *val);
int json_append(json_object *array, json_object *val);

/* A JSON string of s, with invalid UTF-8 replaced by U+FFFD. */
json_object *json_text(const char *s);

/*
 * Every attribute present in tb, keyed by its spec name in snake_case,
 * in spec order: numbers as JSON integers, enums by value name always
 * (a value newer than this program as "unknown-N").  json_add_attrs() adds
 * them to obj (0 or -ENOMEM); json_print_attrs() prints them as one
 * document (0 or -errno).
 */
int json_add_attrs(json_object *obj, const struct mfr_attr_set *set,
		   struct nlattr **tb);
int json_print_attrs(const struct mfr_attr_set *set, struct nlattr **tb);

/* Print a JSON document on a line of its own.  0 or -errno. */
int json_print(json_object *doc);

/*
 * An attribute for people, in a malloc()ed string: enum names, pfns and
 * offsets in hex, sizes in K/M/G, a zero budget as "unlimited", strings
 * with control characters escaped.  "quote" puts strings that are empty
 * or hold blanks, quotes or '=' in double quotes, for key=value lines.
 * NULL on ENOMEM.
 */
char *attr_text(const struct mfr_attr_set *set, unsigned int attr,
		const struct nlattr *nla, bool quote);

/*
 * Text someone else chose (a memfd's name, a command, a cgroup) as every
 * listing and log line shows it: control characters and invalid UTF-8 as
 * \xNN, the rest as is.  malloc()ed; NULL on ENOMEM.
 */
char *text_escaped(const char *s);

/* A table cell of such text: the same; with -r, libsmartcols' raw escapes. */
char *table_cell(const char *s);

struct column {
	const char *title;	/* header; lower-cased, the name -o takes */
	bool right;		/* right-align (numbers) */
	unsigned int attr;	/* in a listing, the attribute shown */
	unsigned int fallback;	/* ... and the one shown if it is absent */
	const char *help;	/* one line for --help */
};

#define COLUMN(t, r, a, h)	{ .title = (t), .right = (r), .attr = (a), \
				  .help = (h) }
#define COLUMN_OR(t, r, a, f, h) { .title = (t), .right = (r), .attr = (a), \
				  .fallback = (f), .help = (h) }

/* How every command prints, from mfrctl's global options. */
struct output_opts {
	bool json;		/* -j */
	bool pretty;		/* -p: indented JSON */
	bool raw;		/* -r: tables without alignment, escaped */
	bool noheadings;	/* -n */
	bool timestamps;	/* -t: monitor */
	const char *columns;	/* -o: comma-separated column names */
};

extern struct output_opts output_opts;

/*
 * The column indexes -o names, in its order, into idx (room for ncols;
 * a column may be named once).  Without -o, every column.  Returns the
 * count, or -1 with the offending name in *bad (points into columns).
 */
int columns_select(const struct column *cols, size_t ncols,
		   const char *columns, size_t *idx, const char **bad,
		   size_t *bad_len);

/* The lower-case name of a column, as -o and --help spell it. */
void column_name(const struct column *c, char *buf, size_t size);

/*
 * Records of a dump (or the one record of a reply) as a libsmartcols
 * table, or as a JSON array (a single object) of json_attrs().
 */
struct listing {
	const struct column *cols;
	size_t ncols;
	bool json;
	bool single;
	struct libscols_table *table;
	size_t *shown;		/* indexes into cols, in output order */
	size_t nshown;
	json_object *doc;
};

/*
 * A table of the columns shown (indexes into cols), as -r and -n say; its
 * cells escaped by table_cell() or numbers.  NULL on ENOMEM.
 */
struct libscols_table *table_new(const struct column *cols,
				 const size_t *shown, size_t nshown);
/* Print it: without a line, its titles alone (unless -n). */
int table_print(struct libscols_table *tb, const struct column *cols,
		const size_t *shown, size_t nshown);

int listing_init(struct listing *l, const struct column *cols, size_t ncols,
		 bool json, bool single);
/* An mfr_genl_cb adding a record to the listing in arg. */
int listing_add(uint8_t cmd, const struct mfr_attr_set *set,
		struct nlattr **tb, void *arg);
int listing_print(struct listing *l);
void listing_free(struct listing *l);

/* The JSON key of a spec name: "hugepage-size" -> "hugepage_size". */
void json_key(const char *name, char *buf, size_t size);

#endif /* MFRCTL_OUTPUT_H */
