/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _MFR_OFFLINE_H
#define _MFR_OFFLINE_H

struct folio;

void mfr_offline_folio_released(struct folio *folio);
void mfr_offline_folio_offlined(unsigned long pfn, unsigned int order,
				unsigned long nr_poisoned);

#endif /* _MFR_OFFLINE_H */
