// SPDX-License-Identifier: GPL-2.0-or-later
/* ISO 8601 times (mfr-time.h). */
#include <stdio.h>
#include <time.h>

#include "mfr-time.h"

void mfr_time_text(int64_t usec, enum mfr_time_form form, char *buf,
		   size_t size)
{
	/* Floor, also before the epoch: the second the instant is in. */
	int64_t sec = usec / 1000000 - (usec % 1000000 < 0);
	time_t t = (time_t)sec;
	struct tm tm;
	size_t n;

	n = strftime(buf, size, form == MFR_TIME_BASIC ? "%Y%m%dT%H%M%S" :
		     "%Y-%m-%dT%H:%M:%S", gmtime_r(&t, &tm));
	if (form == MFR_TIME_USEC)
		snprintf(buf + n, size - n, ".%06lldZ",
			 (long long)(usec - sec * 1000000));
	else
		snprintf(buf + n, size - n, "Z");
}
