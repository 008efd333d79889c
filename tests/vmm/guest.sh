#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest side of "make test-vmm" (see run.sh), in the patched kernel booted
# with an SVM vCPU: Debian's own qemu-system-x86_64 runs a KVM guest (Debian's
# linux-image-amd64, tests/vmm/memcheck.c as its init) whose RAM is a HugeTLB
# memfd, and one host page under the checker's memory gets an error.  Each
# scenario run leaves one "result" line in $VMM_DIR/results (key=value).
#
#   VMM_SCENARIOS  words OPTIN-SIZE-ERROR[-VARIANT...][/GUEST][/QEMU]:
#                  OPTIN   stock (no rule matches QEMU's memfd) or keep
#                          (mfrd's packaged rule opts it in)
#                  SIZE    2m or 1g
#                  ERROR   cpfn: hwpoison-inject's corrupt-pfn on the host
#                          page; mce: the outer emulator's deferred error
#                          on it (the host's machine-check path: the MCE
#                          poller, memory-failure, the direct map)
#                  VARIANT pv: the guest's steal-time and kvmclock areas in
#                          that page; touch: the guest reads the page on
#                          purpose afterwards, from user and kernel mode,
#                          and KVM's stage-2 mappings are judged; reset:
#                          system_reset from QEMU's monitor afterwards (1g:
#                          the error in the guest's second GiB); first
#                          (1g reset): the error in its first GiB, which
#                          also holds SeaBIOS's RAM copy, reported only;
#                          multi (keep): an error in every page the
#                          checker names as a target (4, in one 1 GiB
#                          page or four 2 MiB ones), each once the guest
#                          has taken the one before;
#                          zap, unmap, sync: instruments, not fleet
#                          cases; from the error to the checker's end,
#                          every 100 ms (instrument_start): zap: KVM drops
#                          every stage-2 mapping of the guest (new roots),
#                          which its vCPUs fault back; unmap: an MMU-
#                          notifier invalidation of QEMU's whole address
#                          space, which KVM meets by zapping the guest's
#                          stage-2 leaves in place, as at the error; sync:
#                          QEMU reads the vCPU's state from KVM and writes
#                          it back, as when it injects the error
#                  GUEST   d12 (Debian 12, 6.1) or d13 (Debian 13, 6.12;
#                          default $VMM_GUEST, else d13)
#                  QEMU    10 or 7.2 (default $VMM_QEMU, else 10)
#                  "*N" after a word: N runs of it
#   VMM_RUNS       runs of each scenario without "*N" (1)
#   VMM_CPU        the guest's -cpu (host: AMD, which QEMU 10 gives SUCCOR)
#   VMM_OUTER      the directory of requests to the outer emulator's monitor
#                  (tests/vmm/outer-monitor.sh; build/vmm/outer-monitor)
#   VMM_DEMO=1     progress lines "[demo-vm] ..." for make demo-vm
#   VMM_PROBE_CPUS "CPU[/QEMU];...": what the guest sees with each -cpu
#   VMM_WAIT       seconds the checker waits for its machine check (120)
#   VMM_PASSES     passes the checker makes after it (2; more soak the
#                  guest in the state the error left, ~5 s a pass at 1 GiB)
#   VMM_TOUCH_TRIES reads of the poisoned page per mode, touch variant (3)
#   VMM_BOOT_TIMEOUT seconds a guest may take to boot, or to boot again
#                  after system_reset (900)
set -u
. "$MFR_ROOT/tests/vm/lib.sh"
: "${VMM_DIR:?}"

ctl=$MFR_ROOT/build/daemon/mfrctl
mfrd=$MFR_ROOT/build/daemon/mfrd
hmp=$MFR_ROOT/tests/vmm/hmp.py
VMM_CPU=${VMM_CPU:-host}
VMM_OUTER=${VMM_OUTER:-$MFR_ROOT/build/vmm/outer-monitor}
TOUCH_TRIES=${VMM_TOUCH_TRIES:-3}
results=$VMM_DIR/results
# The outer emulator's deferred error: VAL|EN|MISCV|ADDRV|DEFERRED|POISON,
# misc 0x8c (physical address, LSB 12), in bank 1 of vCPU 0 (no broadcast:
# QEMU 10 refuses it on an AMD vCPU).
OUTER_MCE="mce 0 1 0x9c00180000000000 0x0"

# checked DESCRIPTION COMMAND...: check, and return whether it passed.
checked() {
	local before=$failures
	check "$@"
	[ "$failures" = "$before" ]
}
# say TEXT: a progress line of make demo-vm (VMM_DEMO=1).
say() { [ -z "${VMM_DEMO:-}" ] || echo "[demo-vm] $*"; }
meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
hp_free() { cat "$(hugepages_dir "$1")/free_hugepages"; }
hp_total() { cat "$(hugepages_dir "$1")/nr_hugepages"; }
wait_until() { # SECONDS COMMAND...: poll every second
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		[ $SECONDS -lt $end ] || return 1
		sleep 1
	done
}
# kpageflags PFN: the page's flags word (decimal).
kpageflags() {
	"$PYTHON" -c 'import struct, sys
with open("/proc/kpageflags", "rb") as f:
    f.seek(int(sys.argv[1], 0) * 8)
    print(struct.unpack("<Q", f.read(8))[0])' "$1"
}
hwpoisoned() { [ $(($(kpageflags "$1") >> 19 & 1)) = 1 ]; }
# hugepage_lost_kb PFN SIZE: KiB of the hugepage around PFN that are still
# HWPoison or huge (bits 19, 17 of /proc/kpageflags) after it was freed:
# neither back in the page allocator nor usable in the pool.
hugepage_lost_kb() {
	"$PYTHON" - "$1" "$2" <<'PY'
import struct, sys
pfn, size = int(sys.argv[1], 0), {"2M": 512, "1G": 262144}[sys.argv[2]]
head = pfn & ~(size - 1)
lost = 0
with open("/proc/kpageflags", "rb") as f:
    f.seek(head * 8)
    data = f.read(size * 8)
for (flags,) in struct.iter_unpack("<Q", data):
    if flags >> 19 & 1 or flags >> 17 & 1:
        lost += 1
print(lost * 4)
PY
}
# host_pfn PID GPA: the host pfn behind guest physical address GPA of QEMU
# PID: the guest RAM memfd's mapping (below 4 GiB, gpa = offset in it),
# then that address in /proc/PID/pagemap.
host_pfn() {
	"$PYTHON" - "$1" "$2" <<'PY'
import struct, sys
pid, gpa = int(sys.argv[1]), int(sys.argv[2], 0)
for line in open(f"/proc/{pid}/maps"):
    if "memory-backend-memfd" in line:
        start = int(line.split("-")[0], 16)
        break
else:
    sys.exit("no memory-backend-memfd mapping in QEMU")
with open(f"/proc/{pid}/pagemap", "rb") as f:
    f.seek((start + gpa) // 4096 * 8)
    ent = struct.unpack("<Q", f.read(8))[0]
if not ent >> 63:
    sys.exit("guest page not present in QEMU")
print(hex(ent & ((1 << 55) - 1)))
PY
}
# stage2 PID: KVM's stage-2 page counts of QEMU PID's VM, "4k 2m 1g".
stage2() {
	local d
	d=$(ls -d /sys/kernel/debug/kvm/"$1"-* 2>/dev/null | head -n1)
	[ -n "$d" ] || { echo "? ? ?"; return; }
	echo "$(cat "$d/pages_4k") $(cat "$d/pages_2m") $(cat "$d/pages_1g")"
}

# vcpu_state PID SOCK: what a guest that does not come back is doing:
# QEMU's status and vCPU registers, its threads' kernel stacks, KVM's
# counters 5 s apart, and 3 s of KVM's exits and stage-2 faults.
vcpu_state() {
	local pid=$1 sock=$2 kd t f
	"$PYTHON" "$hmp" "$sock" "info status" 2>&1
	"$PYTHON" "$hmp" "$sock" "info registers" 2>&1
	for t in /proc/"$pid"/task/*; do
		echo "# thread ${t##*/} $(cat "$t/comm" 2>/dev/null):"
		cat "$t/stack" 2>/dev/null
	done
	kd=$(ls -d /sys/kernel/debug/kvm/"$pid"-* 2>/dev/null | head -n1)
	if [ -n "$kd" ]; then
		for t in 1 2; do
			echo "# KVM counters ($t):"
			for f in exits pf_taken pf_fixed pf_spurious pf_emulate pf_fast mmio_exits io_exits \
				halt_exits irq_exits nmi_injections pages_4k pages_2m pages_1g; do
				[ -r "$kd/$f" ] && printf '%s=%s ' "$f" "$(cat "$kd/$f")"
			done
			echo
			[ "$t" = 2 ] || sleep 5
		done
	fi
	flight_start
	sleep 3
	echo 0 >"$flight/tracing_on" 2>/dev/null
	echo "# 3 s of KVM events:"
	grep -v '^#' "$flight/trace" 2>/dev/null | tail -n 200
	flight_stop /dev/null 0
}

