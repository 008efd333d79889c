// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * SMBIOS parsing for mfrd-dimm.h.  Structures are a 4-byte header (type,
 * formatted length, handle), the formatted area, then their strings,
 * each NUL-terminated, ended by an extra NUL.  Every offset is checked
 * against the formatted length: firmware tables are often short.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mfrd-dimm.h"
#include "mfrd-grow.h"

#define TYPE_MEMORY_DEVICE	17
#define TYPE_ARRAY_MAPPED	19
#define TYPE_DEVICE_MAPPED	20
#define TYPE_END		127

struct device {
	uint16_t handle;
	uint16_t size;		/* 0: empty slot */
	char locator[64], bank[64], serial[64], part[64], maker[64];
};

struct range {
	uint64_t start, end;	/* bytes, inclusive */
	uint16_t device;
	uint16_t array;		/* its type 19 (0xffff: none named) */
	bool exclusive;		/* says it is not interleaved */
};

/* Type 19: how many devices form one row of the array's address range. */
struct array {
	uint16_t handle;
	uint8_t width;
};

struct mfrd_dimms {
	struct device *dev;
	size_t ndev, dev_cap;
	struct range *rng;
	size_t nrng, rng_cap;
	struct array *arr;
	size_t narr, arr_cap;
};

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
	return get16(p) | (uint32_t)get16(p + 2) << 16;
}

