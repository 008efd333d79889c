// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Output for people and for scripts.  Strings come from memfd_create()
 * names, task names and cgroup paths, so they may hold any byte: JSON
 * gets valid UTF-8, terminals get no raw control characters.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int json_add_attrs(json_object *obj, const struct mfr_attr_set *set,
		   struct nlattr **tb)
{
	const struct mfr_attr *a;
	json_object *val;
	const char *name;
	unsigned int i;
	uint64_t v;
	int ret;

	for (i = 1; i <= set->max; i++) {
		a = &set->attrs[i];
		if (!tb[i] || a->type == MFR_ATTR_UNUSED)
			continue;
		if (a->type == MFR_ATTR_STRING) {
			val = json_text(nla_get_string(tb[i]));
		} else {
			v = mfr_genl_get_uint(tb[i]);
			name = a->values ? mfr_enum_name(a->values, v) : NULL;
			/* an enum value newer than this program stays a number */
			val = name ? json_object_new_string(name) :
				     json_object_new_uint64(v);
		}
		ret = json_add(obj, a->name, val);
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
			JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);

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

static char *string_text(const char *s, bool quote)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0, len;
	char *out;

	quote = quote && needs_quotes(s);
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

char *attr_text(const struct mfr_attr_set *set, unsigned int attr,
		const struct nlattr *nla, bool quote)
{
	const struct mfr_attr *a = &set->attrs[attr];
	const char *name;
	uint64_t v;
	char *s;

	if (a->type == MFR_ATTR_STRING)
		return string_text(nla_get_string(nla), quote);
	v = mfr_genl_get_uint(nla);
	if (a->values && (name = mfr_enum_name(a->values, v)))
		return strdup(name);

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

void table_init(struct table *t, const struct column *cols, size_t ncols)
{
	*t = (struct table) { .cols = cols, .ncols = ncols };
}

int table_add(struct table *t, char *cell)
{
	char **cells;

	if (!cell)
		return -ENOMEM;
	if (t->ncells == t->size) {
		t->size = t->size ? 2 * t->size : 16 * t->ncols;
		cells = realloc(t->cells, t->size * sizeof(*cells));
		if (!cells) {
			free(cell);
			return -ENOMEM;
		}
		t->cells = cells;
	}
	t->cells[t->ncells++] = cell;
	return 0;
}

int table_addf(struct table *t, const char *fmt, ...)
{
	va_list ap;
	char *cell;
	int ret;

	va_start(ap, fmt);
	ret = vasprintf(&cell, fmt, ap);
	va_end(ap);
	return table_add(t, ret < 0 ? NULL : cell);
}

/* Terminal columns of a cell: UTF-8 continuation bytes take none. */
static size_t text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static void print_cell(FILE *f, const struct table *t, size_t col,
		       const char *s, const size_t *width)
{
	size_t pad = width[col] - text_width(s);
	bool last = col == t->ncols - 1;

	if (col)
		fputs("  ", f);
	if (t->cols[col].right)
		fprintf(f, "%*s%s", (int)pad, "", s);
	else
		fprintf(f, "%s%*s", s, last ? 0 : (int)pad, "");
	if (last)
		fputc('\n', f);
}

void table_print(const struct table *t, FILE *f)
{
	size_t width[t->ncols];
	size_t i, w;

	for (i = 0; i < t->ncols; i++)
		width[i] = text_width(t->cols[i].title);
	for (i = 0; i < t->ncells; i++) {
		w = text_width(t->cells[i]);
		if (w > width[i % t->ncols])
			width[i % t->ncols] = w;
	}
	for (i = 0; i < t->ncols; i++)
		print_cell(f, t, i, t->cols[i].title, width);
	/* cells of an unfinished last row are not printed */
	for (i = 0; i < t->ncells / t->ncols * t->ncols; i++)
		print_cell(f, t, i % t->ncols, t->cells[i], width);
}

void table_free(struct table *t)
{
	while (t->ncells)
		free(t->cells[--t->ncells]);
	free(t->cells);
	t->cells = NULL;
	t->size = 0;
}

int listing_init(struct listing *l, const struct column *cols, size_t ncols,
		 bool json, bool single)
{
	*l = (struct listing) {
		.cols = cols,
		.ncols = ncols,
		.json = json,
		.single = single,
	};
	table_init(&l->table, cols, ncols);
	if (json && !single) {
		l->doc = json_object_new_array();
		if (!l->doc)
			return -ENOMEM;
	}
	return 0;
}

int listing_add(uint8_t cmd, const struct mfr_attr_set *set,
		struct nlattr **tb, void *arg)
{
	struct listing *l = arg;
	const struct column *c;
	json_object *obj;
	unsigned int attr;
	size_t i;
	int ret;

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
	for (i = 0; i < l->ncols; i++) {
		c = &l->cols[i];
		attr = tb[c->attr] ? c->attr : c->fallback;
		if (attr && tb[attr])
			ret = table_add(&l->table,
					attr_text(set, attr, tb[attr], false));
		else
			ret = table_add(&l->table, strdup("-"));
		if (ret)
			return ret;
	}
	return 0;
}

int listing_print(struct listing *l)
{
	int ret = 0;

	if (!l->json) {
		table_print(&l->table, stdout);
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
	table_free(&l->table);
	json_object_put(l->doc);
	l->doc = NULL;
}
