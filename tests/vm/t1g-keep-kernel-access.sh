# SPDX-License-Identifier: GPL-2.0-or-later
# Keep UE mapped, one 1G page with one poisoned 4 KiB page (MADV_HWPOISON):
# Kernel paths that read or pin user memory (GUP: /proc/PID/mem,
# process_vm_readv/writev, ptrace, vmsplice, O_DIRECT, io_uring), pread,
# MAP_PRIVATE and unaligned punch.
. ./lib.sh
kept_helper 1G kept_access
finish
