// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Output for people and for scripts.  Strings come from memfd_create()
 * names, task names and cgroup paths, so they may hold any byte: JSON
 * gets valid UTF-8, terminals get no raw control characters.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mfr-genl.h"
#include "output.h"

int json_add(json_object *obj, const char *key, json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_object_add(obj, key, val)) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

int json_append(json_object *array, json_object *val)
{
	if (!val)
		return -ENOMEM;
	if (json_object_array_add(array, val)) {
		json_object_put(val);
		return -ENOMEM;
	}
	return 0;
}

/* Length of the valid UTF-8 sequence at s, 0 if there is none. */
static size_t utf8_len(const unsigned char *s)
{
	size_t len, i;
	uint32_t c;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		len = 2;
		c = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		len = 3;
		c = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		len = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;	/* also stops at the terminating NUL */
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates, past U+10FFFF */
	if ((len == 2 && c < 0x80) || (len == 3 && c < 0x800) ||
	    (len == 4 && c < 0x10000) || (c >= 0xd800 && c <= 0xdfff) ||
	    c > 0x10ffff)
		return 0;
	return len;
}

json_object *json_text(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	json_object *obj;
	size_t n, len;
	char *copy;

	for (n = 0; p[n]; n += len)
		if (!(len = utf8_len(p + n)))
			break;
	if (!p[n])
		return json_object_new_string(s);

	/* Each invalid byte becomes the 3-byte U+FFFD. */
	copy = malloc(3 * strlen(s) + 1);
	if (!copy)
		return NULL;
	for (n = 0; *p; p += len) {
		len = utf8_len(p);
		if (len) {
			memcpy(copy + n, p, len);
			n += len;
		} else {
			memcpy(copy + n, "\xef\xbf\xbd", 3);
			n += 3;
			len = 1;
		}
	}
	copy[n] = '\0';
	obj = json_object_new_string(copy);
	free(copy);
	return obj;
}

struct output_opts output_opts;

void json_key(const char *name, char *buf, size_t size)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < size; i++)
		buf[i] = name[i] == '-' ? '_' : name[i];
	buf[i] = '\0';
}

/* An enum value as text, "unknown-N" if newer than this program. */
static json_object *json_enum(const struct mfr_enum *e, uint64_t v)
{
	const char *name = mfr_enum_name(e, v);
	char buf[32];

	if (name)
		return json_object_new_string(name);
	snprintf(buf, sizeof(buf), "unknown-%" PRIu64, v);
	return json_object_new_string(buf);
}

int json_add_attrs(json_object *obj, const struct mfr_attr_set *set,
		   struct nlattr **tb)
{
	const struct mfr_attr *a;
	json_object *val;
	unsigned int i;
	char key[64];
	uint64_t v;
	int ret;

	for (i = 1; i <= set->max; i++) {
		a = &set->attrs[i];
		if (!tb[i] || a->type == MFR_ATTR_UNUSED)
			continue;
		if (a->type == MFR_ATTR_NEST)
			continue;	/* no listing shows one */
		if (a->type == MFR_ATTR_STRING) {
			val = json_text(nla_get_string(tb[i]));
		} else {
			v = mfr_genl_get_uint(tb[i]);
			val = a->values ? json_enum(a->values, v) :
					  json_object_new_uint64(v);
		}
		json_key(a->name, key, sizeof(key));
		ret = json_add(obj, key, val);
		if (ret)
			return ret;
	}
	return 0;
}

/* json_add_attrs() into a new object; NULL on ENOMEM. */
static json_object *json_attrs(const struct mfr_attr_set *set,
			       struct nlattr **tb)
{
	json_object *obj = json_object_new_object();

	if (obj && json_add_attrs(obj, set, tb)) {
		json_object_put(obj);
		obj = NULL;
	}
	return obj;
}

int json_print(json_object *doc)
{
	const char *s = json_object_to_json_string_ext(doc,
			(output_opts.pretty ? JSON_C_TO_STRING_PRETTY |
					      JSON_C_TO_STRING_SPACED :
					      JSON_C_TO_STRING_PLAIN) |
			JSON_C_TO_STRING_NOSLASHESCAPE);

	if (!s)
		return -ENOMEM;
	if (puts(s) == EOF)
		return -errno;
	return 0;
}

int json_print_attrs(const struct mfr_attr_set *set, struct nlattr **tb)
{
	json_object *obj = json_attrs(set, tb);
	int ret;

	if (!obj)
		return -ENOMEM;
	ret = json_print(obj);
	json_object_put(obj);
	return ret;
}

/* How people read an attribute; everything else prints in decimal. */
enum display { SHOW_DECIMAL, SHOW_HEX, SHOW_SIZE, SHOW_BUDGET };

