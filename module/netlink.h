/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef _MFR_NETLINK_H
#define _MFR_NETLINK_H

int mfr_netlink_init(void);
void mfr_netlink_exit(void);

#endif /* _MFR_NETLINK_H */
