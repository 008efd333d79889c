# SPDX-License-Identifier: GPL-2.0-or-later
# A missing module: mfrd keeps running and says it waits; it comes back
# to work when the module does.

restarts_before=$(unit_prop mfrd NRestarts)
waiting() { systemctl show -p StatusText --value mfrd | tee /dev/stderr | grep -qi waiting; }
rules_back() {
	mfrctl -j rules list | json "any(r['name_glob'] == 'guest-ram*' for r in d)"
}
still_up() { systemctl is-active -q mfrd && [ "$(unit_prop mfrd NRestarts)" = "$restarts_before" ]; }

touch /run/guest-vm.stop
check "the workload unit ends cleanly" wait_until 60 bash -c '! systemctl is-active -q guest-vm'
check "rmmod mfr" rmmod mfr
check "mfrd: StatusText says waiting" wait_until 30 waiting
sleep 10
check "mfrd still active 10 s later, not restarted" still_up
check "modprobe mfr: mfrd pushes the rules again" bash -c "modprobe mfr"
check "... rules back in the module" wait_until 60 rules_back
