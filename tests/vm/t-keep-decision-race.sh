# SPDX-License-Identifier: GPL-2.0-or-later
# The keep decision races new mappings: for 60 s (256 rounds at most: each
# takes a 2 MiB block for good), fresh kept 2 MiB memfds
# are poisoned (MADV_HWPOISON) while other threads fault them in through
# new mappings and install them with UFFDIO_CONTINUE; no healthy word
# raises SIGBUS and no UFFDIO_CONTINUE fails for a kept hugepage.
. ./lib.sh
before=$(./status-value folios-offlined)
check "kept_fault_race 60" "$MFR_ROOT/build/helpers/kept_fault_race" 60
check "nothing kept or pending afterwards" ./expect-status memfds-kept=0 raw-pages-kept=0 folios-pending=0
check "every round's hugepage was offlined ($before before)" \
	test "$(./status-value folios-offlined)" -gt "$before"
check "pool counters agree" pool_consistent
finish
