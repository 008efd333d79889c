// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Unit test of mfrd-dimm: SMBIOS tables built here (type 17 memory
 * devices, type 20 mapped ranges, short and truncated structures) map
 * physical addresses to the right DIMM, or to none.
 */
#include <stdint.h>

#include "mfrd-dimm.h"
#include "unit.h"

static uint8_t table[4096];
static size_t len;

static void put(const void *p, size_t n)
{
	memcpy(table + len, p, n);
	len += n;
}

/*
 * Type 17: size in MiB, strings: locator, bank, maker, serial, part.  An
 * empty string is not in the table: its number is 0, as SMBIOS says.
 */
static void device(uint16_t handle, uint16_t size, const char *locator,
		   const char *bank, const char *serial, const char *part)
{
	const char *str[] = { locator, bank, "Acme ", serial, part };
	const int at[] = { 0x10, 0x11, 0x17, 0x18, 0x1a };
	uint8_t s[0x1b] = { 17, 0x1b };
	int n = 0;

	s[2] = handle & 0xff;
	s[3] = handle >> 8;
	s[0x0c] = size & 0xff;
	s[0x0d] = size >> 8;
	for (int i = 0; i < 5; i++)
		if (*str[i])
			s[at[i]] = (uint8_t)++n;
	put(s, sizeof(s));
	for (int i = 0; i < 5; i++)
		if (*str[i])
			put(str[i], strlen(str[i]) + 1);
	put("", 1);	/* the terminating NUL (two with no string) */
	if (!n)
		put("", 1);
}

/*
 * Type 20: [start_kb, end_kb] on device, at interleave position pos with
 * data depth depth (0, 0: not interleaved; 0xff: unknown).
 */
static void mapped_at(uint32_t start_kb, uint32_t end_kb, uint16_t dev,
		      uint8_t pos, uint8_t depth)
{
	uint8_t s[0x13] = { 20, 0x13, 0x40, 0 };

	memcpy(s + 4, &start_kb, 4);
	memcpy(s + 8, &end_kb, 4);
	s[0x0c] = dev & 0xff;
	s[0x0d] = dev >> 8;
	s[0x11] = pos;
	s[0x12] = depth;
	put(s, sizeof(s));
	put("\0", 2);
}

/*
 * Type 19, handle 0 (the array every type 20 here names): width devices
 * form one row of its range; more than one is a channel-interleaved board.
 */
static void array(uint8_t width)
{
	uint8_t s[0x0f] = { 19, 0x0f, 0x00, 0x00 };
	uint32_t end_kb = 0xffffff;

	memcpy(s + 8, &end_kb, 4);
	s[0x0e] = width;
	put(s, sizeof(s));
	put("\0", 2);
}

static void mapped(uint32_t start_kb, uint32_t end_kb, uint16_t dev)
{
	mapped_at(start_kb, end_kb, dev, 0, 0);
}

static void end(void)
{
	uint8_t s[4] = { 127, 4, 0xff, 0xff };

	put(s, 4);
	put("\0", 2);
}

/* Two DIMMs, each mapped "not interleaved" to 4 GiB, in an array WIDTH wide. */
static struct mfrd_dimms *two_dimms(uint8_t width)
{
	len = 0;
	array(width);
	device(0x1100, 4096, "DIMM_A1", "BANK 0", "SN-A1", "PN-1");
	device(0x1101, 4096, "DIMM_B1", "BANK 1", "SN-B1", "PN-1");
	mapped(0, 4 * 1024 * 1024 - 1, 0x1100);
	mapped(4 * 1024 * 1024, 8 * 1024 * 1024 - 1, 0x1101);
	end();
	return mfrd_dimms_parse(table, len);
}

