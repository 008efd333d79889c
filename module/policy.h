/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _MFR_POLICY_H
#define _MFR_POLICY_H

struct address_space;
struct file;
struct folio;
struct page;

int mfr_policy_memfd_created(struct file *file, unsigned int flags);
void mfr_policy_mapping_evicted(struct address_space *mapping);
void mfr_policy_page_poisoned(struct folio *folio, struct page *page);

#endif /* _MFR_POLICY_H */
