// SPDX-License-Identifier: GPL-2.0-or-later
/* Do not edit directly, auto-generated from module/mfr.yaml */
/* by scripts/ynl-regen.py: "make ynl-regen". */

#ifndef MFR_SPEC_GEN_H
#define MFR_SPEC_GEN_H

#include <linux/mfr.h>

/* The attribute sets, indexes of mfr_attr_sets[]. */
enum mfr_set_id {
	MFR_SET_STATUS,
	MFR_SET_RULE,
	MFR_SET_RULE_SET,
	MFR_SET_MEMFD,
	MFR_SET_POISON,
	MFR_SET_COUNT,
};

/* Highest attribute type of any set: parse tables have one more entry. */
#define MFR_SPEC_MAX2(a, b)	((int)(a) > (int)(b) ? (int)(a) : (int)(b))
#define MFR_SPEC_MAX_ATTR	MFR_SPEC_MAX2(MFR_SPEC_MAX2(MFR_SPEC_MAX2(MFR_SPEC_MAX2(MFR_A_STATUS_MAX, MFR_A_RULE_MAX), MFR_A_RULE_SET_MAX), MFR_A_MEMFD_MAX), MFR_A_POISON_MAX)

extern const struct mfr_enum mfr_policy_enum;
extern const struct mfr_enum mfr_memfd_state_enum;
extern const struct mfr_enum mfr_page_state_enum;
extern const struct mfr_enum mfr_signal_code_enum;

#endif /* MFR_SPEC_GEN_H */
