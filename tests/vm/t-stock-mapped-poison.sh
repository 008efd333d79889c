# SPDX-License-Identifier: GPL-2.0-or-later
# Without a policy module, a poisoned HugeTLB folio that memory_failure()
# could not unmap (its i_mmap_rwsem held by a test module, so the trylock
# fails: the moment during every error made to last) gets the answers of a
# kernel without the series: GUP takes its pages, a write through a private
# mapping copies it.  The series refuses those for kept hugepages only.
. ./lib.sh
hold_ko=$MFR_ROOT/tests/kmod/mfr_immap_hold.ko
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
rmmod mfr
check "no policy module is loaded" test ! -d /sys/module/mfr
check "the i_mmap_rwsem holder loads" insmod "$hold_ko"
check "a poisoned hugepage left mapped gets stock's answers" \
	"$MFR_ROOT/build/helpers/stock_mapped_poison" /sys/kernel/debug/mfr_immap_hold
rmmod mfr_immap_hold
insmod "$MFR_ROOT/module/mfr.ko"
finish
