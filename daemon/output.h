// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrctl's two faces: aligned tables and "key=value" text for people,
 * JSON (json-c) with the spec's attribute names for scripts.
 */
#ifndef MFRCTL_OUTPUT_H
#define MFRCTL_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>
#include <json-c/json.h>
#include <netlink/attr.h>

#include "mfr-spec.h"

/* JSON: objects take ownership of val, also when adding fails. */
int json_add(json_object *obj, const char *key, json_object *val);
int json_append(json_object *array, json_object *val);

/* A JSON string of s, with invalid UTF-8 replaced by U+FFFD. */
json_object *json_text(const char *s);

/*
 * Every attribute present in tb, keyed by its spec name, in spec order:
 * numbers as JSON integers, enums by value name.  json_add_attrs() adds
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

struct column {
	const char *title;
	bool right;		/* right-align (numbers) */
	unsigned int attr;	/* in a listing, the attribute shown */
	unsigned int fallback;	/* ... and the one shown if it is absent */
};

#define COLUMN(t, r, a)		{ .title = (t), .right = (r), .attr = (a) }
#define COLUMN_OR(t, r, a, f)	{ .title = (t), .right = (r), .attr = (a), \
				  .fallback = (f) }

/* Rows of cells printed in columns as wide as their widest cell. */
struct table {
	const struct column *cols;
	size_t ncols;
	char **cells;		/* row after row */
	size_t ncells, size;
};

void table_init(struct table *t, const struct column *cols, size_t ncols);
/* Append a cell, taking ownership of a malloc()ed string.  0 or -ENOMEM. */
int table_add(struct table *t, char *cell);
int table_addf(struct table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void table_print(const struct table *t, FILE *f);
void table_free(struct table *t);

/*
 * Records of a dump (or the one record of a reply) as a table, or as a
 * JSON array (a single object) of json_attrs().
 */
struct listing {
	const struct column *cols;
	size_t ncols;
	bool json;
	bool single;
	struct table table;
	json_object *doc;
};

int listing_init(struct listing *l, const struct column *cols, size_t ncols,
		 bool json, bool single);
/* An mfr_genl_cb adding a record to the listing in arg. */
int listing_add(uint8_t cmd, const struct mfr_attr_set *set,
		struct nlattr **tb, void *arg);
int listing_print(struct listing *l);
void listing_free(struct listing *l);

#endif /* MFRCTL_OUTPUT_H */
