// SPDX-License-Identifier: GPL-2.0-or-later
/* Unit test of mfr-time: the one ISO 8601 formatter, in its three forms. */
#include "mfr-time.h"
#include "unit.h"

int main(void)
{
	char buf[MFR_TIME_MAX];
	const int64_t t = 1700000000123456;	/* 2023-11-14T22:13:20.123456Z */

	unit_init();
	mfr_time_text(t, MFR_TIME_SECONDS, buf, sizeof(buf));
	CHECK_STR(buf, "2023-11-14T22:13:20Z", "seconds");
	mfr_time_text(t, MFR_TIME_USEC, buf, sizeof(buf));
	CHECK_STR(buf, "2023-11-14T22:13:20.123456Z", "microseconds");
	mfr_time_text(t, MFR_TIME_BASIC, buf, sizeof(buf));
	CHECK_STR(buf, "20231114T221320Z", "basic, for file names");
	mfr_time_text(-1, MFR_TIME_USEC, buf, sizeof(buf));
	CHECK_STR(buf, "1969-12-31T23:59:59.999999Z", "before the epoch: floored");
	return check_exit_status();
}
