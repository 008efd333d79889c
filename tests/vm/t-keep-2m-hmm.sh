# SPDX-License-Identifier: GPL-2.0-or-later
# Keep UE mapped, one 2M page with one poisoned 4 KiB page P (MADV_HWPOISON):
# hmm_range_fault(), through lib/test_hmm.c's dmirror device, reports P as
# an error and the healthy pages at 4 KiB, and a device read that needs P
# fails, as one that does not gets its data.
. ./lib.sh
before=$(./status-value folios-offlined)
check "test_hmm loads (or is loaded)" modprobe test_hmm
dev=/dev/hmm_dmirror0
for _ in $(seq 50); do [ -c "$dev" ] && break; sleep 0.1; done
check "the dmirror device $dev is there" test -c "$dev"
check "kept_hmm" "$MFR_ROOT/build/helpers/kept_hmm" "$dev"
check "status: offlined after close" ./expect-status memfds-kept=0 raw-pages-kept=0 \
	folios-pending=0 folios-offlined=$((before + 1))
# test_hmm stays loaded: its exit (stock 6.12) deletes its devices without
# the last put_device(), which kmemleak reports as a leak in a later test.
finish
