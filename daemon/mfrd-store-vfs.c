// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * SQLite's "unix" VFS, but for one thing: the blocks of a WAL index region
 * (the "-shm" file SQLite maps shared) are allocated before SQLite maps it.
 *
 * SQLite grows the -shm file by writing one byte at the end of each 4 KiB
 * page.  That allocates whole pages only where the file system's blocks
 * are 4 KiB; with smaller ones (ext4 made below 512 MiB has 1 KiB blocks)
 * the rest of each page stays a hole, and when the disk is full SQLite's
 * first store into a hole through the mapping is a SIGBUS.  mfrd was
 * killed by it at every start on a full /var/lib/mfrd (issue 39), before
 * it offlined this boot's recorded pages.  Allocated first, a full disk
 * is SQLITE_FULL on open, which mfrd handles: its reserve, a stand-in.
 *
 * Every other method is SQLite's own: the VFS is a copy of "unix" with its
 * own xOpen, and each file wraps the one "unix" opens.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sqlite3.h>

#include "mfrd-store-vfs.h"

struct vfs_file {
	sqlite3_file base;
	const char *db_name;	/* a main database's name; SQLite keeps it */
	sqlite3_file *real;	/* what "unix" opened, right after this */
};

static sqlite3_vfs *unix_vfs;

#define REAL(f)		(((struct vfs_file *)(f))->real)
#define REAL_IO(f)	(REAL(f)->pMethods)

static int vfs_close(sqlite3_file *f)
{
	return REAL_IO(f)->xClose(REAL(f));
}

static int vfs_read(sqlite3_file *f, void *buf, int n, sqlite3_int64 off)
{
	return REAL_IO(f)->xRead(REAL(f), buf, n, off);
}

static int vfs_write(sqlite3_file *f, const void *buf, int n,
		     sqlite3_int64 off)
{
	return REAL_IO(f)->xWrite(REAL(f), buf, n, off);
}

static int vfs_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	return REAL_IO(f)->xTruncate(REAL(f), size);
}

static int vfs_sync(sqlite3_file *f, int flags)
{
	return REAL_IO(f)->xSync(REAL(f), flags);
}

static int vfs_file_size(sqlite3_file *f, sqlite3_int64 *size)
{
	return REAL_IO(f)->xFileSize(REAL(f), size);
}

static int vfs_lock(sqlite3_file *f, int lock)
{
	return REAL_IO(f)->xLock(REAL(f), lock);
}

static int vfs_unlock(sqlite3_file *f, int lock)
{
	return REAL_IO(f)->xUnlock(REAL(f), lock);
}

static int vfs_check_reserved_lock(sqlite3_file *f, int *out)
{
	return REAL_IO(f)->xCheckReservedLock(REAL(f), out);
}

static int vfs_file_control(sqlite3_file *f, int op, void *arg)
{
	return REAL_IO(f)->xFileControl(REAL(f), op, arg);
}

static int vfs_sector_size(sqlite3_file *f)
{
	return REAL_IO(f)->xSectorSize(REAL(f));
}

static int vfs_device_characteristics(sqlite3_file *f)
{
	return REAL_IO(f)->xDeviceCharacteristics(REAL(f));
}

/*
 * The descriptor SQLite opened the -shm file with, writable: SQLite keeps
 * it to itself.  Ours must not be a new one, since closing any descriptor
 * of a file drops all of the process's POSIX locks on it, SQLite's too.
 */
static int shm_fd(const char *shm_path)
{
	struct stat want, st;
	struct dirent *e;
	int fd = -1;
	DIR *dir;

	if (stat(shm_path, &want))
		return -1;
	dir = opendir("/proc/self/fd");
	if (!dir)
		return -1;
	while (fd < 0 && (e = readdir(dir))) {
		char *end;
		long n = strtol(e->d_name, &end, 10);
		int fl;

		if (*end || end == e->d_name || n == dirfd(dir))
			continue;
		if (fstat((int)n, &st) || st.st_dev != want.st_dev ||
		    st.st_ino != want.st_ino)
			continue;
		fl = fcntl((int)n, F_GETFL);
		if (fl >= 0 && (fl & O_ACCMODE) != O_RDONLY)
			fd = (int)n;
	}
	closedir(dir);
	if (fd < 0)
		errno = ENOENT;
	return fd;
}

