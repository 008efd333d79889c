// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The one way mfrd replaces a file (metrics, the boot offlining marker,
 * a reload's outcome): readers see the old content or the new, never a
 * part, and the new one survives a crash once this returned.
 */
#ifndef MFRD_ATOMIC_FILE_H
#define MFRD_ATOMIC_FILE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Write buf to PATH.tmp (never through a symlink there), with mode,
 * fsync it, rename it over path and fsync the directory.  Returns 0 or a
 * negative errno; on failure path is left as it was and PATH.tmp is
 * removed.
 */
int mfrd_atomic_write(const char *path, const void *buf, size_t len,
		      mode_t mode);

#endif /* MFRD_ATOMIC_FILE_H */
