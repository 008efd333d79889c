/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _MFR_VERSION_H
#define _MFR_VERSION_H

/* Kept equal to PACKAGE_VERSION in dkms.conf (checked by the tests). */
#define MFR_VERSION "0.1.0"

#endif /* _MFR_VERSION_H */
