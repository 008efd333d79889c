# SPDX-License-Identifier: GPL-2.0-or-later
# Boot 6: /var/lib/mfrd (a 64 MiB file system of its own) nearly full at
# the first error.  The commit of the page fails for room: mfrd gives the
# store its reserve back and the page is in the file all the same; mfrd
# goes on (same process), says so, and a restart on the still-full disk
# is READY at once.  The disk stays full into boot 7.

full_premise() {
	findmnt -n -o SOURCE,FSTYPE /var/lib/mfrd && [ -e /var/lib/mfrd/mfrd-reserve ]
}
check "premise: /var/lib/mfrd is its own file system, mfrd's reserve in it" full_premise
full_pid=$(unit_prop mfrd MainPID)
# The WAL emptied, then nothing left: the next commit needs new room.
check "the WAL checkpointed and truncated" sql "PRAGMA wal_checkpoint(TRUNCATE)"
dd if=/dev/zero of=/var/lib/mfrd/e2e-filler bs=1M status=none 2>/dev/null
full_now() { [ "$(df --output=avail -B1 /var/lib/mfrd | tail -1)" -lt 65536 ]; }
check "premise: /var/lib/mfrd is full ($(df --output=avail -B1 /var/lib/mfrd | tail -1) bytes left)" full_now
full_dir=$(mktemp -d)
"$BIN/memfd_script" guest-ram-full 1 poison:9 "ready:$full_dir/ready" "wait:$full_dir/stop" close \
	>"$SHARE/logs/full-vm.out" 2>&1 &
full_wl=$!
wait_file "$full_dir/ready" 120
read -r _ _ full_ino <"$full_dir/ready"
full_recorded() {
	[ "$(sql "SELECT count(*) FROM poisoned_pages WHERE boot_id = '$(boot_id)'
		AND inode = $full_ino AND memfd_name = 'guest-ram-full'")" = 1 ]
}
check "the page poisoned on the full disk is recorded, in the store file" wait_until 60 full_recorded
check "... mfrd is the same process (pid $full_pid), never restarted" bash -c \
	"[ \"\$(systemctl show -p MainPID --value mfrd)\" = $full_pid ] && [ \"\$(systemctl show -p NRestarts --value mfrd)\" = 0 ]"
check "... the journal says the disk is full and the reserve was used" bash -c \
	"journalctl -b -u mfrd -o cat | grep -q 'is FULL .*released its reserve'"
check "... metrics: mfrd_store_recovered 1, mfrd_store_in_memory 0" wait_until 30 bash -c \
	"grep -qx 'mfrd_store_recovered 1' '$METRICS' && grep -qx 'mfrd_store_in_memory 0' '$METRICS'"
full_restart() {
	local t0 rc=0
	t0=$(monotonic_usec)
	timeout 120 systemctl restart mfrd || rc=$?
	echo "systemctl restart mfrd: exit $rc after $((($(monotonic_usec) - t0) / 1000)) ms"
	[ "$rc" = 0 ] && [ $(($(monotonic_usec) - t0)) -lt 25000000 ]
}
check "a restart on the still-full disk is READY within 25 s" full_restart
check "... the page still recorded" full_recorded
touch "$full_dir/stop"
wait "$full_wl"
rm -rf "$full_dir"
