// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Replacing a file atomically and durably: see mfrd-atomic-file.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mfrd-atomic-file.h"

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Make the rename itself durable. */
static int sync_dir(const char *path)
{
	char *copy = strdup(path);
	int fd, r = 0;

	if (!copy)
		return -ENOMEM;
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(copy);
	if (fd < 0)
		return -errno;
	if (fsync(fd) < 0)
		r = -errno;
	close(fd);
	return r;
}

int mfrd_atomic_write(const char *path, const void *buf, size_t len,
		      mode_t mode)
{
	char *tmp;
	int fd, r;

	if (asprintf(&tmp, "%s.tmp", path) < 0)
		return -ENOMEM;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		  mode);
	if (fd < 0) {
		r = -errno;
		free(tmp);
		return r;
	}
	/* The mode whatever the umask: readers may run as another user. */
	r = fchmod(fd, mode) < 0 ? -errno : write_all(fd, buf, len);
	if (!r && fsync(fd) < 0)
		r = -errno;
	if (close(fd) < 0 && !r)
		r = -errno;
	if (!r && rename(tmp, path) < 0)
		r = -errno;
	if (r)
		unlink(tmp);
	else
		r = sync_dir(path);
	free(tmp);
	return r;
}
