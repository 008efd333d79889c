// SPDX-License-Identifier: GPL-2.0-or-later
/* mfrd's runtime directory (mfrd-runtime-dir.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mfrd-runtime-dir.h"

#define RUNTIME_DIR	"/run/mfrd"

char *mfrd_runtime_dir(void)
{
	const char *dir = getenv("RUNTIME_DIRECTORY");
	char *d;

	/* systemd may list several, separated by ':'; ours is the first. */
	if (!dir || !*dir)
		dir = RUNTIME_DIR;
	d = strndup(dir, strcspn(dir, ":"));
	if (!d)
		abort();
	return d;
}

char *mfrd_runtime_path(const char *name)
{
	char *dir = mfrd_runtime_dir(), *path;

	/* By hand, without systemd's RuntimeDirectory=. */
	mkdir(dir, 0700);
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		abort();
	free(dir);
	return path;
}
