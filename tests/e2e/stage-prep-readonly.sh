# SPDX-License-Identifier: GPL-2.0-or-later
# The last of boot 4: how boot 5 starts.  mfrd gets /var/lib/mfrd
# read-only (a drop-in with ReadOnlyPaths=, as a read-only /var would
# leave it): stopped first, so that the file is closed and checkpointed;
# its checksum and the directory's files are kept.

ro_dropin=/etc/systemd/system/mfrd.service.d/e2e-readonly.conf
mkdir -p "${ro_dropin%/*}"
cat >"$ro_dropin" <<'UNIT'
# e2e (boot 5): mfrd's state directory read-only, as on a read-only /var.
[Service]
ReadOnlyPaths=/var/lib/mfrd
UNIT
check "systemctl stop mfrd" systemctl stop mfrd
check "the store read for the next boot (snapshot before-boot5)" store_snapshot before-boot5
sha256sum "$DB" >"$STATE/before-boot5.sha256"
ls -A /var/lib/mfrd >"$STATE/before-boot5.files"
check "premise: $(wc -l <"$STATE/before-boot5.pfns") pfns recorded before boot 5, no WAL left" \
	bash -c "[ -s $STATE/before-boot5.pfns ] && [ ! -s $DB-wal ]"