static enum display attr_display(const struct mfr_attr_set *set,
				 unsigned int attr)
{
	if (set == &mfr_attr_sets[MFR_SET_POISON]) {
		switch (attr) {
		case MFR_A_POISON_PFN:
		case MFR_A_POISON_HEAD_PFN:
		case MFR_A_POISON_OFFSET:
			return SHOW_HEX;
		case MFR_A_POISON_FOLIO_SIZE:
			return SHOW_SIZE;
		case MFR_A_POISON_BUDGET:
			return SHOW_BUDGET;
		}
	} else if (set == &mfr_attr_sets[MFR_SET_MEMFD]) {
		switch (attr) {
		case MFR_A_MEMFD_SIZE:
		case MFR_A_MEMFD_HUGEPAGE_SIZE:
			return SHOW_SIZE;
		case MFR_A_MEMFD_BUDGET:
			return SHOW_BUDGET;
		}
	} else if (set == &mfr_attr_sets[MFR_SET_RULE]) {
		if (attr == MFR_A_RULE_BUDGET)
			return SHOW_BUDGET;
	}
	return SHOW_DECIMAL;
}

/* A byte count in the largest binary unit that divides it exactly. */
static char *size_text(uint64_t v)
{
	static const char units[] = "KMGTPE";
	char *s;
	int u;

	for (u = 0; v && !(v & 1023) && units[u]; u++)
		v >>= 10;
	if (u)
		return asprintf(&s, "%" PRIu64 "%c", v, units[u - 1]) < 0 ?
		       NULL : s;
	return asprintf(&s, "%" PRIu64, v) < 0 ? NULL : s;
}

static bool needs_quotes(const char *s)
{
	return !*s || strpbrk(s, " \t\"\\=") != NULL;
}

/*
 * The one way mfrctl shows text it did not write (memfd names, commands,
 * cgroups, DIMM labels): control characters, C1 controls and invalid
 * UTF-8 as \xNN, in every table and line alike; a backslash as is in
 * tables for people, so that systemd's own escapes
 * ("machine-qemu\x2d1\x2dvm1.scope") read, and paste, as systemd shows
 * them.  ESC_QUOTE (key=value lines) puts text with blanks, '"', '\\' or
 * '=' in double quotes.  -r tables are libsmartcols' raw output, which
 * writes blanks and backslashes as \xNN too, so that every \xNN there
 * is one byte for scripts to decode.
 */
enum escape { ESC_TEXT, ESC_QUOTE };

static char *string_text(const char *s, enum escape how)
{
	const unsigned char *p = (const unsigned char *)s;
	bool quote = how == ESC_QUOTE && needs_quotes(s);
	size_t n = 0, len;
	char *out;

	/* "\xNN" is the longest form of a byte; two quotes and a NUL */
	out = malloc(4 * strlen(s) + 3);
	if (!out)
		return NULL;
	if (quote)
		out[n++] = '"';
	for (; *p; p += len) {
		len = utf8_len(p);
		/* C1 controls (U+0080..U+009F) are escapes to terminals too */
		if (len > 1 && !(p[0] == 0xc2 && p[1] < 0xa0)) {
			memcpy(out + n, p, len);
			n += len;
			continue;
		}
		len = 1;
		if (quote && (*p == '"' || *p == '\\')) {
			out[n++] = '\\';
			out[n++] = *p;
		} else if (*p < 0x20 || *p >= 0x7f) {
			n += sprintf(out + n, "\\x%02x", *p);
		} else {
			out[n++] = *p;
		}
	}
	if (quote)
		out[n++] = '"';
	out[n] = '\0';
	return out;
}

char *text_escaped(const char *s)
{
	return string_text(s, ESC_TEXT);
}

char *table_cell(const char *s)
{
	/* Raw tables: libsmartcols escapes, and its rule covers ours. */
	return output_opts.raw ? strdup(s) : string_text(s, ESC_TEXT);
}

struct libscols_table *table_new(const struct column *cols,
				 const size_t *shown, size_t nshown)
{
	struct libscols_table *tb = scols_new_table();

	/* Cells come escaped (table_cell()): libsmartcols adds nothing. */
	if (!tb || scols_table_enable_raw(tb, output_opts.raw) ||
	    scols_table_enable_noheadings(tb, output_opts.noheadings) ||
	    scols_table_enable_noencoding(tb, 1))
		goto nomem;
	for (size_t i = 0; i < nshown; i++)
		if (!scols_table_new_column(tb, cols[shown[i]].title, 0,
					    cols[shown[i]].right ?
					    SCOLS_FL_RIGHT : 0))
			goto nomem;
	return tb;
nomem:
	scols_unref_table(tb);
	return NULL;
}

int table_print(struct libscols_table *tb, const struct column *cols,
		const size_t *shown, size_t nshown)
{
	/* libsmartcols prints nothing for no line: the titles all the same. */
	if (!scols_table_get_nlines(tb)) {
		for (size_t i = 0; !output_opts.noheadings && i < nshown; i++)
			printf("%s%s", i ? " " : "", cols[shown[i]].title);
		if (!output_opts.noheadings && nshown)
			putchar('\n');
		return 0;
	}
	return scols_print_table(tb);
}

