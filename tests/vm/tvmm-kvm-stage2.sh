# SPDX-License-Identifier: GPL-2.0-or-later
# KVM's stage 2 over a kept hugepage (tests/helpers/kvm_kept.c, a guest of
# its own on nested SVM): once a 4 KiB page P is poisoned, the aligned
# 2 MiB that holds it is mapped by 4 KiB entries without P, the rest of a
# 1 GiB page by 2 MiB entries, another hugepage whole; every guest read of
# P is a stage-2 fault that KVM turns into SIGBUS BUS_MCEERR_AR at P's exact
# address, lsb 12, and P is never mapped.  Judged by KVM's per-VM stage-2
# page counts, not only by the signal.
. ./lib.sh
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
check "kvm_amd loads, nested paging on" modprobe kvm_amd
check "a 2 MiB kept guest RAM" "$MFR_ROOT/build/helpers/kvm_kept" 2M
check "a 1 GiB page for the next one" one_free_1g_page
check "a 1 GiB kept guest RAM" "$MFR_ROOT/build/helpers/kvm_kept" 1G
finish
