/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _MFR_POLICY_H
#define _MFR_POLICY_H

#include <linux/types.h>

struct address_space;
struct file;
struct folio;
struct page;
struct task_struct;

int mfr_policy_init(void);
void mfr_policy_exit(void);
void mfr_policy_go_live(void);
int mfr_policy_memfd_created(struct file *file, unsigned int flags);
void mfr_policy_mapping_evicted(struct address_space *mapping);
bool mfr_policy_page_poisoned(struct folio *folio, struct page *page);
void mfr_policy_page_untracked(struct folio *folio, struct page *page);
void mfr_policy_page_signalled(unsigned long pfn, struct task_struct *tsk,
			       bool action_required);

#endif /* _MFR_POLICY_H */