# outer CMD...: one command on the outer emulator's monitor, through the
# host (tests/vmm/outer-monitor.sh); prints its answer.
outer_n=0
outer() {
	local req
	outer_n=$((outer_n + 1))
	req=$VMM_OUTER/req-$$-$outer_n
	[ -d "$VMM_OUTER" ] || { echo "no outer monitor ($VMM_OUTER)"; return 1; }
	echo "$*" >"$req.tmp" && mv "$req.tmp" "$req"
	if ! wait_until 60 test -f "$req.out"; then
		rm -f "$req"
		echo "the outer monitor did not answer in 60 s"
		return 1
	fi
	cat "$req.out"
	rm -f "$req.out"
}
# pv_areas PFN: the steal-time record and kvmclock's time info in that
# host page (offsets 0 and 0x40, as memcheck places them), read from the
# outer emulator: what KVM last wrote there.
pv_areas() {
	outer "xp /12gx $(($1 * 4096))" | awk '{ $1 = ""; printf "%s", $0 }'
}

# hugepages_lost_kb SIZE PFN...: hugepage_lost_kb over the hugepages of
# the PFNs, each hugepage once.
hugepages_lost_kb() {
	local size=$1 per p kb=0 seen=
	per=$([ "$size" = 1G ] && echo 262144 || echo 512)
	shift
	for p in "$@"; do
		case " $seen " in *" $((p & ~(per - 1))) "*) continue ;; esac
		seen+=" $((p & ~(per - 1)))"
		kb=$((kb + $(hugepage_lost_kb "$p" "$size")))
	done
	echo "$kb"
}

# inject_error NAME ERR PFN GPA: an uncorrected error in host page PFN,
# under guest physical GPA: hwpoison-inject's corrupt-pfn (cpfn) or the
# outer emulator's deferred error, which the host's MCE poller finds (mce).
inject_error() {
	local name=$1 err=$2 pfn=$3 gpa=$4 said
	if [ "$err" = cpfn ]; then
		echo "# inject: corrupt-pfn $pfn (guest physical $gpa) (t=${SECONDS}s)"
		echo "$pfn" >/sys/kernel/debug/hwpoison/corrupt-pfn
		return
	fi
	echo "# inject: the outer emulator's deferred error at host physical $(printf 0x%x $((pfn * 4096))) (guest physical $gpa) (t=${SECONDS}s)"
	say "an uncorrected memory error in host page $pfn under the guest (guest physical $gpa): the emulator's deferred error, found by the host kernel's MCE poller"
	said=$(outer "$OUTER_MCE $((pfn * 4096)) 0x8c")
	check "$name: the outer monitor took the deferred error${said:+ ($said)}" test -z "$said"
	check "$name: the host's MCE poller ran memory-failure on pfn $pfn (HWPoison)" \
		wait_until 60 hwpoisoned "$pfn"
}

# The checker is ready, or QEMU is gone (then check says why).
guest_ready() {
	grep -qs '^MEMCHECK \(target\|no target\)' "$1" && return 0
	kill -0 "$qemu_pid" 2>/dev/null || return 0
	return 1
}

# ---- premise: nested SVM with nested paging, kvm_amd, hwpoison-inject
check "the vCPU offers SVM (svm in /proc/cpuinfo)" grep -qw svm /proc/cpuinfo
check "the vCPU offers nested paging (npt in /proc/cpuinfo)" grep -qw npt /proc/cpuinfo
modprobe kvm_amd
check "kvm_amd loaded" test -d /sys/module/kvm_amd
check "kvm_amd uses nested paging" grep -qx Y /sys/module/kvm_amd/parameters/npt
check "/dev/kvm" test -c /dev/kvm
# Booted with highres=off (tests/run, tests/vmm/run.sh): every CPU's tick
# on its LAPIC timer in periodic mode, which TCG does not lose when idle.
case $(cat /proc/cmdline) in
*highres=off*)
	check "each CPU's tick: the LAPIC timer, periodic" test \
		"$(grep -c 'event_handler:  tick_handle_periodic' /proc/timer_list)" = "$(nproc)"
	;;
esac
# Whether a guest can be offered MCA recovery (MCG_SER_P) at all.
echo "# KVM_X86_GET_MCE_CAP_SUPPORTED: $("$MFR_ROOT/build/vmm/tools/kvm-mce-cap")"
modprobe hwpoison_inject
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
check "hwpoison-inject's corrupt-pfn" test -w /sys/kernel/debug/hwpoison/corrupt-pfn
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing
# The outer kernel's MCE poller finds the outer emulator's deferred errors:
# every second, not every 5 minutes.
for ci in /sys/devices/system/machinecheck/machinecheck*/check_interval; do
	echo 1 >"$ci"
done
[ "$failures" = 0 ] || exit 1

# qemu_premise VERSION: that QEMU is there and is Debian's, unmodified:
# the binary's md5sum as its package lists it (dpkg -V of the whole
# package takes a minute under TCG).  Once per boot.
declare -A qemu_ok
qemu_premise() {
	local q=$1 root=$MFR_ROOT/build/vmm/qemu-$1 sum
	if [ -z "${qemu_ok[$q]:-}" ]; then
		sum=$(md5sum "$root/usr/bin/qemu-system-x86_64" 2>/dev/null | cut -d' ' -f1)
		qemu_ok[$q]=1
		grep -q "^${sum:-none}  usr/bin/qemu-system-x86_64\$" \
			"$root/var/lib/dpkg/info/qemu-system-x86.md5sums" 2>/dev/null && qemu_ok[$q]=0
		check "QEMU $q: $("$root/usr/bin/qemu-system-x86_64" --version 2>&1 | head -n1), unmodified" \
			test "${qemu_ok[$q]}" = 0
	fi
	return "${qemu_ok[$q]}"
}
# cpu_resets DIR: the vCPU resets QEMU logged (-d cpu_reset) so far.
cpu_resets() {
	local n
	n=$(grep -c '^CPU Reset' "$1/qemu-reset.log" 2>/dev/null)
	echo "${n:-0}"
}

# reset_rip DIR N: the guest's RIP at the reset after the first N, if any.
reset_rip() {
	awk -v n="$2" '/^CPU Reset/ { seen++; next }
		seen > n && match($0, /[RE]IP=[0-9a-f]+/) { print "0x" substr($0, RSTART + 4, RLENGTH - 4); exit }' \
		"$1/qemu-reset.log" 2>/dev/null
}

# run_qemu VERSION ARGS... &: that QEMU, with its own firmware and modules,
# in the background; exec, so that $! is QEMU's pid.
run_qemu() {
	local root=$MFR_ROOT/build/vmm/qemu-$1
	shift
	QEMU_MODULE_DIR=$root/usr/lib/x86_64-linux-gnu/qemu \
		exec "$root/usr/bin/qemu-system-x86_64" -L "$root/usr/share/qemu" -L "$root/usr/share/seabios" "$@"
}

