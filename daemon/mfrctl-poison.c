// SPDX-License-Identifier: GPL-2.0-or-later
/* mfrctl poison list: poisoned 4 KiB pages of kept hugepages, by pfn. */
#include "mfrctl.h"

const struct column poison_cols[] = {
	COLUMN("PFN", true, MFR_A_POISON_PFN, "page frame number of the 4 KiB page"),
	COLUMN("HEAD-PFN", true, MFR_A_POISON_HEAD_PFN,
	       "page frame number of its hugepage"),
	COLUMN("FOLIO", true, MFR_A_POISON_FOLIO_SIZE, "size of that hugepage"),
	COLUMN("INODE", true, MFR_A_POISON_INODE, "inode of the memfd"),
	COLUMN("OFFSET", true, MFR_A_POISON_OFFSET, "offset in the memfd"),
	COLUMN("STATE", false, MFR_A_POISON_STATE,
	       "kept, pending, offlined or fallback"),
	COLUMN("CONSUMED", true, MFR_A_POISON_TIMES_CONSUMED,
	       "times a task was sent SIGBUS for it"),
};
const size_t poison_ncols = ARRAY_SIZE(poison_cols);

int poison_list_run(struct mfrctl *ctl)
{
	return list_records(ctl, MFR_CMD_POISON_GET, poison_cols,
			    ARRAY_SIZE(poison_cols));
}
