// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Shared bits of the unit tests of mfrd's pieces: check.h's TAP-style
 * checks, a scratch directory removed at exit, and file helpers.
 */
#ifndef MFR_UNIT_H
#define MFR_UNIT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "check.h"

/* A one-line want is shown in the TAP line, a longer one only if wrong. */
#define CHECK_STR(got, want, what)					\
	do {								\
		const char *g_ = (got), *w_ = (want);			\
		bool ok_ = g_ && !strcmp(g_, w_);			\
		if (strchr(w_, '\n'))					\
			CHECK(ok_, "%s", what);				\
		else							\
			CHECK(ok_, "%s: \"%s\"", what, w_);		\
		if (!ok_)						\
			printf("#   want \"%s\"\n#   got  \"%s\"\n", w_,	\
			       g_ ? g_ : "(null)");			\
	} while (0)

static char unit_dir[] = "/tmp/mfr-unit-XXXXXX";

/*
 * Root (CI) ignores file modes: without CAP_DAC_OVERRIDE and
 * CAP_DAC_READ_SEARCH, a read-only directory is one for this process too.
 */
static inline void unit_dac_override(bool on)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct c[2];
	unsigned int bits = 1u << CAP_DAC_OVERRIDE | 1u << CAP_DAC_READ_SEARCH;

	if (syscall(SYS_capget, &h, c))
		return;
	if (on)
		c[0].effective |= bits & c[0].permitted;
	else
		c[0].effective &= ~bits;
	syscall(SYS_capset, &h, c);
}

static void unit_cleanup(void)
{
	char cmd[64];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", unit_dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", unit_dir);
}

static inline void unit_init(void)
{
	if (!mkdtemp(unit_dir)) {
		perror("mkdtemp");
		exit(2);
	}
	atexit(unit_cleanup);
}

/* unit_dir/NAME (a path in a static buffer, overwritten by the next call) */
__attribute__((format(printf, 1, 2)))
static inline const char *unit_path(const char *fmt, ...)
{
	static char path[4096];
	char name[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", unit_dir, name);
	return path;
}

/* Write len bytes of content to path (len -1: a C string). */
static inline void unit_write(const char *path, const char *content,
			      long len)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(content, 1, len < 0 ? strlen(content) : (size_t)len,
			 f) != (len < 0 ? strlen(content) : (size_t)len) ||
	    fclose(f)) {
		perror(path);
		exit(2);
	}
}

/* The whole file, malloc()ed, or NULL. */
static inline char *unit_read(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f)
		return NULL;
	n = getdelim(&buf, &cap, '\0', f);
	fclose(f);
	if (n < 0) {
		free(buf);
		return strdup("");
	}
	return buf;
}

#endif