mfrd_pid=
# mfrd's state on the guest's own tmpfs: SQLite on the 9p checkout fails
# ("disk I/O error"); its log and metrics are copied to $VMM_DIR/mfrd.
T=$(mktemp -d /tmp/mfr-vmm-mfrd.XXXXXX)
mkdir -p "$T/metrics" "$T/rules.d"
# The rules mfrd pushes: the packaged example rule file, as shipped
# (installed as share/doc/mfr/examples/10-vms.conf), which must opt an
# unmodified QEMU in.
cp "$MFR_ROOT/daemon/examples/10-vms.conf" "$T/rules.d/"
RULES_DIR=$T/rules.d
cat >"$T/mfrd.conf" <<EOF
state_dir = $T/state
metrics_file = $T/metrics/mfr.prom
metrics_interval = 2
EOF
start_mfrd() {
	"$mfrd" --config "$T/mfrd.conf" --rules-dir "$RULES_DIR" >>"$T/log" 2>&1 &
	mfrd_pid=$!
	wait_until 60 bash -c "'$ctl' -j rules list | grep -q memory-backend-memfd" || return
	say "mfrd runs with the packaged rule file: $("$ctl" rules list | tail -n +2 | tr -s ' ' | head -n1)"
}
cleanup() {
	[ -n "$mfrd_pid" ] && kill "$mfrd_pid" 2>/dev/null
	[ -n "${qemu_pid:-}" ] && kill -9 "$qemu_pid" 2>/dev/null
}
trap cleanup EXIT

# mce_lines SERIAL [after|before]: the checker's machine-check records,
# before or after it ended (the touches come after).
mce_lines() {
	awk -v want="$2" '/^MEMCHECK done/ { after = 1 }
		/^MEMCHECK mce n=/ && ((want == "after") == (after == 1)) && !seen[$3]++' "$1"
}
# console_kinds SERIAL: "AR:AO", the machine checks the guest kernel printed
# on its console ("Machine Check Exception: MCG_STATUS Bank ..."; EIPV,
# bit 1, marks action required): what it took even when the checker could
# not say.  Not the checker's "MEMCHECK kmsg" copies of the same lines.
console_kinds() {
	local ar=0 ao=0 x
	for x in $(sed -n '/^MEMCHECK /!s/.*Machine Check Exception: \([0-9a-f]*\) Bank.*/\1/p' "$1"); do
		if ((0x$x & 2)); then ar=$((ar + 1)); else ao=$((ao + 1)); fi
	done
	echo "$ar:$ao"
}
# record_kinds: the kind of each record on stdin, one per line, in order.
record_kinds() { sed -n 's/.* kind=\([a-z-]*\) .*/\1/p'; }
# kinds: "N kind" per kind of the records on stdin, joined by " + ".
kinds() {
	record_kinds | sort | uniq -c |
		awk '{ printf "%s%d %s", n++ ? " + " : "", $1, $2 }'
}

