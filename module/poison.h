/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _MFR_POISON_H
#define _MFR_POISON_H

#include <linux/types.h>

struct folio;
struct page;
struct sk_buff;
struct task_struct;
struct mfr_event;

int mfr_poison_add(struct folio *folio, struct page *page, unsigned long ino,
		   u32 state);
unsigned long mfr_poison_folio_ino(unsigned long head_pfn, unsigned long nr);
unsigned long mfr_poison_fall_back(unsigned long head_pfn, unsigned long nr);
void mfr_poison_signalled(unsigned long pfn, struct task_struct *tsk,
			  bool action_required);
bool mfr_poison_set_folio_state(unsigned long head_pfn, unsigned long nr,
				u32 state, struct mfr_event *ev,
				struct sk_buff *msg, void *hdr,
				unsigned long *was_kept);
void mfr_poison_flush(void);

#endif /* _MFR_POISON_H */