static int allocate_shm(struct vfs_file *f, sqlite3_int64 size)
{
	char *path;
	int fd, err;

	if (!f->db_name)
		return SQLITE_OK;
	path = sqlite3_mprintf("%s-shm", f->db_name);
	if (!path)
		return SQLITE_NOMEM;
	fd = shm_fd(path);
	sqlite3_free(path);
	/* None writable (SQLite opened it read-only; no /proc): its own way. */
	if (fd < 0)
		return SQLITE_OK;
	err = posix_fallocate(fd, 0, size);
	if (err == ENOSPC || err == EDQUOT)
		return SQLITE_FULL;
	return err ? SQLITE_IOERR_SHMSIZE : SQLITE_OK;
}

static int vfs_shm_map(sqlite3_file *file, int region, int region_size,
		       int extend, void volatile **pp)
{
	struct vfs_file *f = (struct vfs_file *)file;
	const sqlite3_io_methods *io = f->real->pMethods;
	int rc;

	/* SQLite opens the file and maps the region if it is already there. */
	rc = io->xShmMap(f->real, region, region_size, 0, pp);
	if (rc != SQLITE_OK || *pp || !extend)
		return rc;
	rc = allocate_shm(f, (sqlite3_int64)(region + 1) * region_size);
	if (rc != SQLITE_OK)
		return rc;
	/* Now as long as the region, it has nothing left to write. */
	return io->xShmMap(f->real, region, region_size, 1, pp);
}

static int vfs_shm_lock(sqlite3_file *f, int offset, int n, int flags)
{
	return REAL_IO(f)->xShmLock(REAL(f), offset, n, flags);
}

static void vfs_shm_barrier(sqlite3_file *f)
{
	REAL_IO(f)->xShmBarrier(REAL(f));
}

static int vfs_shm_unmap(sqlite3_file *f, int delete_flag)
{
	return REAL_IO(f)->xShmUnmap(REAL(f), delete_flag);
}

static int vfs_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp)
{
	return REAL_IO(f)->xFetch(REAL(f), off, n, pp);
}

static int vfs_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	return REAL_IO(f)->xUnfetch(REAL(f), off, p);
}

static const sqlite3_io_methods vfs_io = {
	.iVersion = 3,
	.xClose = vfs_close,
	.xRead = vfs_read,
	.xWrite = vfs_write,
	.xTruncate = vfs_truncate,
	.xSync = vfs_sync,
	.xFileSize = vfs_file_size,
	.xLock = vfs_lock,
	.xUnlock = vfs_unlock,
	.xCheckReservedLock = vfs_check_reserved_lock,
	.xFileControl = vfs_file_control,
	.xSectorSize = vfs_sector_size,
	.xDeviceCharacteristics = vfs_device_characteristics,
	.xShmMap = vfs_shm_map,
	.xShmLock = vfs_shm_lock,
	.xShmBarrier = vfs_shm_barrier,
	.xShmUnmap = vfs_shm_unmap,
	.xFetch = vfs_fetch,
	.xUnfetch = vfs_unfetch,
};

static int vfs_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file,
		    int flags, int *out_flags)
{
	struct vfs_file *f = (struct vfs_file *)file;
	int rc;

	(void)vfs;
	f->db_name = flags & SQLITE_OPEN_MAIN_DB ? name : NULL;
	f->real = (sqlite3_file *)(f + 1);
	rc = unix_vfs->xOpen(unix_vfs, name, f->real, flags, out_flags);
	/* SQLite closes a file whose methods are set, even on an error. */
	f->base.pMethods = f->real->pMethods ? &vfs_io : NULL;
	return rc;
}

int mfrd_store_vfs_init(void)
{
	static sqlite3_vfs vfs;
	static int rc = -1;

	if (rc >= 0)
		return rc;
	rc = sqlite3_initialize();
	unix_vfs = rc == SQLITE_OK ? sqlite3_vfs_find("unix") : NULL;
	if (!unix_vfs) {
		rc = rc == SQLITE_OK ? SQLITE_ERROR : rc;
		return rc;
	}
	vfs = *unix_vfs;
	vfs.zName = MFRD_STORE_VFS;
	vfs.pNext = NULL;
	/* Room for the wrapped file right after ours (pointers: aligned). */
	vfs.szOsFile = (int)sizeof(struct vfs_file) + unix_vfs->szOsFile;
	vfs.xOpen = vfs_open;
	rc = sqlite3_vfs_register(&vfs, 1);
	return rc;
}
