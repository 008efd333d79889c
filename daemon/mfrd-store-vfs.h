// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The SQLite VFS mfrd and mfrctl open their stores through: SQLite's own
 * ("unix"), but for the WAL index, whose blocks are allocated before
 * SQLite maps them, so that a full disk is an error and never a SIGBUS.
 */
#ifndef MFRD_STORE_VFS_H
#define MFRD_STORE_VFS_H

#define MFRD_STORE_VFS	"mfrd-unix"

/*
 * Registers MFRD_STORE_VFS as the process's default VFS, once; later
 * calls return what the first did.  SQLITE_OK, or SQLite's error code.
 */
int mfrd_store_vfs_init(void);

#endif
