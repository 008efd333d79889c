#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Boot the patched kernel under QEMU (TCG) with virtme-ng: the host root is
# the guest root (read-only, 9p), the checkout is writable at the same path.
# In the guest: load module/mfr.ko, run "$@" as root, collect the kernel log.
# Exits with the command's status, or non-zero if the guest kernel log has a
# BUG/WARNING/KASAN/lockdep/RCU-stall/hung-task report (printed).
#
# Environment:
#   KDIR        kernel build directory (default: scripts/build-kernel.sh)
#   VM_MEM      guest memory (2G)        VM_CPUS   vCPUs (2)
#   VM_APPEND   extra kernel command line (hugepages=64: 64 x 2 MiB pages)
#               1 GiB pages: VM_MEM=4G VM_APPEND="hugepagesz=1G hugepages=1
#               hugepagesz=2M hugepages=64" (1G size first; >= 4G memory)
#   VM_QEMU_OPTS extra QEMU options      VM_TIMEOUT seconds (1800)
#   VM_NUMA     NUMA nodes, one virtme-ng --numa value each, space-separated
#               ("2G,cpus=0 2G,cpus=1"); their sizes must add up to VM_MEM
#   VM_NO_MODULE=1  do not load mfr.ko before the command
#   VM_MODULE   the mfr.ko to load (module/mfr.ko; another for another KDIR)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -gt 0 ] || die "usage: vm-run.sh COMMAND..."
KDIR=${KDIR:-$("$MFR_ROOT/scripts/build-kernel.sh")}
VM_MEM=${VM_MEM:-2G}
VM_CPUS=${VM_CPUS:-2}
VM_APPEND=${VM_APPEND:-hugepages=64}
VM_TIMEOUT=${VM_TIMEOUT:-1800}
[ -x "$VNG" ] || die "virtme-ng not installed at $VNG: run 'make deps'"
[ -f "$KDIR/arch/x86/boot/bzImage" ] || die "no kernel image in $KDIR"

out=$(mktemp -d "$MFR_ROOT/build/vm/run.XXXXXX" 2>/dev/null) || {
	mkdir -p "$MFR_ROOT/build/vm"
	out=$(mktemp -d "$MFR_ROOT/build/vm/run.XXXXXX")
}
printf '%s\n' "$*" >"$out/cmd"
printf '%s\n' "${VM_NO_MODULE:-0}" >"$out/no-module"
printf '%s\n' "${VM_MODULE:-$MFR_ROOT/module/mfr.ko}" >"$out/module"
# What the guest side needs to know about the host's build.
printf 'MFR_KDIR=%q\nMFR_KSRC=%q\n' "$KDIR" "$(dirname "$KDIR")/linux" >"$out/env"

# panic=-1 reboots on a panic; virtme's -no-reboot then ends QEMU, so a
# crashed guest shows up as a missing exit status instead of a hang.
# virtme-ng has QEMU open the host's stdout and stderr again by path, as
# file chardevs (each truncating, each with its own offset): a log file
# they point to would be truncated and overwritten.  Through pipes the
# caller's files stay as they are.
# virtme-ng links the build's modules into $KDIR/.virtme_mods when they
# are newer than its list; two boots starting side by side (the suite's
# lanes) would both do it and trip over each other's links.  Do it here,
# one boot at a time.
(
	flock 9
	cd "$KDIR"
	if [ ! .virtme_mods/lib/modules/0.0.0/modules.dep -nt modules.order ]; then
		"$(dirname "$VNG")/virtme-prep-kdir-mods" >/dev/null
	fi
) 9>"$KDIR/.vm-run.lock"

# The host root is the guest's, read-only over 9p.  virtme-ng mounts it
# uncached: every exec and every Python import walks and reads it through
# the host again, and under TCG with the debug kernel that is most of a
# VM test's time (a boot 85 s against 55, an import of json 2.3 s against
# 1.4, idle).  Nothing outside the checkout changes while a guest runs
# (the kernel, its modules and the tools are built before it boots), so
# the root is cached (cache=loose; a later rootflags= wins); the checkout,
# which host and guest both write, stays an uncached mount of its own.
# --force-9p: Debian's virtiofsd is QEMU's C one, which virtme-ng cannot
# start; it tries for 3 s per boot before it falls back to 9p anyway.
root_flags="version=9p2000.L,trans=virtio,access=any,msize=524288,cache=loose"
numa=()
for node in ${VM_NUMA:-}; do
	numa+=(--numa "$node")
