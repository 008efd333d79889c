/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _MFR_RATELIMIT_H
#define _MFR_RATELIMIT_H

#include <linux/types.h>
#include <linux/uidgid.h>

void mfr_ratelimit_init(void);
/*
 * May @uid cause one more notification?  Counts it in events-suppressed
 * if not.  Any context but NMI.
 */
bool mfr_ratelimit_allow(kuid_t uid);

#endif /* _MFR_RATELIMIT_H */
