// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * memfd_flags EXPECT: flag semantics of MFD_MF_KEEP_UE_MAPPED.
 *   without MFD_HUGETLB: always EINVAL;
 *   with MFD_HUGETLB: EXPECT is "ok" (mfr.ko loaded), "EOPNOTSUPP" (no
 *   module) or "EINVAL" (a kernel without the uAPI patch: bisect-check).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "hwpoison.h"

int main(int argc, char **argv)
{
	int fd;

	if (argc != 2)
		return 2;

	errno = 0;
	fd = memfd_create("flags", MFD_MF_KEEP_UE_MAPPED);
	CHECK(fd < 0 && errno == EINVAL,
	      "MFD_MF_KEEP_UE_MAPPED without MFD_HUGETLB: EINVAL (%s)", strerror(errno));

	errno = 0;
	fd = memfd_create("flags", MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED);
	if (!strcmp(argv[1], "ok"))
		CHECK(fd >= 0, "MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED accepted (%s)",
		      fd < 0 ? strerror(errno) : "fd");
	else if (!strcmp(argv[1], "EINVAL"))
		CHECK(fd < 0 && errno == EINVAL,
		      "MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED without the uAPI patch: EINVAL (%s)",
		      strerror(errno));
	else
		CHECK(fd < 0 && errno == EOPNOTSUPP,
		      "MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED without mfr.ko: EOPNOTSUPP (%s)",
		      strerror(errno));
	if (fd >= 0)
		close(fd);

	fd = memfd_create("flags", MFD_HUGETLB);
	CHECK(fd >= 0, "plain MFD_HUGETLB still works");
	return check_exit_status();
}