# scenario WORD RUN: one run of one scenario (see the top of this file).
scenario() {
	local word=$1 run=$2 spec optin size err variants guest qemu
	spec=${word%%/*}
	guest=$(cut -s -d/ -f2 <<<"$word") qemu=$(cut -s -d/ -f3 <<<"$word")
	guest=${guest:-${VMM_GUEST:-d13}} qemu=${qemu:-${VMM_QEMU:-10}}
	IFS=- read -r optin size err variants <<<"$spec"
	case $err in
	cpfn | mce) ;;
	*) variants=${err}${variants:+-$variants} err=cpfn ;;	# keep-2m-pv
	esac
	local name="$optin-$size-$err${variants:+-$variants}/$guest/$qemu"
	local v
	for v in ${variants//-/ }; do
		case $v in
		pv | touch | reset | first | multi | zap | unmap | sync) ;;
		*) fail "$name: no variant \"$v\" (pv, touch, reset, first, multi, zap, unmap, sync)"; return ;;
		esac
	done
	local d=$VMM_DIR/$(tr / _ <<<"$name")-$run
	local pv= touch= reset= first= multi= instr= instr_n= serial= ar_all= resets_ready= guest_resets= reset_at=
	case "-$variants-" in *-pv-*) pv=1 ;; esac
	case "-$variants-" in *-touch-*) touch=1 ;; esac
	case "-$variants-" in *-reset-*) reset=1 ;; esac
	case "-$variants-" in *-first-*) first=1 ;; esac
	case "-$variants-" in *-multi-*) multi=1 ;; esac
	if [ -n "$multi" ] && { [ "$optin" != keep ] || [ -n "$touch$pv$reset" ]; }; then
		fail "$name: multi goes with keep alone (no touch, pv or reset)"
		return
	fi
	case "-$variants-" in *-zap-*) instr=zap ;; *-unmap-*) instr=unmap ;; *-sync-*) instr=sync ;; esac
	size=${size^^}
	local image=$MFR_ROOT/build/vmm/image-$guest mem hp_kb npages target_min=0
	local free0 free1 hc0 hc1 total0 total1 dmesg0 sock target pfn flags lost_kb
	# The errors' guest physical addresses and host pfns: the first
	# (target, pfn) alone, or with multi every target the checker names.
	local targets pfns nerr=1 passes=${VMM_PASSES:-2} t p
	# The checker must still be reading when the last error comes.
	[ -z "$multi" ] || passes=${VMM_PASSES:-8}
	local survived finished wrong lost mces addrs exact storm k succor
	local s2_before s2_after pv_b1 pv_b2 pv_a1 pv_a2 reset_result=no touched=
	echo "# scenario $name, run $run: $optin, $size pages, guest $guest, QEMU $qemu (t=${SECONDS}s)"
	qemu_premise "$qemu" || return
	say "KVM runs nested (kvm_amd, nested paging); starting QEMU $qemu: guest $guest ($(cat "$image/version")), $size pages, -cpu $VMM_CPU"
	if [ ! -f "$image/initramfs.cpio.gz" ]; then
		fail "$name: no guest image $image (tests/vmm/image.sh $guest on the host)"
		return
	fi
	hp_kb=$([ "$size" = 1G ] && echo 1048576 || echo 2048)
	mem=$([ "$size" = 1G ] && echo 1G || echo "${VMM_MEM:-512M}")
	# The 1 GiB touch: two 1 GiB pages, the second (1-2 GiB of guest
	# physical memory) wholly in one memslot, so KVM can map it with one
	# 1 GiB entry; the target is there.
	# The 1 GiB reset likewise, unless "first": QEMU 10's reset punches
	# the hugepage with the error, and the first one also holds SeaBIOS's
	# RAM copy, which the reset vector jumps into (bios_zeroed).  The boot
	# after the reset takes one more 1 GiB page.
	if [ "$size" = 1G ] && [ -z "$first" ] && [ -n "$touch$reset" ]; then
		mem=2G target_min=0x40000000
	fi
	npages=$(($(numfmt --from=iec "$mem") / 1024 / hp_kb))
	if [ "$size" = 1G ]; then
		local need=$npages
		[ -z "$reset" ] || need=$((npages + 1))
		while [ "$(hp_free 1G)" -lt "$need" ] && one_more_1g_page; do :; done
	fi
	rm -rf "$d" && mkdir -p "$d"
	# Sockets cannot live on the 9p-shared checkout.
	sock=$(mktemp -u /tmp/vmm-mon.XXXXXX)
	free0=$(hp_free "$size")
	hc0=$(meminfo HardwareCorrupted)
	total0=$(hp_total "$size")
	dmesg0=$(dmesg | wc -l)
	run_qemu "$qemu" -accel kvm -cpu "$VMM_CPU" -smp 1 -m "$mem" \
		-object "memory-backend-memfd,id=hm,size=$mem,hugetlb=on,hugetlbsize=${size},share=on,prealloc=on" \
		-machine q35,memory-backend=hm -nodefaults -display none \
		-kernel "$image/vmlinuz" -initrd "$image/initramfs.cpio.gz" \
		-append "console=ttyS0 quiet panic=0 memcheck.wait=${VMM_WAIT:-120} memcheck.passes=$passes${pv:+ memcheck.pv=1}${touch:+ memcheck.touch=$TOUCH_TRIES} memcheck.target_min=$target_min" \
		-serial "file:$d/serial" -monitor "unix:$sock,server=on,wait=off" \
		-d cpu_reset -D "$d/qemu-reset.log" \
		>"$d/qemu.out" 2>&1 &
	qemu_pid=$!
	if ! checked "$name: the guest's checker filled its memory" \
		wait_until "${VMM_BOOT_TIMEOUT:-900}" guest_ready "$d/serial"; then
		echo "# $name: QEMU said:"; cat "$d/qemu.out"; tail -n 20 "$d/serial"
		kill -9 "$qemu_pid" 2>/dev/null; wait "$qemu_pid"; qemu_pid=
		return
	fi
	resets_ready=$(cpu_resets "$d")
	free1=$(hp_free "$size")
	say "the guest's checker filled its memory and verifies it pass after pass: $(grep -m1 '^MEMCHECK ready' "$d/serial" | cut -d' ' -f3-)"
	check "$name: guest RAM is $npages $size hugepages (free $free0 -> $free1)" \
		test $((free0 - free1)) = "$npages"
	local memfd_line
	memfd_line=$("$ctl" memfd list 2>&1 | awk -v p="$qemu_pid" '$3 == p')
	if [ "$optin" = keep ]; then
		check "$name: QEMU's memfd is opted in (mfrctl memfd list: $memfd_line)" \
			grep -q 'memory-backend-memfd.*keep' <<<"$memfd_line"
	else
		check "$name: QEMU's memfd is not opted in" test -z "$memfd_line"
	fi
	# QEMU >= 9.1 gives an AMD vCPU SUCCOR (MCA recovery), 7.2 does not.
	succor=no
	grep -q '^MEMCHECK cpu flag succor' "$d/serial" && succor=yes
	if [ "$qemu" != 7.2 ]; then
		check "$name: the guest's vCPU offers SUCCOR (succor in its /proc/cpuinfo)" test "$succor" = yes
	else
		echo "# $name: the guest's vCPU offers SUCCOR: $succor"
	fi
	target=$(sed -n 's/^MEMCHECK target gpa=\(0x[0-9a-f]*\) .*/\1/p' "$d/serial" | head -n1)
	if [ -n "$pv" ]; then
		wait_until 60 grep -q '^MEMCHECK pv' "$d/serial"
		check "$name: the guest put its steal-time and kvmclock areas at $target" \
			grep -q "^MEMCHECK pv .* at gpa=$target: set" "$d/serial"
	fi
	targets=$target
	[ -z "$multi" ] || targets=$(sed -n 's/^MEMCHECK target gpa=\(0x[0-9a-f]*\) .*/\1/p' "$d/serial" | tr '\n' ' ')
	pfns=
	for t in $targets; do
		p=$(host_pfn "$qemu_pid" "$t")
		if ! checked "$name: host pfn $p backs guest physical $t" test -n "$p"; then
			kill -9 "$qemu_pid" 2>/dev/null; wait "$qemu_pid"; qemu_pid=
			return
		fi
		pfns+="$p "
	done
	pfn=${pfns%% *}
	nerr=$(wc -w <<<"$targets")
	if [ -n "$multi" ] && ! checked "$name: multi: the checker names several pages ($nerr)" test "$nerr" -ge 2; then
		kill -9 "$qemu_pid" 2>/dev/null; wait "$qemu_pid"; qemu_pid=
		return
	fi
	say "mfrctl memfd list: $(tail -n +2 <<<"$("$ctl" memfd list)" | tr -s ' ')"
	if [ -n "$pv" ]; then
		pv_b1=$(pv_areas "$pfn"); sleep 3; pv_b2=$(pv_areas "$pfn")
	fi
	s2_before=$(stage2 "$qemu_pid")
	if [ -n "$touch" ]; then
		check "$name: touch: KVM's stage-2 page counts in debugfs ($s2_before)" \
			test "$s2_before" != "? ? ?"
	fi
	check "$name: KVM's kvmmmu:kvm_mmu_set_spte tracepoint" \
		test -w /sys/kernel/tracing/events/kvmmmu/kvm_mmu_set_spte/enable
	# Every stage-2 leaf KVM installs from here on, with its level and pfn.
	echo 0 >/sys/kernel/tracing/tracing_on
	echo >/sys/kernel/tracing/trace
	echo 1 >/sys/kernel/tracing/events/kvmmmu/kvm_mmu_set_spte/enable
	echo 1 >/sys/kernel/tracing/tracing_on
	flight_start
	set -- $pfns
	for t in $targets; do
		inject_error "$name" "$err" "$1" "$t"
		shift
		# The next error once the guest has its record of this one.
		[ $# = 0 ] ||
			check "$name: multi: the guest took the error at $t before the next" \
				wait_until 60 grep -q "^MEMCHECK mce n=[0-9]* kind=[a-z-]* addr=$t " "$d/serial"
	done
	[ -z "$instr" ] || instrument_start "$instr" "$d" "$qemu_pid" "$sock"
	# The checker ends two passes after its first machine check or
	# signal, or VMM_WAIT seconds after it was ready without one.
	# A guest that cannot recover may take the same machine check over
	# and over: 20 of them end the wait (a storm).
	wait_until $((${VMM_WAIT:-120} + 120 + 30 * passes)) bash -c "grep -qE '^MEMCHECK done|Kernel panic' '$d/serial' ||
		! kill -0 $qemu_pid 2>/dev/null ||
		[ \$(grep -c '^CPU Reset' '$d/qemu-reset.log') -gt $resets_ready ] ||
		[ \$(grep -ac '^\[.*Machine Check Exception' '$d/serial') -ge 20 ]"
	if [ -n "$instr" ]; then
		instr_n=$(instrument_stop "$d")
		check "$name: $instr: $(instrument_what "$instr") over and over (${instr_n:-0} times)" \
			test "${instr_n:-0}" -ge 10
	fi
	say "host kernel: $(dmesg | tail -n +$((dmesg0 + 1)) | grep -m1 'Memory failure' | sed 's/^\[[^]]*\] //')"
	say "QEMU: $(grep -m1 'Guest MCE' "$d/qemu.out")"
	say "guest kernel: $(grep -am1 'Memory failure' "$d/serial" | sed 's/^MEMCHECK kmsg //; s/^\[[^]]*\] //')"
	say "guest checker: $(grep -m1 '^MEMCHECK sigbus' "$d/serial" | cut -d' ' -f2-); then $(grep -m1 '^MEMCHECK done' "$d/serial" | cut -d' ' -f2-)"
	if [ -n "$touch" ] && grep -q '^MEMCHECK done' "$d/serial"; then
		wait_until $((TOUCH_TRIES * 20 + 60)) bash -c "grep -qE '^MEMCHECK touched|Kernel panic' '$d/serial' ||
			! kill -0 $qemu_pid 2>/dev/null"
		touched=$(sed -n 's/^MEMCHECK touched .* user=\([0-9]*\)\/[0-9]* kernel=\([0-9]*\)\/[0-9]*.*/\1+\2/p' "$d/serial")
	fi
	s2_after=$(stage2 "$qemu_pid")
	echo 0 >/sys/kernel/tracing/events/kvmmmu/kvm_mmu_set_spte/enable
	grep 'kvm_mmu_set_spte:' /sys/kernel/tracing/trace >"$d/spte-trace"
	if [ -n "$pv" ]; then
		pv_a1=$(pv_areas "$pfn"); sleep 5; pv_a2=$(pv_areas "$pfn")
		printf 'before %s\nbefore %s\nafter %s\nafter %s\n' "$pv_b1" "$pv_b2" "$pv_a1" "$pv_a2" >"$d/pv-areas"
	fi
	# The kernel's console lines, not the checker's copies of them.
	# Before the checker's end: the touch variant's reads come after it.
	storm=$(awk '/^MEMCHECK done/ { exit } /^\[.*Machine Check Exception/ { n++ } END { print n + 0 }' "$d/serial")
	sleep 2
	"$ctl" memfd list >"$d/mfrctl-memfd" 2>&1
	"$ctl" poison list >"$d/mfrctl-poison" 2>&1
	kill -0 "$qemu_pid" 2>/dev/null && "$PYTHON" "$hmp" "$sock" "info status" >"$d/status" 2>&1
	# A guest that resets itself (a triple fault; a panic would print and
	# halt, panic=0) leaves nothing on its console, and QEMU 10's reset
	# punches the kept hugepage out from under it: QEMU logs every vCPU
	# reset with the registers it had.
	guest_resets=$(($(cpu_resets "$d") - resets_ready))
	reset_at=$(reset_rip "$d" "$resets_ready")
	flight_stop "$d" "$guest_resets"
	# Where the vCPU is after such a reset (QEMU 10 punched the hugepage).
	if [ "$guest_resets" != 0 ] && kill -0 "$qemu_pid" 2>/dev/null; then
		vcpu_state "$qemu_pid" "$sock" >"$d/after-reset" 2>&1
		bios_zeroed "$sock" >>"$d/after-reset" && echo "# $name: after its reset the vCPU runs over zeroes where SeaBIOS's RAM copy was"
	fi
	# A reset run is judged on the boot that took the error; the boot after
	# system_reset only says whether the guest came back (reset_result).
	serial=$d/serial
	if [ -n "$reset" ]; then
		cp "$d/serial" "$d/serial.error-boot"
		serial=$d/serial.error-boot
		reset_result=$(reset_guest "$d" "$sock")
	fi
	survived=no
	grep -q 'running' "$d/status" 2>/dev/null && survived=yes
	grep -aq 'Kernel panic' "$serial" && survived=panic
	[ "$guest_resets" = 0 ] || survived=reset
	finished=no
	grep -q '^MEMCHECK done' "$serial" && finished=yes
	# Running, but taking the same machine check over and over: 20 the
	# guest printed, or 20 QEMU sent it (a guest stuck on a page of its
	# own kernel logs none of them).
	ar_all=$(grep -c 'BUS_MCEERR_AR injected' "$d/qemu.out")
	[ "$survived/$finished" = yes/no ] && { [ "$storm" -ge 20 ] || [ "$ar_all" -ge 20 ]; } &&
		survived=storm
	wrong=$(grep -c '^MEMCHECK wrong' "$serial")
	lost=$(sed -n 's/^MEMCHECK done .*lost_pages=\([0-9]*\).*/\1/p' "$serial" | head -n1)
	# The checker's count, or the kernel's if the checker never ran again.
	mces=$(mce_lines "$serial" before | wc -l)
	[ "$storm" -le "$mces" ] || mces=$storm
	addrs=$({
		mce_lines "$serial" before | sed -n 's/.* addr=\(0x[0-9a-f]*\) .*/\1/p'
		sed -n 's/.*Hardware Error\]: TSC [0-9a-f]* ADDR \([0-9a-f]*\) .*/0x\1/p' "$serial"
	} | sort -u | tr '\n' ' ')
	# Each address given: the poisoned 4 KiB page, or its hugepage's start.
	exact=
	for a in $addrs; do
		k=other
		for t in $targets; do
			if [ $((a)) = $((t)) ]; then k=exact-4k
			elif [ $((a)) = $((t & ~(hp_kb * 1024 - 1))) ] && [ $k = other ]; then k=${size,,}-start
			fi
		done
		case "+$exact+" in *"+$k+"*) ;; *) exact=${exact:+$exact+}$k ;; esac
	done
	exact=${exact:-none}
	# multi: the targets the guest has no record of.
	local unreported=
	for t in $targets; do
		case " $addrs " in *" $t "*) ;; *) unreported+="$t " ;; esac
	done
	"$PYTHON" "$hmp" "$sock" quit >/dev/null 2>&1
	wait "$qemu_pid"
	qemu_pid=
	sleep 2
	hc1=$(meminfo HardwareCorrupted)
	flags=$(kpageflags "$pfn")
	total1=$(hp_total "$size")
	lost_kb=$(hugepages_lost_kb "$size" $pfns)
	# Every poisoned pfn HWPoison and not buddy ("HB" each: 10).
	local pfn_states= f
	for p in $pfns; do
		f=$(kpageflags "$p")
		pfn_states+="$((f >> 19 & 1))$((f >> 10 & 1)) "
	done
	dmesg | tail -n +$((dmesg0 + 1)) >"$d/host-dmesg"
	say "QEMU quit: the hugepage is dissolved, the host lost $lost_kb KiB (pfn $pfn HWPoison), HardwareCorrupted +$((hc1 - hc0)) kB"
	local ar_exact ar_touch guest_kb spte spte_bad
	spte=$(spte_over "$target" "$d/spte-trace")
	# The poisoned gfns' count, summed over all of them.
	local sp n_poisoned=0
	for t in $targets; do
		sp=$(spte_over "$t" "$d/spte-trace")
		n_poisoned=$((n_poisoned + ${sp%%,*}))
	done
	spte="$n_poisoned,${spte#*,}"
	spte_bad=$(spte_off "$target" "$pfn" "$hp_kb" "$d/spte-trace")
	ar_exact=$(grep -c "GUEST addr $target of type BUS_MCEERR_AR injected" "$d/qemu.out")
	# The touches' share: a vCPU that read the page before QEMU handled
	# the host's action-optional SIGBUS took an action-required one for
	# the error itself, which the checker recorded before its end.
	ar_touch=$((ar_exact - $(mce_lines "$serial" before | grep -c "kind=action-required addr=$target ")))
	guest_kb=$(sed -n 's/^MEMCHECK meminfo HardwareCorrupted: *\([0-9]*\) kB.*/\1/p' "$serial" | head -n1)
	{
		printf 'result %s run=%s optin=%s size=%s err=%s guest=%s qemu=%s cpu=%s succor=%s target=%s pfn=%s' \
			"$name" "$run" "$optin" "$size" "$err" "$(cat "$image/version")" \
			"$("$MFR_ROOT/build/vmm/qemu-$qemu/usr/bin/qemu-system-x86_64" --version | sed -n '1s/.*(Debian \(.*\))/\1/p')" \
			"$VMM_CPU" "$succor" "$target" "$pfn"
		printf ' guest_mces=%s guest_kinds=%s guest_mce_printed=%s guest_addrs=%s exact=%s' "$mces" \
			"$(mce_lines "$serial" before | kinds | tr ' ' _)" "$(console_kinds "$serial")" "${addrs// /,}" "$exact"
		printf ' sigbus=%s lost_pages=%s guest_hwcorrupted_kb=%s wrong=%s finished=%s survived=%s' \
			"$(grep -c '^MEMCHECK sigbus' "$serial")" "${lost:-?}" "$guest_kb" \
			"$wrong" "$finished" "$survived"
		printf ' host_lost_kb=%s hardware_corrupted_kb=%s pool_pages=%s pool_held=%s hwpoison=%s buddy=%s' \
			"$lost_kb" $((hc1 - hc0)) $((total1 - total0)) $((total1 - $(hp_free "$size") - total0 + free0)) \
			$((flags >> 19 & 1)) $((flags >> 10 & 1))
		printf ' host_reports=%s' "$("$MFR_ROOT/scripts/check-kernel-log.sh" "$d/host-dmesg" >/dev/null 2>&1 && echo 0 || echo 1)"
		printf ' first_mce_in=%s' "$(mce_lines "$serial" before | sed -n '1s/.* mode=\([a-z-]*\) .*/\1/p')"
		printf ' qemu_ao=%s qemu_ar=%s' "$(grep -c 'BUS_MCEERR_AO injected' "$d/qemu.out")" "$ar_all"
		# With where KASLR put the kernel (the checker's "MEMCHECK kernel" line),
		# a reset's RIP reads against the package's System.map (its -dbg).
		printf ' reset=%s guest_resets=%s%s' "$reset_result" "$guest_resets" \
			"${reset_at:+ guest_reset_rip=$reset_at guest_text=0x$(sed -n 's/^MEMCHECK kernel \([0-9a-f]*\) T _text.*/\1/p' "$serial" | head -n1)}"
		printf ' spte_after=%s spte_poisoned=%s spte_off=%s' "${spte##*,}" "${spte%%,*}" "$spte_bad"
		[ -z "$instr" ] || printf ' %ss=%s' "$instr" "${instr_n:-0}"
		[ "$passes" = 2 ] || printf ' passes_after=%s' "$passes"
		[ -z "$multi" ] || printf ' errors=%s unreported=%s' "$nerr" "$(wc -w <<<"$unreported")"
		[ -z "$touch" ] || printf ' touched=%s touch_tries=%s touch_mces=%s touch_kinds=%s qemu_ar_exact=%s qemu_ar_touch=%s stage2_before=%s stage2_after=%s spte_over=%s' \
			"${touched:-none}" "$TOUCH_TRIES" "$(mce_lines "$serial" after | grep -c "addr=$target ")" \
			"$(mce_lines "$serial" after | kinds | tr ' ' _)" "$ar_exact" "$ar_touch" "${s2_before// /,}" "${s2_after// /,}" "$spte"
		[ -z "$pv" ] || printf ' pv_written_before=%s pv_written_after=%s' \
			"$([ "$pv_b1" != "$pv_b2" ] && echo yes || echo no)" \
			"$([ "$pv_a1" != "$pv_a2" ] && echo yes || echo no)"
		printf ' said=%s\n' "$(grep -m1 -o 'Guest MCE.*' "$d/qemu.out" | tr ' ' '_')"
	} | tee -a "$results"
	if [ "$optin" = keep ]; then
		# The error: one report at the exact 4 KiB, nothing read back
		# wrong, the guest alive (when its vCPU can recover), 4 KiB lost
		# in the guest and, for good, on the host.
		# Or two: the deferred error, then an action-required one where
		# the checker read the page before the guest's kernel had handled
		# the first (seen once in five 1 GiB runs); both at the same page.
		if [ -z "$multi" ]; then
			check "$name: the guest got one machine-check record for the error, or a deferred then an action-required one ($mces)" \
				test "$mces" = 1 -o "$mces:$(mce_lines "$serial" before | record_kinds | tr '\n' ' ')" = "2:deferred action-required "
		else
			check "$name: multi: the guest got a machine-check record for each of the $nerr errors ($mces records; none for: ${unreported:-none})" \
				test -z "$unreported"
		fi
		check "$name: at the poisoned 4 KiB page's guest physical address ($addrs)" test "$exact" = exact-4k
		check "$name: no wrong word ($wrong)" test "$wrong" = 0
		check "$name: the guest did not reset itself ($guest_resets vCPU resets${reset_at:+, the first at RIP $reset_at})" \
			test "$guest_resets" = 0
		# What KVM mapped for the guest after the error: never the
		# poisoned gfn, and every gfn to QEMU's own page for it.
		check "$name: stage-2: no entry installed after the error maps the poisoned gfn (${spte%%,*} of ${spte##*,})" \
			test "${spte%%,*}" = 0
		check "$name: stage-2: every entry installed after the error maps its gfn to the page QEMU has there (${spte_bad} of ${spte##*,} do not)" \
			test "$spte_bad" = 0
		if [ "$succor" = yes ]; then
			check "$name: the checker finished" test "$finished" = yes
			check "$name: the guest is still running ($survived)" test "$survived" = yes
			check "$name: the guest lost exactly the poisoned 4 KiB$([ "$nerr" = 1 ] || echo " pages ($nerr)") (HardwareCorrupted ${guest_kb:-?} kB, checker pages lost ${lost:-?})" \
				test "${guest_kb:-}/${lost:-}" = "$((4 * nerr))/$nerr"
		else
			echo "# $name: the vCPU has no SUCCOR: checker finished $finished, guest survived $survived"
		fi
		check "$name: the host lost $((4 * nerr)) KiB after QEMU exited ($lost_kb KiB)" test "$lost_kb" = $((4 * nerr))
		check "$name: pfn ${pfns% } HWPoison and not buddy (${pfn_states% })" \
			test "${pfn_states// /}" = "$(printf '10%.0s' $pfns)"
		# Stock leaves the poisoned hugepage in the pool, in use for good.
		check "$name: no hugepage held after QEMU exited (in use: $((total0 - free0)) before, $((total1 - $(hp_free "$size"))) after)" \
			test "$((total1 - $(hp_free "$size")))" = "$((total0 - free0))"
		[ -z "$touch" ] || judge_touch "$name" "$d" "$target" "$size" "$s2_before" "$s2_after" "$ar_touch" "$spte"
		[ -z "$pv" ] || judge_pv "$name" "$d"
		[ -z "$reset" ] || [ -n "$first" ] ||
			check "$name: after system_reset the guest booted again and its checker finished ($reset_result)" \
				test "$reset_result" = rebooted
	fi
	check "$name: no host kernel report" "$MFR_ROOT/scripts/check-kernel-log.sh" "$d/host-dmesg"
	[ -z "$reset" ] || echo "# $name: after system_reset: $reset_result"
	# An opted-in guest's kernel must take the error without a report
	# (but for the panic a machine check causes without SUCCOR).
	grep -av 'Kernel panic - not syncing: .*[Mm]achine check\|Uncorrected error without MCA Recovery' "$d/serial" >"$d/serial.reports"
	[ "$optin" != keep ] || check "$name: the guest's kernel log has no BUG/WARNING/oops" \
		"$MFR_ROOT/scripts/check-kernel-log.sh" "$d/serial.reports"
	echo "# $name: guest serial (MEMCHECK and machine-check lines):"
	grep -aE 'MEMCHECK|Machine check|Hardware Error|Memory failure|Kernel panic|MCE|gpa_touch' "$d/serial" |
		grep -v '^MEMCHECK target' | head -n 60
	echo "# $name: QEMU said:"; head -n 20 "$d/qemu.out"
	echo "# $name: host kernel log during the run:"; grep -iE 'memory failure|mce|hardware error|mfr' "$d/host-dmesg" | head -n 20
	echo "# $name: mfrctl memfd list / poison list while QEMU ran:"
	cat "$d/mfrctl-memfd" "$d/mfrctl-poison"
}