char *attr_text(const struct mfr_attr_set *set, unsigned int attr,
		const struct nlattr *nla, bool quote)
{
	const struct mfr_attr *a = &set->attrs[attr];
	const char *name;
	uint64_t v;
	char *s;

	if (a->type == MFR_ATTR_STRING)
		return string_text(nla_get_string(nla),
				   quote ? ESC_QUOTE : ESC_TEXT);
	v = mfr_genl_get_uint(nla);
	if (a->values && (name = mfr_enum_name(a->values, v)))
		return strdup(name);
	if (a->values)
		return asprintf(&s, "unknown-%" PRIu64, v) < 0 ? NULL : s;

	switch (attr_display(set, attr)) {
	case SHOW_HEX:
		return asprintf(&s, "0x%" PRIx64, v) < 0 ? NULL : s;
	case SHOW_SIZE:
		return size_text(v);
	case SHOW_BUDGET:
		if (!v)
			return strdup("unlimited");
		break;
	case SHOW_DECIMAL:
		break;
	}
	return asprintf(&s, "%" PRIu64, v) < 0 ? NULL : s;
}

void column_name(const struct column *c, char *buf, size_t size)
{
	size_t i;

	for (i = 0; c->title[i] && i + 1 < size; i++)
		buf[i] = (char)tolower((unsigned char)c->title[i]);
	buf[i] = '\0';
}

int columns_select(const struct column *cols, size_t ncols,
		   const char *columns, size_t *idx, const char **bad,
		   size_t *bad_len)
{
	const char *p = columns, *end;
	size_t n = 0, len, i, j;
	char name[32];

	if (!columns) {
		for (i = 0; i < ncols; i++)
			idx[i] = i;
		return (int)ncols;
	}
	for (;;) {
		end = strchr(p, ',');
		len = end ? (size_t)(end - p) : strlen(p);
		for (i = 0; i < ncols; i++) {
			column_name(&cols[i], name, sizeof(name));
			if (strlen(name) == len && !strncasecmp(name, p, len))
				break;
		}
		for (j = 0; i < ncols && j < n; j++)
			if (idx[j] == i)
				i = ncols;	/* named twice */
		if (i == ncols || n == ncols) {
			*bad = p;
			*bad_len = len;
			return -1;
		}
		idx[n++] = i;
		if (!end)
			return (int)n;
		p = end + 1;
	}
}

int listing_init(struct listing *l, const struct column *cols, size_t ncols,
		 bool json, bool single)
{
	const char *bad;
	size_t bad_len;
	int n;

	*l = (struct listing) {
		.cols = cols,
		.ncols = ncols,
		.json = json,
		.single = single,
	};
	if (json) {
		if (!single) {
			l->doc = json_object_new_array();
			if (!l->doc)
				return -ENOMEM;
		}
		return 0;
	}
	l->shown = calloc(ncols, sizeof(*l->shown));
	if (!l->shown)
		return -ENOMEM;
	n = columns_select(cols, ncols, output_opts.columns, l->shown, &bad,
			   &bad_len);
	if (n < 0)
		return -EINVAL;	/* mfrctl checked -o before */
	l->nshown = (size_t)n;
	l->table = table_new(cols, l->shown, l->nshown);
	return l->table ? 0 : -ENOMEM;
}

int listing_add(uint8_t cmd, const struct mfr_attr_set *set,
		struct nlattr **tb, void *arg)
{
	struct listing *l = arg;
	struct libscols_line *line;
	const struct column *c;
	json_object *obj;
	unsigned int attr;
	char *text;
	size_t i;

	(void)cmd;
	if (l->json) {
		obj = json_attrs(set, tb);
		if (!obj)
			return -ENOMEM;
		if (l->single) {
			json_object_put(l->doc);
			l->doc = obj;
			return 0;
		}
		return json_append(l->doc, obj);
	}
	line = scols_table_new_line(l->table, NULL);
	if (!line)
		return -ENOMEM;
	for (i = 0; i < l->nshown; i++) {
		c = &l->cols[l->shown[i]];
		attr = tb[c->attr] ? c->attr : c->fallback;
		if (!attr || !tb[attr])
			text = strdup("-");
		else if (set->attrs[attr].type == MFR_ATTR_STRING)
			text = table_cell(nla_get_string(tb[attr]));
		else
			text = attr_text(set, attr, tb[attr], false);
		/* refer: the line owns text from now on */
		if (!text || scols_line_refer_data(line, i, text)) {
			free(text);
			return -ENOMEM;
		}
	}
	return 0;
}

int listing_print(struct listing *l)
{
	int ret = 0;

	if (!l->json) {
		ret = table_print(l->table, l->cols, l->shown, l->nshown);
	} else if (l->doc) {
		ret = json_print(l->doc);
	} else {
		/* a reply without attributes */
		l->doc = json_object_new_object();
		ret = l->doc ? json_print(l->doc) : -ENOMEM;
	}
	return ret;
}

void listing_free(struct listing *l)
{
	scols_unref_table(l->table);
	l->table = NULL;
	free(l->shown);
	l->shown = NULL;
	json_object_put(l->doc);
	l->doc = NULL;
}
