# SPDX-License-Identifier: GPL-2.0-or-later
# Durability: 1000 injected errors across 4 guest-ram memfds, mfrd killed
# with SIGKILL in the middle; systemd restarts it and the store ends up
# with exactly the module's records (pfn, inode, offset, state), one row
# per pfn, and one page-poisoned event per pfn.  All of it on a loaded
# guest: a busy loop per CPU, at mfrd's own priority, runs beside the
# whole stage (a second VM's vCPUs on a host would be the same).

sync_dir=$(mktemp -d)
hogs=()
for _ in $(seq "$(nproc)"); do
	bash -c 'while :; do :; done' &
	hogs+=($!)
done
hog_t0=$SECONDS
restarts_before=$(unit_prop mfrd NRestarts)
storm_start=$(date '+%Y-%m-%d %H:%M:%S')
kept_now() {
	mfrctl -j status | python3 -c 'import json,sys; print(json.load(sys.stdin)["raw_pages_kept"])'
}
kept_before=$(kept_now)
pids=()
for m in 0 1 2 3; do
	steps=()
	# 250 distinct pages of 4 hugepages (2048 pages), spread over all four.
	for i in $(seq 0 249); do steps+=("poison:$((i * 8 + m))"); done
	"$BIN/memfd_script" "guest-ram-storm$m" 4 "${steps[@]}" "ready:$sync_dir/ready$m" \
		"wait:$sync_dir/stop" close >"$SHARE/logs/storm$m.out" 2>&1 &
	pids+=($!)
done

# Kill it when about a third of the errors are in.
wait_until 1200 eval '[ "$(kept_now)" -ge $((kept_before + 300)) ]'
echo "E2E: # killing mfrd with $(kept_now) pages kept"
check "kill -9 mfrd during the storm" systemctl kill -s KILL --kill-who=main mfrd

restarted() {
	systemctl is-active -q mfrd && [ "$(unit_prop mfrd NRestarts)" -gt "$restarts_before" ]
}
all_ready() { for m in 0 1 2 3; do [ -e "$sync_dir/ready$m" ] || return 1; done; }
check "systemd restarted mfrd (Restart=always)" wait_until 120 restarted
check "1000 errors injected" wait_until 1800 all_ready
echo "E2E: # $(kept_now) pages kept, NRestarts $(unit_prop mfrd NRestarts)"

module_count() { module_poison | wc -l; }
one_row_per_pfn() {
	[ "$(sql "SELECT count(*) - count(DISTINCT pfn) FROM poisoned_pages WHERE boot_id = '$(boot_id)'")" = 0 ]
}
one_event_per_pfn() {
	local dup
	dup=$(sql "SELECT pfn, count(*) FROM events WHERE boot_id = '$(boot_id)'
		AND kind = 'page-poisoned' GROUP BY pfn HAVING count(*) > 1")
	echo "$dup" | head
	[ -z "$dup" ]
}
check "the module reports 1001 records (1000 + the workload's)" \
	bash -c "[ \$(mfrctl -j poison list | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))') = $((1000 + 1)) ]"
check "store == module's poison-get dump (pfn, inode, offset, state)" \
	wait_until 120 store_matches_module
check "store: one row per pfn" one_row_per_pfn
check "store: one page-poisoned event per pfn" one_event_per_pfn

touch "$sync_dir/stop"
ok=1
for i in 0 1 2 3; do
	wait "${pids[$i]}" || ok=0
	[ "$(grep -c 'code=AR lsb=12 exact=1' "$SHARE/logs/storm$i.out")" = 250 ] || ok=0
done
# The kill is the only restart: no watchdog timeout under the load.
restarted_once() {
	! journalctl -b -u mfrd --since "$storm_start" -o cat | grep -i 'watchdog timeout' &&
		[ "$(unit_prop mfrd NRestarts)" = $((restarts_before + 1)) ]
}
check "mfrd kept its watchdog fed through the storm: restarted once (the kill)" restarted_once
check "each storm memfd: 250 x 4 KiB SIGBUS, exit 0" [ "$ok" = 1 ]
check "after the release: store == module again (offlined)" wait_until 180 store_matches_module
# The load was real: the hogs got a good share of the CPUs throughout.
hog_cpu() {
	local ticks=0 pid
	for pid in "${hogs[@]}"; do
		ticks=$((ticks + $(awk '{ print $14 + $15 }' "/proc/$pid/stat")))
	done
	echo $((ticks / $(getconf CLK_TCK)))
}
hog_loaded() {
	local cpu wall=$((SECONDS - hog_t0))
	cpu=$(hog_cpu)
	echo "$(nproc) busy loops: $cpu s of CPU in $wall s on $(nproc) CPUs"
	[ "$wall" -gt 0 ] && [ $((cpu * 100 / (wall * $(nproc)))) -ge 25 ]
}
check "the guest was loaded: the busy loops had 25 % of the CPUs or more" hog_loaded
kill "${hogs[@]}"
wait "${hogs[@]}" 2>/dev/null
rm -rf "$sync_dir"