# spte_over TARGET TRACE: of the stage-2 leaves in TRACE (kvmmmu:
# kvm_mmu_set_spte lines), "N,M,T": N map the gfn of guest physical
# TARGET, M are huge ones over its aligned 2 MiB, T in all.
spte_over() {
	"$PYTHON" - "$(($1 >> 12))" "$2" <<'PY'
import re, sys
g, over, big, total = int(sys.argv[1]), 0, 0, 0
for line in open(sys.argv[2]):
    m = re.search(r"gfn ([0-9a-f]+) .* level (\d)", line)
    if not m:
        continue
    total += 1
    f, level = int(m.group(1), 16), int(m.group(2))
    n = 512 ** (level - 1)
    over += f <= g < f + n
    big += level > 1 and f < (g | 511) + 1 and (g & ~511) < f + n
print(f"{over},{big},{total}")
PY
}

# spte_off TARGET PFN HP_KB TRACE: how many stage-2 leaves in TRACE map
# a gfn of the guest's RAM to another page than QEMU's memfd has there.
# Guest physical = memfd offset (one memory backend, below 4 GiB), so
# within one hugepage pfn - gfn is the same for every leaf, and in the
# hugepage of TARGET it is PFN's.  The first MiB (ROMs, the BIOS and
# their shadows) is not looked at.
spte_off() {
	"$PYTHON" - "$(($1 >> 12))" "$(($2))" "$(($3 / 4))" "$4" <<'PY'
import re, sys
tgfn, tpfn, hp, bad = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), 0
delta = {tgfn // hp: tpfn - tgfn}
for line in open(sys.argv[4]):
    m = re.search(r"gfn ([0-9a-f]+) spte ([0-9a-f]+) .* level (\d)", line)
    if not m or int(m.group(1), 16) < 0x100:
        continue
    gfn, level = int(m.group(1), 16), int(m.group(3))
    pfn = (int(m.group(2), 16) & ((1 << 52) - 1)) >> 12
    pfn &= ~(512 ** (level - 1) - 1)
    bad += delta.setdefault(gfn // hp, pfn - gfn) != pfn - gfn
print(bad)
PY
}

# instrument_start KIND DIR QEMU_PID SOCK / instrument_stop DIR: an
# instrument, every 100 ms until stopped (a step takes up to a second
# under TCG):
#   zap    kvm.nx_huge_pages between force and off: KVM drops every
#          stage-2 mapping of every guest (kvm_mmu_zap_all_fast(), new
#          roots); put back as it was (Y or N, which it takes back too)
#   unmap  4 into QEMU's /proc/PID/clear_refs: an MMU-notifier
#          invalidation of its whole address space (the test kernel has no
#          soft-dirty, so it does nothing else), which KVM meets by zapping
#          the guest's stage-2 leaves in place, as the kept page's does;
#          counted where KVM saw it (kvm:kvm_unmap_hva_range over 0-max)
#   sync   HMP "info registers": QEMU reads the vCPU's state from KVM and
#          writes it all back before its next KVM_RUN, as it does when it
#          injects an error (kvm_mce_inject(): cpu_synchronize_state())
# instrument_stop prints how many were done.
zap_param=/sys/module/kvm/parameters/nx_huge_pages
unmap_trace=/sys/kernel/tracing/instances/mfr-vmm-unmap
instrument_start() {
	local kind=$1 dir=$2 pid=$3 sock=$4
	rm -f "$dir/instrument-stop" "$dir/instrument-n"
	case $kind in
	zap)
		(
			n=0 v=force was=$(cat "$zap_param")
			until [ -e "$dir/instrument-stop" ]; do
				echo "$v" >"$zap_param" && n=$((n + 1))
				v=$([ "$v" = force ] && echo off || echo force)
				sleep 0.1
			done
			echo "$was" >"$zap_param"
			echo "$n" >"$dir/instrument-n"
		) &
		;;
	unmap)
		rmdir "$unmap_trace" 2>/dev/null || true
		mkdir -p "$unmap_trace" &&
			echo 1 >"$unmap_trace/events/kvm/kvm_unmap_hva_range/enable" &&
			echo 1 >"$unmap_trace/tracing_on"
		(
			until [ -e "$dir/instrument-stop" ]; do
				echo 4 >"/proc/$pid/clear_refs" || break
				sleep 0.1
			done
			echo 0 >"$unmap_trace/tracing_on"
			grep -cE 'unmap range: (0x)?0+ -- (0x)?f{16}$' "$unmap_trace/trace" >"$dir/instrument-n"
			rmdir "$unmap_trace" 2>/dev/null || true
		) &
		;;
	sync)
		(
			"$PYTHON" "$hmp" "$sock" "info registers" --every 0.1 \
				--until "$dir/instrument-stop" --expect RIP= >"$dir/instrument-n.new"
			mv "$dir/instrument-n.new" "$dir/instrument-n"
		) &
		;;
	esac
}
instrument_stop() {
	touch "$1/instrument-stop"
	wait_until 60 test -s "$1/instrument-n" && cat "$1/instrument-n"
}
# instrument_what KIND: what the check says each step did.
instrument_what() {
	case $1 in
	zap) echo "KVM dropped the guest's stage-2 mappings" ;;
	unmap) echo "KVM zapped the guest's stage-2 leaves in place for an invalidation of QEMU's whole address space" ;;
	sync) echo "QEMU read the vCPU's state from KVM and wrote it back" ;;
	esac
}

