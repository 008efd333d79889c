// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * mfrd-atomic-file.c, the one writer of mfrd's replaced files (metrics,
 * the boot offlining marker, a reload's outcome): a new inode renamed
 * over the old file, the mode asked for whatever the umask, no PATH.tmp
 * left, the old file kept when writing fails, and never a write through
 * a symlink planted at PATH.tmp (the marker and the reload outcome used
 * to be written with fopen(), which follows one).
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "mfrd-atomic-file.h"
#include "unit.h"

static ino_t inode_of(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_ino;
}

int main(void)
{
	char path[4096], tmp[4200], victim[4096], *text;
	struct stat st;
	ino_t before;

	unit_init();
	snprintf(path, sizeof(path), "%s", unit_path("marker"));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	snprintf(victim, sizeof(victim), "%s", unit_path("victim"));

	unit_write(path, "old\n", -1);
	unit_write(tmp, "stale\n", -1);
	before = inode_of(path);
	umask(077);
	CHECK(mfrd_atomic_write(path, "new\n", 4, 0644) == 0, "write");
	text = unit_read(path);
	CHECK_STR(text, "new\n", "the new content");
	free(text);
	CHECK(inode_of(path) != before, "a new inode: renamed, not rewritten");
	CHECK(access(tmp, F_OK) == -1 && errno == ENOENT, "no PATH.tmp left");
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644,
	      "mode 0644 under umask 077");

	unit_write(victim, "precious\n", -1);
	CHECK(symlink(victim, tmp) == 0, "a symlink planted at PATH.tmp");
	CHECK(mfrd_atomic_write(path, "evil\n", 5, 0644) == -ELOOP,
	      "refused: -ELOOP");
	text = unit_read(victim);
	CHECK_STR(text, "precious\n", "the symlink's target is untouched");
	free(text);
	text = unit_read(path);
	CHECK_STR(text, "new\n", "the file is as it was");
	free(text);
	unlink(tmp);

	CHECK(mkdir(tmp, 0755) == 0, "PATH.tmp a directory");
	CHECK(mfrd_atomic_write(path, "x", 1, 0644) == -EISDIR,
	      "unwritable PATH.tmp: -EISDIR, the file kept");
	rmdir(tmp);
	CHECK(mfrd_atomic_write(unit_path("none/marker"), "x", 1, 0644) ==
	      -ENOENT, "a missing directory: -ENOENT");
	return check_exit_status();
}
