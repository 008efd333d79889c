# SPDX-License-Identifier: GPL-2.0-or-later
# The last of boot 3: how boot 4 starts.  The store comes from a newer
# mfrd (a downgrade): schema version 99.  mfrd is stopped first, so that
# the file is closed and checkpointed, and its checksum is kept: nothing
# may write to it in boot 4 until the operator puts the schema back.

check "systemctl stop mfrd" systemctl stop mfrd
check "PRAGMA user_version = 99 (a store of a newer mfrd)" sql "PRAGMA user_version = 99"
check "the store read for the next boot (snapshot before-boot4)" store_snapshot before-boot4
sha256sum "$DB" >"$STATE/before-boot4.sha256"
check "premise: $(wc -l <"$STATE/before-boot4.pfns") pfns recorded before boot 4, no WAL left" \
	bash -c "[ -s $STATE/before-boot4.pfns ] && [ ! -s $DB-wal ]"
