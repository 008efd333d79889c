// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrd's runtime directory: the first of systemd's $RUNTIME_DIRECTORY
 * (RuntimeDirectory=mfrd, kept across restarts), or /run/mfrd without
 * systemd.  It holds a reload's outcome for "mfrd --reload" and, while
 * the store cannot be written, a stand-in of it.
 */
#ifndef MFRD_RUNTIME_DIR_H
#define MFRD_RUNTIME_DIR_H

/* The directory, malloc()ed. */
char *mfrd_runtime_dir(void);

/*
 * NAME in it, malloc()ed.  The directory is made (0700, as the unit's
 * RuntimeDirectoryMode=) if it is missing; if that fails, writing the
 * file says why.
 */
char *mfrd_runtime_path(const char *name);

#endif /* MFRD_RUNTIME_DIR_H */
