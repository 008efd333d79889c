#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make test-mce: real machine checks, in a boot of their own (a machine
# check taints the kernel and turns lockdep off, so it must not share a
# boot with the main suite).  The guest (tests/mce/guest.sh) asks for an
# injection by writing "ao|ar CPU 0xPHYS" to build/mce/req-*; this side
# sends the matching "mce" command to QEMU's monitor.  Recipes and the
# three settings that make them work (Intel vCPU, broadcast, user-mode
# victim): ../shared/research/tests.md section 2.
#
# Prints one line per check and ends with "N passed, N failed".
set -uo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"
cd "$MFR_ROOT"

dir=$MFR_ROOT/build/mce
rm -rf "$dir"
mkdir -p "$dir"
mon=$dir/monitor.sock

# SRAO: memory scrub, status VAL|UC|EN|MISCV|ADDRV|S + MSCOD 0xc0, mcg
# RIPV|MCIP.  SRAR: data load, adds AR, MCACOD 0x134, mcg RIPV|EIPV|MCIP.
# misc 0x8c: physical address mode, LSB 12.
declare -A status=([ao]=0xbd000000000000c0 [ar]=0xbd80000000000134)
declare -A mcg=([ao]=0x5 [ar]=0x7)
# A bank of its own for each: "mce -b" leaves a (not enabled) record in the
# same bank of every other CPU, and a second error landing on it sets
# OVER, which Linux treats as fatal ("Action required with lost events").
declare -A bank=([ao]=1 [ar]=2)

monitor() { # COMMAND: one HMP command on QEMU's monitor socket
	"$PYTHON" - "$mon" "$1" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
buf = b""
def until_prompt():
    global buf
    while not buf.endswith(b"(qemu) "):
        chunk = s.recv(4096)
        if not chunk:
            break
        buf += chunk
until_prompt()
buf = b""
s.sendall(sys.argv[2].encode() + b"\n")
until_prompt()
# HMP echoes the command with line-editing escapes; anything on the lines
# after the echo is QEMU's answer, which is empty when the mce worked.
lines = buf.decode(errors="replace").replace("\r", "").split("\n")[1:]
answer = "\n".join(l for l in lines if l and l != "(qemu) ").strip()
if answer:
    print("host: monitor: " + answer)
    sys.exit(1)
PY
}

# init_on_free=1: releasing the kept hugepages after a real machine check
# (the poisoned pages gone from the direct map) must not write to them.
# The vCPU is family 6, model 106 (Ice Lake server): QEMU 10 injects a
# broadcast machine check only into an Intel vCPU of family 6 model 14 or
# later, and its "max" reports less under TCG; Linux has no machine-check
# quirk for that model (Skylake-X's would change how kernel copies are
# graded).
VM_MEM=${VM_MEM:-6G} VM_APPEND=${VM_APPEND:-hugepages=64 hugepagesz=1G hugepages=2 init_on_free=1} \
VM_CPUS=2 VM_QEMU_OPTS="-cpu max,vendor=GenuineIntel,family=6,model=106,stepping=6 -monitor unix:$mon,server=on,wait=off" \
	scripts/vm-run.sh "MCE_DIR=$dir MCE_MODES='${MCE_MODES:-ao ar}' $MFR_ROOT/tests/mce/guest.sh" 2>&1 | tee "$dir/log" &
vm=$!

served=0
while kill -0 "$vm" 2>/dev/null; do
	for req in "$dir"/req-ao "$dir"/req-ar; do
		[ -f "$req" ] || continue
		read -r mode cpu phys <"$req"
		cmd="mce -b $cpu ${bank[$mode]} ${status[$mode]} ${mcg[$mode]} $phys 0x8c"
		echo "host: $cmd"
		monitor "$cmd"
		mv "$req" "$req.served"
		served=$((served + 1))
	done
	sleep 0.2
done
wait "$vm"
rc=$?

passed=$(grep -c '^ok - ' "$dir/log")
failed=$(grep -c '^not ok - ' "$dir/log")
modes=(${MCE_MODES:-ao ar})
expected=$(cat "$dir/requests" 2>/dev/null || echo ${#modes[@]})
if [ "$served" != "$expected" ]; then
	echo "not ok - the host served $served injection requests, expected $expected"
	failed=$((failed + 1))
fi
if [ "$rc" != 0 ] && [ "$failed" = 0 ]; then
	echo "not ok - the VM run failed (exit $rc; guest kernel log above)"
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