done
# The guest's console goes to a file of the run's, whatever VM_VERBOSE says:
# a guest that dies (a panic, a triple fault, QEMU gone) does not get to
# copy its kernel log, and then that file is all there is.  A virtio
# console of its own (hvc0) with the log level at warnings: virtme-ng's
# serial console stays quiet (loglevel=0 otherwise), and a debug kernel's
# boot chatter is not pushed through an emulated UART.  QEMU's reset
# log (qemu.log) names a triple fault.
console_opts="-chardev file,id=mfrlog,path=$out/console"
console_opts+=" -device virtio-serial-pci,id=mfrlogbus"
console_opts+=" -device virtconsole,bus=mfrlogbus.0,chardev=mfrlog"
console_opts+=" -d cpu_reset -D $out/qemu.log"
console_append="console=hvc0 loglevel=5"
boot() { # SECONDS: one boot, at most that long
	{
		timeout --foreground -k 10 "$1" "$VNG" --run "$KDIR" --disable-kvm ${VM_VERBOSE:+--verbose} \
			--memory "$VM_MEM" --cpus "$VM_CPUS" ${numa[@]+"${numa[@]}"} \
			--force-9p --append "panic=-1 rootflags=$root_flags $console_append $VM_APPEND" \
			${VM_QEMU_OPTS:+"--qemu-opts=$VM_QEMU_OPTS"} "--qemu-opts=$console_opts" \
			--rwdir "$MFR_ROOT" --cwd "$PWD" \
			--exec "$MFR_ROOT/scripts/vm-guest.sh $out" </dev/null 2>&1 >&3 3>&- |
			tee "$out/boot.err" >&2
		echo "${PIPESTATUS[0]}" >"$out/vng-rc"
	} 3>&1 | cat
}
# A guest that never reaches its command: under TCG an idle vCPU's timer
# interrupt is now and then lost in early boot (seen with QEMU 10.0: "rcu:
# rcu_sched kthread timer wakeup didn't happen ... Possible timer handling
# issue on cpu=1", the boot waiting on RCU for good, both vCPUs halted).
# Nothing of ours has run then (mfr.ko is loaded by vm-guest.sh): the boot
# is ended after VM_BOOT_TIMEOUT seconds (600) and done once more, loudly.
# The same for a boot whose emulator died of one of its own assertions
# before the guest reached its command (QEMU 10.0.2 TCG, a CI-like run,
# 14 s into a boot: "system/physmem.c:2678: iotlb_to_section: Assertion
# `section_index < d->map.sections_nb' failed"): that is QEMU's bug, not
# something a guest can ask for.
VM_BOOT_TIMEOUT=${VM_BOOT_TIMEOUT:-600}
t_start=$SECONDS
attempt=1 pid=
# The boot is not in the terminal's process group: a Ctrl-C or a kill of
# this script ends it here.
trap '[ -n "$pid" ] && kill -TERM -- "-$pid" 2>/dev/null; exit 130' INT TERM HUP
set +e
while :; do
	rm -f "$out/started" "$out/vng-rc" "$out/boot.err"
	set -m			# the boot in a process group of its own
	boot $((VM_TIMEOUT - (SECONDS - t_start))) &
	pid=$!
	set +m
	t_boot=$SECONDS hung=
	while kill -0 "$pid" 2>/dev/null; do
		if [ ! -e "$out/started" ] && [ $((SECONDS - t_boot)) -ge "$VM_BOOT_TIMEOUT" ]; then
			hung=1
			kill -TERM -- "-$pid" 2>/dev/null
			sleep 5
			kill -KILL -- "-$pid" 2>/dev/null
			break
		fi
		sleep 2
	done
	wait "$pid"
	aborted=
	if [ -z "$hung" ] && [ ! -e "$out/started" ]; then
		aborted=$(grep -m1 -E '^qemu-system-[^:]*: .*Assertion .* failed' "$out/boot.err" 2>/dev/null)
	fi
	if [ -n "$hung" ]; then
		echo "vm-run: BOOT HUNG: the guest did not reach its command in $VM_BOOT_TIMEOUT s (boot $attempt)" >&2
	elif [ -n "$aborted" ]; then
		echo "vm-run: QEMU ABORTED before the guest reached its command (boot $attempt): $aborted" >&2
	else
		break
	fi
	if [ "$attempt" -ge 2 ] || [ $((VM_TIMEOUT - (SECONDS - t_start))) -lt 120 ]; then
		echo 124 >"$out/vng-rc"
		break
	fi
	attempt=$((attempt + 1))
	echo "vm-run: booting again" >&2
done
vng_rc=$(cat "$out/vng-rc" 2>/dev/null || echo 1)
set -e

if [ ! -f "$out/rc" ]; then
	echo "vm-run: the guest did not finish; what it left:" >&2
	klog=
	if [ -f "$out/dmesg" ]; then
		klog=$out/dmesg
		tail -n 60 "$klog" >&2
	elif [ -s "$out/console" ]; then
		klog=$out/console
		echo "vm-run: the guest's console (warnings and worse), last 40 lines; all of it in $out/console:" >&2
		tail -n 40 "$klog" >&2
	fi
	# The last lines may start in the middle of a report: its head, last,
	# where a reader of this output's end sees it.
	[ -z "$klog" ] || "$MFR_ROOT/scripts/check-kernel-log.sh" "$klog" || true
	[ ! -s "$out/qemu.log" ] || {
		echo "vm-run: QEMU's reset log ($out/qemu.log), its last lines without register dumps:" >&2
		grep -vE '^[A-Z][A-Za-z0-9]* *=' "$out/qemu.log" | tail -n 10 >&2
	}
	echo "vm-run: the guest did not finish (vng exit $vng_rc after $((SECONDS - t_start)) s of ${VM_TIMEOUT}s)" >&2
	# With -d cpu_reset QEMU logs a triple fault, which -no-reboot turns
	# into an exit with nothing on the guest's console.
	if grep -q "Triple fault" "$out/qemu.log" 2>/dev/null; then
		echo "vm-run: QEMU logged a triple fault in the guest ($out/qemu.log)" >&2
	fi
	exit 124
fi
rc=$(cat "$out/rc")
if ! "$MFR_ROOT/scripts/check-kernel-log.sh" "$out/dmesg"; then
	echo "vm-run: guest kernel log: $out/dmesg" >&2
	[ "$rc" = 0 ] && rc=1
else
	rm -rf "$out"
fi
exit "$rc"
