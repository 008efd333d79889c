# SPDX-License-Identifier: GPL-2.0-or-later
# Protection first: without the module, mfrd does not say READY (units
# ordered after it wait), and STATUS and the metrics say it waits; once
# the module is loaded it pushes the rules and becomes READY.

state() { unit_prop mfrd ActiveState; }
check "stop mfrd and the workload, rmmod mfr" bash -c \
	"systemctl stop guest-vm mfrd && rmmod mfr"
check "systemctl start --no-block mfrd" systemctl start --no-block mfrd
sleep 10
check "10 s later: still activating, not READY" bash -c "[ \"\$(systemctl show -p ActiveState --value mfrd)\" = activating ]"
# Its first STATUS comes once the start has read the store: seconds
# more on a loaded host (boot 2 of one run had none after 10 s).
check "... its status says it waits, unprotected" wait_until 60 bash -c \
	"systemctl show -p StatusText --value mfrd | tee /dev/stderr | grep -q 'waiting for mfr.ko: HugeTLB memfds are not protected'"
check "... and the metrics: mfrd_waiting_for_module 1, mfrd_protected 0" bash -c \
	"grep -qx 'mfrd_waiting_for_module 1' '$METRICS' && grep -qx 'mfrd_protected 0' '$METRICS'"
check "modprobe mfr" modprobe mfr
check "mfrd becomes active (READY) once the rules are in" wait_until 60 bash -c "[ \"\$(systemctl show -p ActiveState --value mfrd)\" = active ]"
check "... mfrd_protected 1" wait_until 30 grep -qx 'mfrd_protected 1' "$METRICS"
