# SPDX-License-Identifier: GPL-2.0-or-later
# Keep UE mapped, one 2M page with one poisoned 4 KiB page (MADV_HWPOISON):
# userfaultfd MINOR faults resolved with UFFDIO_CONTINUE, as a postcopy
# destination does, and UFFDIO_POISON.
. ./lib.sh
kept_helper 2M kept_uffd
finish
