/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _MFR_HOOKS_H
#define _MFR_HOOKS_H

int mfr_hooks_register(void);
void mfr_hooks_unregister(void);

#endif /* _MFR_HOOKS_H */
