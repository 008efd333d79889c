// SPDX-License-Identifier: GPL-2.0-or-later
/* mfrctl poison list: poisoned 4 KiB pages of kept hugepages, by pfn. */
#include "mfrctl.h"

static const struct column poison_cols[] = {
	COLUMN("PFN", true, MFR_A_POISON_PFN),
	COLUMN("HEAD-PFN", true, MFR_A_POISON_HEAD_PFN),
	COLUMN("FOLIO", true, MFR_A_POISON_FOLIO_SIZE),
	COLUMN("INODE", true, MFR_A_POISON_INODE),
	COLUMN("OFFSET", true, MFR_A_POISON_OFFSET),
	COLUMN("STATE", false, MFR_A_POISON_STATE),
	COLUMN("CONSUMED", true, MFR_A_POISON_TIMES_CONSUMED),
};

int poison_list_run(struct mfrctl *ctl)
{
	return list_records(ctl, MFR_CMD_POISON_GET, poison_cols,
			    ARRAY_SIZE(poison_cols));
}
