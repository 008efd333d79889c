/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _MFR_RULES_H
#define _MFR_RULES_H

#include <linux/types.h>
#include <linux/uidgid.h>

struct cgroup;

/* What the first matching rule says about a new HugeTLB memfd. */
struct mfr_rule_verdict {
	u32 rule_id;		/* 0: no rule matched */
	bool keep;
	u32 budget;
};

struct mfr_rule_verdict mfr_rules_match(const char *name, struct cgroup *cgrp,
					kuid_t uid);
unsigned int mfr_rules_count(void);
void mfr_rules_flush(void);

#endif /* _MFR_RULES_H */