int main(void)
{
	struct mfrd_dimms *m;
	struct mfrd_dimm d;
	const char *why = "";

	unit_init();

	/*
	 * A channel-interleaved board that fills type 20 with "not
	 * interleaved" anyway: its array is two devices wide, so no address
	 * is on one DIMM that can be named.
	 */
	m = two_dimms(2);
	CHECK(m && mfrd_dimm_lookup(m, 0x12345000, &d) == -1,
	      "0/0 in an array two devices wide (channel interleaving): unknown");
	mfrd_dimms_free(m);

	/* Two DIMMs, each mapped to 4 GiB. */
	m = two_dimms(1);
	CHECK(m != NULL, "a table with two DIMMs parses");
	CHECK(mfrd_dimm_lookup(m, 0x12345000, &d) == 0, "an address below 4 GiB");
	CHECK_STR(d.label, "BANK 0/DIMM_A1", "is on DIMM_A1");
	CHECK_STR(d.id, "locator=BANK 0/DIMM_A1 serial=SN-A1 part=PN-1 maker=Acme",
		  "identity: locator, serial, part, maker (blanks trimmed)");
	CHECK(mfrd_dimm_lookup(m, 0x1ffffffffULL, &d) == 0, "the last byte of 8 GiB");
	CHECK_STR(d.label, "BANK 1/DIMM_B1", "is on DIMM_B1");
	CHECK(mfrd_dimm_lookup(m, 0x200000000ULL, &d) == -1, "past 8 GiB: no DIMM");
	mfrd_dimms_free(m);

	/*
	 * 2-way interleaved: both DIMMs map the same 8 GiB, positions 1 and
	 * 2.  No address can be put on one of them.
	 */
	len = 0;
	array(1);
	device(0x1100, 4096, "DIMM_A1", "BANK 0", "SN-A1", "PN-1");
	device(0x1101, 4096, "DIMM_B1", "BANK 1", "SN-B1", "PN-1");
	mapped_at(0, 8 * 1024 * 1024 - 1, 0x1100, 1, 1);
	mapped_at(0, 8 * 1024 * 1024 - 1, 0x1101, 2, 1);
	end();
	m = mfrd_dimms_parse(table, len);
	CHECK(m && mfrd_dimm_lookup(m, 0x12345000, &d) == -1,
	      "2-way interleaved: unknown, not the first DIMM");
	CHECK(m && mfrd_dimm_lookup(m, 0x1ffffffffULL, &d) == -1,
	      "2-way interleaved: unknown at the end too");
	mfrd_dimms_free(m);
	/* Overlapping ranges of two devices, interleave fields zero. */
	len = 0;
	array(1);
	device(0x1100, 4096, "DIMM_A1", "BANK 0", "SN-A1", "PN-1");
	device(0x1101, 4096, "DIMM_B1", "BANK 1", "SN-B1", "PN-1");
	mapped(0, 8 * 1024 * 1024 - 1, 0x1100);
	mapped(4 * 1024 * 1024, 8 * 1024 * 1024 - 1, 0x1101);
	end();
	m = mfrd_dimms_parse(table, len);
	CHECK(m && mfrd_dimm_lookup(m, 0x12345000, &d) == 0 &&
	      !strcmp(d.label, "BANK 0/DIMM_A1"), "one device's range alone: named");
	CHECK(m && mfrd_dimm_lookup(m, 0x1ffffffffULL, &d) == -1,
	      "in ranges of two devices: unknown");
	mfrd_dimms_free(m);
	/* Interleave unknown (0xff): unknown. */
	len = 0;
	array(1);
	device(0x1100, 4096, "DIMM_A1", "BANK 0", "SN-A1", "PN-1");
	mapped_at(0, 4 * 1024 * 1024 - 1, 0x1100, 0xff, 0xff);
	end();
	m = mfrd_dimms_parse(table, len);
	CHECK(m && mfrd_dimm_lookup(m, 0x1000, &d) == -1,
	      "interleave position unknown: unknown");
	mfrd_dimms_free(m);

	/* No type 20: one populated device takes everything; two do not. */
	len = 0;
	array(1);
	device(0x1100, 2048, "DIMM 0", "", "", "");
	device(0x1101, 0, "DIMM 1", "", "", "");	/* empty slot */
	end();
	m = mfrd_dimms_parse(table, len);
	CHECK(m && mfrd_dimm_lookup(m, 0x1000, &d) == 0, "one populated DIMM, no map");
	CHECK_STR(d.label, "DIMM 0", "everything is on it");
	mfrd_dimms_free(m);
	len = 0;
	array(1);
	device(0x1100, 2048, "DIMM 0", "", "", "");
	device(0x1101, 2048, "DIMM 1", "", "", "");
	end();
	m = mfrd_dimms_parse(table, len);
	CHECK(m && mfrd_dimm_lookup(m, 0x1000, &d) == -1, "two DIMMs, no map: unknown");
	mfrd_dimms_free(m);

	/* A truncated table: what parsed is used, nothing read past the end. */
	len = 0;
	array(1);
	device(0x1100, 4096, "DIMM_A1", "BANK 0", "SN-A1", "PN-1");
	mapped(0, 4 * 1024 * 1024 - 1, 0x1100);
	m = mfrd_dimms_parse(table, len - 1);
	CHECK(m && mfrd_dimm_lookup(m, 0x1000, &d) == 0,
	      "a table cut in its last structure still maps by the device");
	mfrd_dimms_free(m);
	m = mfrd_dimms_parse(table, 3);
	CHECK(m && mfrd_dimm_lookup(m, 0x1000, &d) == -1, "3 bytes: nothing");
	mfrd_dimms_free(m);

	/* From a file; a missing one says why. */
	len = 0;
	array(1);
	device(0x1100, 4096, "DIMM_A1", "BANK 0", "SN-A1", "PN-1");
	end();
	unit_write(unit_path("DMI"), (const char *)table, (long)len);
	m = mfrd_dimms_load(unit_path("DMI"), &why);
	CHECK(m && mfrd_dimm_lookup(m, 0, &d) == 0, "loaded from a file");
	mfrd_dimms_free(m);
	CHECK(mfrd_dimms_load(unit_path("none"), &why) == NULL &&
	      !strcmp(why, "No such file or directory"), "a missing file: ENOENT");
	return check_exit_status();
}