# flight_start / flight_stop DIR RESETS: KVM's exits, stage-2 faults and
# injected events for the guest, in a trace instance of their own (a ring:
# the last few MiB); kept in DIR/kvm-flight when the guest reset itself,
# to show what its vCPU did last.
flight=/sys/kernel/tracing/instances/mfr-vmm-flight
flight_start() {
	local e
	rmdir "$flight" 2>/dev/null || true
	mkdir -p "$flight" || return 0
	echo 8192 >"$flight/buffer_size_kb"
	for e in kvm/kvm_exit kvm/kvm_page_fault kvm/kvm_inj_exception kvm/kvm_inj_virq \
		kvm/kvm_userspace_exit kvmmmu/kvm_mmu_set_spte; do
		echo 1 >"$flight/events/$e/enable" 2>/dev/null || true
	done
	# Stop at the vCPU's shutdown (SVM_EXIT_SHUTDOWN: a triple fault), so
	# that the boot after it does not push it out of the ring.
	echo 'traceoff if exit_reason == 127' >"$flight/events/kvm/kvm_exit/trigger" 2>/dev/null || true
	echo 1 >"$flight/tracing_on"
}
flight_stop() {
	[ -d "$flight" ] || return 0
	echo 0 >"$flight/tracing_on"
	[ "$2" = 0 ] || cat "$flight/trace" >"$1/kvm-flight"
	echo '!traceoff' >"$flight/events/kvm/kvm_exit/trigger" 2>/dev/null || true
	rmdir "$flight" 2>/dev/null || true
}

