// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The one formatter of times for people and file names: ISO 8601, UTC,
 * shared by mfrctl (listings, monitor -t) and mfrd (a damaged store's
 * name when moved aside).
 */
#ifndef MFR_TIME_H
#define MFR_TIME_H

#include <stddef.h>
#include <stdint.h>

enum mfr_time_form {
	MFR_TIME_SECONDS,	/* 2026-11-26T10:00:00Z */
	MFR_TIME_USEC,		/* 2026-11-26T10:00:00.123456Z */
	MFR_TIME_BASIC,		/* 20261126T100000Z, for file names */
};

/* Room for any form, with its NUL. */
#define MFR_TIME_MAX	32

/* CLOCK_REALTIME microseconds as form, into buf (MFR_TIME_MAX bytes). */
void mfr_time_text(int64_t usec, enum mfr_time_form form, char *buf,
		   size_t size);

#endif /* MFR_TIME_H */
