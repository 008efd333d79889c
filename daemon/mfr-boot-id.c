// SPDX-License-Identifier: GPL-2.0-or-later
/* Boot ids (mfr-boot-id.h). */
#include "mfr-boot-id.h"

int mfr_boot_id(char id[MFR_BOOT_ID_MAX])
{
	sd_id128_t b;
	int r = sd_id128_get_boot(&b);

	if (r < 0)
		return r;
	sd_id128_to_uuid_string(b, id);
	return 0;
}

const char *mfr_boot_id_normal(const char *text, char id[MFR_BOOT_ID_MAX])
{
	sd_id128_t b;

	if (sd_id128_from_string(text, &b) < 0)
		return text;
	return sd_id128_to_uuid_string(b, id);
}