# judge_touch NAME DIR TARGET SIZE STAGE2_BEFORE STAGE2_AFTER AR_TOUCH SPTE: the
# guest read the poisoned page on purpose, TOUCH_TRIES times from user
# mode and as many from its kernel.  Each read must fault in KVM's
# stage-2 (QEMU: BUS_MCEERR_AR at that exact address) and reach the guest
# as a machine check it survives; stage-2 maps the poisoned hugepage's
# aligned 2 MiB with 4 KiB entries, never the poisoned gfn, and keeps
# huge entries elsewhere.
judge_touch() {
	local name=$1 d=$2 target=$3 size=$4 b=($5) a=($6) ar=$7 spte=$8 tries=$((2 * TOUCH_TRIES)) over inside total
	check "$name: touch: the guest read the poisoned page $tries times and each read took a machine check ($(sed -n 's/^MEMCHECK touched //p' "$d/serial"))" \
		test "$(sed -n 's/^MEMCHECK touched .* user=\([0-9]*\)\/.* kernel=\([0-9]*\)\/.*/\1 \2/p' "$d/serial")" = "$TOUCH_TRIES $TOUCH_TRIES"
	check "$name: touch: QEMU reported BUS_MCEERR_AR at guest physical $target for each read ($ar of $tries)" \
		test "$ar" = "$tries"
	check "$name: touch: the guest logged an action-required machine check at $target for each read" \
		test "$(mce_lines "$d/serial" after | grep -c "kind=action-required addr=$target ")" = "$tries"
	check "$name: touch: the guest is still running after the reads" \
		grep -q running "$d/status"
	# KVM's stage-2 page counts (debugfs), before the error and after the
	# reads: the poisoned 2 MiB (or 1 GiB) entry went, 4 KiB entries
	# came, at most the 511 healthy pages of that 2 MiB; a 1 GiB page is
	# split into 2 MiB entries but for that 2 MiB.
	echo "# $name: stage-2 pages 4k/2m/1g: before the error ${b[*]}, after the reads ${a[*]}"
	if [ "$size" = 2M ]; then
		check "$name: stage-2: one 2 MiB entry fewer (${b[1]} -> ${a[1]})" test "$((b[1] - a[1]))" = 1
	else
		check "$name: stage-2: one 1 GiB entry fewer (${b[2]} -> ${a[2]})" test "$((b[2] - a[2]))" = 1
		check "$name: stage-2: at most 511 2 MiB entries more (${b[1]} -> ${a[1]})" \
			test "$((a[1] - b[1]))" -ge 1 -a "$((a[1] - b[1]))" -le 511
	fi
	check "$name: stage-2: 1 to 511 4 KiB entries more (${b[0]} -> ${a[0]})" \
		test "$((a[0] - b[0]))" -ge 1 -a "$((a[0] - b[0]))" -le 511
	# Every leaf installed after the error (kvmmmu:kvm_mmu_set_spte):
	# none may cover the poisoned gfn; inside its 2 MiB, 4 KiB only.
	read -r over inside total <<<"${spte//,/ }"
	echo "# $name: stage-2 leaves installed after the error: $total, over the poisoned gfn: $over, huge ones over its 2 MiB: $inside"
	# The guest went on using the rest of that 2 MiB: KVM mapped it again.
	check "$name: stage-2: KVM installed entries after the error ($total)" test "${total:-0}" -gt 0
	check "$name: stage-2: only 4 KiB entries installed inside its 2 MiB ($inside huge)" test "$inside" = 0
}