static uint64_t get64(const uint8_t *p)
{
	return get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* String number n (1-based) of a structure; "" if absent or blank. */
static void string_at(const uint8_t *strings, const uint8_t *end, uint8_t n,
		      char *out, size_t size)
{
	const uint8_t *s = strings;
	size_t len;

	out[0] = '\0';
	if (!n)
		return;
	while (s < end && *s) {
		len = strnlen((const char *)s, (size_t)(end - s));
		if (!--n) {
			snprintf(out, size, "%.*s", (int)len, (const char *)s);
			/* firmware pads with blanks */
			for (len = strlen(out); len && out[len - 1] == ' '; len--)
				out[len - 1] = '\0';
			return;
		}
		s += len + 1;
	}
}

static bool add_device(struct mfrd_dimms *m, const uint8_t *p, uint8_t len,
		       const uint8_t *strings, const uint8_t *end)
{
	struct device *d, *v;

	if (len < 0x1b)
		return true;	/* too old to name a DIMM */
	v = mfrd_grow(m->dev, &m->dev_cap, m->ndev, sizeof(*v));
	if (!v)
		return false;
	m->dev = v;
	d = &m->dev[m->ndev++];
	memset(d, 0, sizeof(*d));
	d->handle = get16(p + 2);
	d->size = get16(p + 0x0c);
	string_at(strings, end, p[0x10], d->locator, sizeof(d->locator));
	string_at(strings, end, p[0x11], d->bank, sizeof(d->bank));
	string_at(strings, end, p[0x17], d->maker, sizeof(d->maker));
	string_at(strings, end, p[0x18], d->serial, sizeof(d->serial));
	string_at(strings, end, p[0x1a], d->part, sizeof(d->part));
	return true;
}

static bool add_array(struct mfrd_dimms *m, const uint8_t *p, uint8_t len)
{
	struct array *a;

	if (len < 0x0f)
		return true;
	a = mfrd_grow(m->arr, &m->arr_cap, m->narr, sizeof(*a));
	if (!a)
		return false;
	m->arr = a;
	a = &m->arr[m->narr++];
	a->handle = get16(p + 2);
	a->width = p[0x0e];
	return true;
}

static bool add_range(struct mfrd_dimms *m, const uint8_t *p, uint8_t len)
{
	uint32_t start_kb, end_kb;
	struct range *r;

	if (len < 0x13)
		return true;
	r = mfrd_grow(m->rng, &m->rng_cap, m->nrng, sizeof(*r));
	if (!r)
		return false;
	m->rng = r;
	r = &m->rng[m->nrng++];
	start_kb = get32(p + 4);
	end_kb = get32(p + 8);
	r->device = get16(p + 0x0c);
	r->array = get16(p + 0x0e);
	/*
	 * Interleave position and data depth: 0 and 0 for a device that holds
	 * the whole range alone; 1, 2, ... for one of several devices that
	 * share it, 0xff for "unknown".  Only the first says which DIMM.
	 */
	r->exclusive = p[0x11] == 0 && p[0x12] == 0;
	if (start_kb == 0xffffffff && len >= 0x23) {
		r->start = get64(p + 0x13);
		r->end = get64(p + 0x1b);
	} else {
		r->start = (uint64_t)start_kb << 10;
		r->end = ((uint64_t)end_kb << 10) | 1023;
	}
	return true;
}

struct mfrd_dimms *mfrd_dimms_parse(const uint8_t *t, size_t len)
{
	struct mfrd_dimms *m = calloc(1, sizeof(*m));
	const uint8_t *p = t, *end = t + len, *s;
	bool ok = m != NULL;

	while (ok && end - p >= 4 && p[1] >= 4 && p + p[1] <= end) {
		/* the strings run to a double NUL */
		for (s = p + p[1]; s + 1 < end && (s[0] || s[1]); s++)
			;
		if (s + 1 >= end)
			break;
		if (p[0] == TYPE_MEMORY_DEVICE)
			ok = add_device(m, p, p[1], p + p[1], s + 1);
		else if (p[0] == TYPE_DEVICE_MAPPED)
			ok = add_range(m, p, p[1]);
		else if (p[0] == TYPE_ARRAY_MAPPED)
			ok = add_array(m, p, p[1]);
		else if (p[0] == TYPE_END)
			break;
		p = s + 2;
	}
	if (!ok) {
		mfrd_dimms_free(m);
		return NULL;
	}
	return m;
}

struct mfrd_dimms *mfrd_dimms_load(const char *path, const char **why)
{
	uint8_t *buf = NULL;
	size_t len = 0, size = 0, n;
	struct mfrd_dimms *m;
	FILE *f = fopen(path, "re");

	if (!f) {
		*why = strerror(errno);
		return NULL;
	}
	do {
		uint8_t *b = mfrd_grow(buf, &size, len, 1);

		if (!b) {
			free(buf);
			fclose(f);
			*why = "out of memory";
			return NULL;
		}
		buf = b;
		n = fread(buf + len, 1, size - len, f);
		len += n;
	} while (n);
	fclose(f);
	m = mfrd_dimms_parse(buf, len);
	free(buf);
	if (m && !m->ndev) {
		mfrd_dimms_free(m);
		m = NULL;
		*why = "no memory device (SMBIOS type 17) in the table";
	} else if (!m) {
		*why = "out of memory";
	}
	return m;
}

void mfrd_dimms_free(struct mfrd_dimms *m)
{
	if (!m)
		return;
	free(m->dev);
	free(m->rng);
	free(m->arr);
	free(m);
}

static const struct device *device_by_handle(const struct mfrd_dimms *m,
					     uint16_t handle)
{
	for (size_t i = 0; i < m->ndev; i++)
		if (m->dev[i].handle == handle)
			return &m->dev[i];
	return NULL;
}

/*
 * A range "not interleaved" (0/0) is believed only where its array says
 * one device forms a row (partition width 1): boards interleave channels
 * and still fill type 20 with 0/0, one made-up range per DIMM, and an
 * address there is on any of the channel's DIMMs.
 */
static bool really_exclusive(const struct mfrd_dimms *m, const struct range *r)
{
	if (!r->exclusive)
		return false;
	for (size_t i = 0; i < m->narr; i++)
		if (m->arr[i].handle == r->array)
			return m->arr[i].width == 1;
	return false;
}

int mfrd_dimm_lookup(const struct mfrd_dimms *m, uint64_t phys,
		     struct mfrd_dimm *out)
{
	const struct device *d = NULL, *only = NULL;
	size_t populated = 0, i;

	if (!m)
		return -1;
	/*
	 * A wrong DIMM sends someone to pull the wrong module: an address in
	 * an interleaved (or unknown) range, or in ranges of two devices, is
	 * on no DIMM that can be named.
	 */
	for (i = 0; i < m->nrng; i++) {
		const struct range *r = &m->rng[i];

		if (phys < r->start || phys > r->end)
			continue;
		if (!really_exclusive(m, r) || (d && d->handle != r->device))
			return -1;
		d = device_by_handle(m, r->device);
		if (!d)
			return -1;
	}
	if (!d && !m->nrng) {
		/* no mapping at all: one populated device holds everything */
		for (i = 0; i < m->ndev; i++)
			if (m->dev[i].size && m->dev[i].size != 0xffff) {
				populated++;
				only = &m->dev[i];
			}
		if (populated == 1)
			d = only;
	}
	if (!d)
		return -1;
	snprintf(out->label, sizeof(out->label), "%s%s%s", d->bank,
		 *d->bank ? "/" : "", d->locator);
	snprintf(out->id, sizeof(out->id), "locator=%s/%s serial=%s part=%s maker=%s",
		 d->bank, d->locator, d->serial, d->part, d->maker);
	return 0;
}
