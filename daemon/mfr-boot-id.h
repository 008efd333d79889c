// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Boot ids as mfrd's store keeps them: the kernel's random boot id in its
 * UUID form ("6a1f...-...-"), lower case, read and parsed by libsystemd
 * (sd-id128), shared by mfrd and mfrctl.
 */
#ifndef MFR_BOOT_ID_H
#define MFR_BOOT_ID_H

#include <systemd/sd-id128.h>

#define MFR_BOOT_ID_MAX	SD_ID128_UUID_STRING_MAX

/* The running boot's id into id.  0, or a negative errno. */
int mfr_boot_id(char id[MFR_BOOT_ID_MAX]);

/*
 * A boot id an operator gave, in either form (with or without dashes,
 * any case), as the store keeps it, in id; text itself if it is not one
 * (a record salvaged without its boot says "salvaged").
 */
const char *mfr_boot_id_normal(const char *text, char id[MFR_BOOT_ID_MAX]);

#endif /* MFR_BOOT_ID_H */