# judge_pv NAME DIR: KVM stopped writing the steal-time and kvmclock areas
# in the poisoned page (the outer emulator read them twice, 5 s apart,
# after the error); before it, it wrote them.
judge_pv() {
	local name=$1 d=$2
	check "$name: pv: KVM wrote the steal-time/kvmclock areas before the error" \
		test "$(sed -n 1p "$d/pv-areas" | cut -d' ' -f2-)" != "$(sed -n 2p "$d/pv-areas" | cut -d' ' -f2-)"
	check "$name: pv: KVM wrote nothing there after the error" \
		test "$(sed -n 3p "$d/pv-areas" | cut -d' ' -f2-)" = "$(sed -n 4p "$d/pv-areas" | cut -d' ' -f2-)"
}

# reset_guest DIR SOCK: system_reset from QEMU's monitor; prints what came
# of it: "rebooted" (the checker ran to its end again), "qemu-exited"
# (QEMU's own words in qemu.out) or "no-reboot".
reset_guest() {
	local d=$1 sock=$2 done0
	done0=$(grep -c '^MEMCHECK done' "$d/serial")
	if ! kill -0 "$qemu_pid" 2>/dev/null; then
		echo qemu-exited
		return
	fi
	echo "# system_reset (t=${SECONDS}s)" >&2
	"$PYTHON" "$hmp" "$sock" system_reset >/dev/null 2>&1
	wait_until $((${VMM_BOOT_TIMEOUT:-900} + ${VMM_WAIT:-120})) bash -c "[ \$(grep -c '^MEMCHECK done' '$d/serial') -gt $done0 ] ||
		! kill -0 $qemu_pid 2>/dev/null"
	if [ "$(grep -c '^MEMCHECK done' "$d/serial")" -gt "$done0" ]; then
		"$PYTHON" "$hmp" "$sock" "info status" >"$d/status" 2>&1
		echo rebooted
	elif ! kill -0 "$qemu_pid" 2>/dev/null; then
		echo qemu-exited
	else
		vcpu_state "$qemu_pid" "$sock" >"$d/after-reset" 2>&1
		if bios_zeroed "$sock" >>"$d/after-reset"; then
			echo bios-zeroed
		else
			echo no-reboot
		fi
	fi
}

# bios_zeroed SOCK: the vCPU runs in the BIOS segment (CS f000) over
# zeroes.  QEMU leaves 0xe0000-0xfffff as RAM across a reset (the PAM
# registers keep SeaBIOS's shadow), so the reset vector jumps into that
# RAM copy; when QEMU 10's reset punched the hugepage that holds it (the
# guest's first hugepage had the error), the copy is gone: "add
# [bx+si],al" over and over, forever, QEMU "running".
bios_zeroed() {
	local regs eip bytes
	regs=$("$PYTHON" "$hmp" "$1" "info registers" 2>/dev/null)
	grep -q '^CS =f000 ' <<<"$regs" || return 1
	eip=$(sed -n 's/^EIP=\([0-9a-f]*\) .*/\1/p' <<<"$regs")
	[ -n "$eip" ] || return 1
	bytes=$("$PYTHON" "$hmp" "$1" "xp /16xb $((0xf0000 + 0x$eip))" 2>/dev/null)
	echo "# the BIOS segment at the vCPU's EIP $eip: $bytes"
	grep -q 0x <<<"$bytes" && ! grep -q '0x[0-9a-f]*[1-9a-f]' <<<"${bytes#*:}"
}

# one_more_1g_page: one more 1 GiB page in the pool, if the kernel finds
# room (each opted-in 1 GiB run dissolves one for good).
one_more_1g_page() {
	local dir n
	dir=$(hugepages_dir 1G)
	n=$(cat "$dir/nr_hugepages")
	echo $((n + 1)) >"$dir/nr_hugepages"
	[ "$(cat "$dir/nr_hugepages")" -gt "$n" ]
}

# probe_cpu CPU[/QEMU]: what the guest kernel sees of machine-check
# recovery with that -cpu (vendor, mce/mca, MCG_CAP, SUCCOR), one "probe" line.
probe_cpu() {
	local cpu=${1%/*} d=$VMM_DIR/probe pid q=${VMM_QEMU:-10}
	[ "$1" = "${1%/*}" ] || q=${1##*/}
	rm -rf "$d" && mkdir -p "$d"
	run_qemu "$q" -accel kvm -cpu "$cpu" -smp 1 -m 256M \
		-object memory-backend-memfd,id=hm,size=256M,hugetlb=on,hugetlbsize=2M,share=on \
		-machine q35,memory-backend=hm -nodefaults -display none \
		-kernel "$MFR_ROOT/build/vmm/image-${VMM_GUEST:-d13}/vmlinuz" \
		-initrd "$MFR_ROOT/build/vmm/image-${VMM_GUEST:-d13}/initramfs.cpio.gz" \
		-append "console=ttyS0 quiet panic=0 memcheck.wait=1" \
		-serial "file:$d/serial" >"$d/qemu.out" 2>&1 &
	pid=$!
	wait_until 300 bash -c "grep -qs '^MEMCHECK mcg_cap' '$d/serial' || ! kill -0 $pid 2>/dev/null"
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	echo "probe cpu=$cpu qemu=$q: $(grep -h '^MEMCHECK \(cpu\|mcg_cap\)' "$d/serial" | cut -d' ' -f2- | tr '\n' ' ')" \
		"qemu: $(tr '\n' ' ' <"$d/qemu.out")" | tee -a "$VMM_DIR/probes"
}
if [ -n "${VMM_PROBE_CPUS:-}" ]; then
	: >"$VMM_DIR/probes"
	IFS=';' read -ra cpus <<<"$VMM_PROBE_CPUS"
	for c in "${cpus[@]}"; do probe_cpu "$c"; done
fi

: >"$results"
for s in ${VMM_SCENARIOS:-stock-2m-cpfn keep-2m-cpfn}; do
	case $s in
	none) continue ;;	# VMM_SCENARIOS=none: the premise (and probes) only
	stock-*)
		[ -z "$mfrd_pid" ] || { kill "$mfrd_pid"; wait "$mfrd_pid"; mfrd_pid=; }
		# The module keeps the rules mfrd pushed: take them back.
		del_all_rules ;;
	keep-*) [ -n "$mfrd_pid" ] || check "mfrd pushed the rule for QEMU's memfd" start_mfrd ;;
	esac
	n=${VMM_RUNS:-1}
	[ "$s" = "${s%\**}" ] || n=${s##*\*}
	for ((r = 1; r <= n; r++)); do
		scenario "${s%\**}" "$r"
	done
done
if [ -n "$mfrd_pid" ]; then
	{
		echo "# mfrd's log (the journal of a systemd host):"
		cat "$T/log"
		echo "# mfrctl poison list, history and metrics:"
		"$ctl" poison list 2>&1
		"$ctl" history --db "$T/state/mfrd.db" 2>&1 | tail -n 5
		grep -E '^mfr_' "$T/metrics/mfr.prom" | grep -v ' 0$' | head -n 20
	} | if [ -n "${VMM_DEMO:-}" ]; then sed 's/^/[demo-vm]   /'; else cat; fi
	rm -rf "$VMM_DIR/mfrd" && cp -r "$T" "$VMM_DIR/mfrd"
fi
finish
