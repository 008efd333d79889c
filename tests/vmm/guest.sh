#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Guest side of "make test-vmm" (see run.sh), in the patched kernel booted
# with an SVM vCPU: Debian's own qemu-system-x86_64 runs a KVM guest (Debian's
# linux-image-amd64, tests/vmm/memcheck.c as its init) whose RAM is a HugeTLB
# memfd, and one host pfn under the checker's memory gets corrupt-pfn.
# Each scenario leaves one "result" line in $VMM_DIR/results (key=value).
#
#   VMM_SCENARIOS  "stock-2m keep-2m" (default): stock = no rule matches
#                  QEMU's memfd, keep = mfrd's rule opts it in
#   VMM_CPU        the inner guest's -cpu (default: host,vendor=GenuineIntel)
set -u
. "$MFR_ROOT/tests/vm/lib.sh"
: "${VMM_DIR:?}"

image=$MFR_ROOT/build/vmm/image
ctl=$MFR_ROOT/build/daemon/mfrctl
mfrd=$MFR_ROOT/build/daemon/mfrd
hmp=$MFR_ROOT/tests/vmm/hmp.py
VMM_CPU=${VMM_CPU:-host,vendor=GenuineIntel}
results=$VMM_DIR/results

meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
hp_free() { cat "$(hugepages_dir "$1")/free_hugepages"; }
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
# Whether a guest can be offered MCA recovery (MCG_SER_P) at all.
echo "# KVM_X86_GET_MCE_CAP_SUPPORTED: $("$image/kvm-mce-cap")"
modprobe hwpoison_inject
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
check "hwpoison-inject's corrupt-pfn" test -w /sys/kernel/debug/hwpoison/corrupt-pfn
# The binary's md5sum as the package lists it (dpkg -V of the whole
# package takes a minute under TCG).
qemu_unmodified() {
	grep -q "^$(md5sum /usr/bin/qemu-system-x86_64 | cut -d' ' -f1)  usr/bin/qemu-system-x86_64\$" \
		/var/lib/dpkg/info/qemu-system-x86.md5sums
}
check "Debian's qemu-system-x86_64, unmodified ($(dpkg-query -W -f '${Version}' qemu-system-x86))" \
	qemu_unmodified
[ "$failures" = 0 ] || exit 1

mfrd_pid=
T=$VMM_DIR/mfrd
rm -rf "$T" && mkdir -p "$T/metrics" "$T/rules.d"
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
	wait_until 60 bash -c "'$ctl' -j rules list | grep -q memory-backend-memfd"
}
cleanup() {
	[ -n "$mfrd_pid" ] && kill "$mfrd_pid" 2>/dev/null
	[ -n "${qemu_pid:-}" ] && kill -9 "$qemu_pid" 2>/dev/null
}
trap cleanup EXIT

# scenario NAME OPTIN(keep|stock) SIZE(2M|1G) MEM [pv|reset]: pv, the
# guest's steal-time and kvmclock areas in the page that gets the error;
# reset, a system_reset from QEMU's monitor after the error, and the guest
# booted again.
scenario() {
	local name=$1 optin=$2 size=$3 mem=$4 extra=${5:-} d=$VMM_DIR/$1 hp_kb npages free0 free1
	local pv= reset=no
	[ "$extra" != pv ] || pv=1
	local target pfn hc0 hc1 flags survived finished wrong lost mces addrs exact
	local memfd_line sock total0 total1 lost_kb storm k
	# Sockets cannot live on the 9p-shared checkout.
	sock=$(mktemp -u /tmp/vmm-mon.XXXXXX)
	echo "# scenario $name: $optin, $size pages, $mem guest (t=${SECONDS}s)"
	rm -rf "$d" && mkdir -p "$d"
	hp_kb=$([ "$size" = 1G ] && echo 1048576 || echo 2048)
	npages=$(($(numfmt --from=iec "$mem") / 1024 / hp_kb))
	[ "$size" != 1G ] || one_free_1g_page
	free0=$(hp_free "$size")
	hc0=$(meminfo HardwareCorrupted)
	total0=$(cat "$(hugepages_dir "$size")/nr_hugepages")
	nice -n 0 qemu-system-x86_64 -accel kvm -cpu "$VMM_CPU" -smp 1 -m "$mem" \
		-object "memory-backend-memfd,id=hm,size=$mem,hugetlb=on,hugetlbsize=${size},share=on,prealloc=on" \
		-machine q35,memory-backend=hm -nodefaults -display none \
		-kernel "$image/vmlinuz" -initrd "$image/initramfs.cpio.gz" \
		-append "console=ttyS0 quiet panic=0 memcheck.wait=${VMM_WAIT:-180}${pv:+ memcheck.pv=1}" \
		-serial "file:$d/serial" -monitor "unix:$sock,server=on,wait=off" \
		>"$d/qemu.out" 2>&1 &
	qemu_pid=$!
	echo "$qemu_pid" >"$d/qemu.pid"
	if ! check "$name: the guest's checker filled its memory" \
		wait_until "${VMM_BOOT_TIMEOUT:-900}" guest_ready "$d/serial"; then
		echo "# $name: QEMU said:"; cat "$d/qemu.out"; tail -n 20 "$d/serial"
		kill -9 "$qemu_pid" 2>/dev/null; wait "$qemu_pid"; qemu_pid=
		return
	fi
	free1=$(hp_free "$size")
	check "$name: guest RAM is $npages $size hugepages (free $free0 -> $free1)" \
		test $((free0 - free1)) = "$npages"
	memfd_line=$("$ctl" memfd list 2>&1 | awk -v p="$qemu_pid" '$3 == p')
	if [ "$optin" = keep ]; then
		check "$name: QEMU's memfd is opted in (mfrctl memfd list: $memfd_line)" \
			grep -q 'memory-backend-memfd.*keep' <<<"$memfd_line"
	else
		check "$name: QEMU's memfd is not opted in" test -z "$memfd_line"
	fi
	target=$(sed -n 's/^MEMCHECK target gpa=\(0x[0-9a-f]*\) .*/\1/p' "$d/serial" | head -n1)
	if [ -n "$pv" ]; then
		wait_until 60 grep -q '^MEMCHECK pv' "$d/serial"
		check "$name: the guest put its steal-time and kvmclock areas at $target" \
			grep -q "^MEMCHECK pv .* at gpa=$target: set" "$d/serial"
	fi
	pfn=$(host_pfn "$qemu_pid" "$target")
	check "$name: host pfn $pfn backs guest physical $target" test -n "$pfn"
	echo "# inject: corrupt-pfn $pfn (guest physical $target) (t=${SECONDS}s)"
	echo "$pfn" >/sys/kernel/debug/hwpoison/corrupt-pfn
	# The checker ends two passes after its first machine check or
	# signal, or VMM_WAIT seconds after it was ready without one.
	# A guest that cannot recover may take the same machine check over
	# and over: 20 of them end the wait (a storm).
	wait_until $((${VMM_WAIT:-180} + 120)) bash -c "grep -qE '^MEMCHECK done|Kernel panic' '$d/serial' ||
		! kill -0 $qemu_pid 2>/dev/null ||
		[ \$(grep -ac '^\[.*Machine Check Exception' '$d/serial') -ge 20 ]"
	# The kernel's console lines, not the checker's copies of them.
	storm=$(grep -ac '^\[.*Machine Check Exception' "$d/serial")
	sleep 2
	"$ctl" memfd list >"$d/mfrctl-memfd" 2>&1
	"$ctl" poison list >"$d/mfrctl-poison" 2>&1
	kill -0 "$qemu_pid" 2>/dev/null && "$PYTHON" "$hmp" "$sock" "info status" >"$d/status" 2>&1
	if [ "$extra" = reset ]; then
		reset_guest "$d" "$sock"
		reset=$(cat "$d/reset")
	fi
	survived=no
	grep -q 'running' "$d/status" 2>/dev/null && survived=yes
	grep -aq 'Kernel panic' "$d/serial" && survived=panic
	finished=no
	grep -q '^MEMCHECK done' "$d/serial" && finished=yes
	# Running, but taking the same machine check over and over.
	[ "$survived/$finished" = yes/no ] && [ "$storm" -ge 20 ] && survived=storm
	wrong=$(grep -c '^MEMCHECK wrong' "$d/serial")
	lost=$(sed -n 's/^MEMCHECK done .*lost_pages=\([0-9]*\).*/\1/p' "$d/serial")
	# The checker's count, or the kernel's if the checker never ran again.
	mces=$(grep -c '^MEMCHECK mce ' "$d/serial")
	[ "$storm" -le "$mces" ] || mces=$storm
	addrs=$({
		sed -n 's/^MEMCHECK mce .*addr=\(0x[0-9a-f]*\) .*/\1/p' "$d/serial"
		sed -n 's/.*Hardware Error\]: TSC [0-9a-f]* ADDR \([0-9a-f]*\) .*/0x\1/p' "$d/serial"
	} | sort -u | tr '\n' ' ')
	# Each address given: the poisoned 4 KiB page, or its hugepage's start.
	exact=
	for a in $addrs; do
		if [ $((a)) = $((target)) ]; then k=exact-4k
		elif [ $((a)) = $((target & ~(hp_kb * 1024 - 1))) ]; then k=${size,,}-start
		else k=other; fi
		case "+$exact+" in *"+$k+"*) ;; *) exact=${exact:+$exact+}$k ;; esac
	done
	exact=${exact:-none}
	"$PYTHON" "$hmp" "$sock" quit >/dev/null 2>&1
	wait "$qemu_pid"
	qemu_pid=
	sleep 2
	hc1=$(meminfo HardwareCorrupted)
	flags=$(kpageflags "$pfn")
	total1=$(cat "$(hugepages_dir "$size")/nr_hugepages")
	lost_kb=$(hugepage_lost_kb "$pfn" "$size")
	{
		printf 'result %s optin=%s size=%s cpu=%s target=%s pfn=%s' "$name" "$optin" "$size" "$VMM_CPU" "$target" "$pfn"
		printf ' guest_mces=%s guest_addrs=%s exact=%s' "$mces" "${addrs// /,}" "$exact"
		printf ' sigbus=%s lost_pages=%s guest_hwcorrupted_kb=%s wrong=%s finished=%s survived=%s' \
			"$(grep -c '^MEMCHECK sigbus' "$d/serial")" "${lost:-?}" \
			"$(sed -n 's/^MEMCHECK meminfo HardwareCorrupted: *\([0-9]*\) kB.*/\1/p' "$d/serial" | head -n1)" \
			"$wrong" "$finished" "$survived"
		printf ' host_lost_kb=%s hardware_corrupted_kb=%s pool_pages=%s hwpoison=%s buddy=%s' \
			"$lost_kb" $((hc1 - hc0)) $((total1 - total0)) $((flags >> 19 & 1)) $((flags >> 10 & 1))
		printf ' first_mce_in=%s' "$(grep -a -m1 'Hardware Error\]: RIP' "$d/serial" |
			sed 's/.*RIP[^0-9]*\([0-9a-f]*\):.*/\1/; s/^33$/user/; s/^10$/kernel/')"
		printf ' qemu_ao=%s qemu_ar=%s' "$(grep -c 'BUS_MCEERR_AO injected' "$d/qemu.out")" \
			"$(grep -c 'BUS_MCEERR_AR injected' "$d/qemu.out")"
		printf ' reset=%s' "$reset"
		printf ' qemu=%s\n' "$(grep -m1 -o 'Guest MCE.*' "$d/qemu.out" | tr ' ' '_')"
	} | tee -a "$results"
	if [ "$optin" = keep ]; then
		# Acceptance: one machine check at the exact 4 KiB, nothing read
		# back wrong, the guest alive, 4 KiB lost on the host for good.
		check "$name: the guest got exactly one machine check ($mces)" test "$mces" = 1
		check "$name: at the poisoned 4 KiB page's guest physical address ($addrs)" test "$exact" = exact-4k
		check "$name: no wrong word ($wrong)" test "$wrong" = 0
		# Without MCG_SER_P the guest's own recovery is chance (a machine
		# check in its kernel mode panics it): reported, not asserted.
		if grep -q '^MEMCHECK mcg_cap=.* ser=1' "$d/serial"; then
			check "$name: the checker finished" test "$finished" = yes
			check "$name: the guest is still running" test "$survived" = yes
		else
			echo "# $name: the vCPU has no MCG_SER_P: checker finished $finished, guest survived $survived"
		fi
		check "$name: the host lost 4 KiB after QEMU exited ($lost_kb KiB)" test "$lost_kb" = 4
		check "$name: pfn $pfn HWPoison and not buddy" test "$((flags >> 19 & 1))$((flags >> 10 & 1))" = 10
	fi
	[ "$extra" != reset ] || echo "# $name: after system_reset: $reset"
	# An opted-in guest's kernel must take the error without a report.
	# (but for the panic a machine check causes without MCG_SER_P).
	grep -av 'Kernel panic - not syncing: Fatal machine check' "$d/serial" >"$d/serial.reports"
	[ "$optin" != keep ] || check "$name: the guest's kernel log has no BUG/WARNING/oops" \
		"$MFR_ROOT/scripts/check-kernel-log.sh" "$d/serial.reports"
	echo "# $name: guest serial (MEMCHECK and machine-check lines):"
	grep -E 'MEMCHECK|Machine check|Hardware Error|Memory failure|Kernel panic|MCE' "$d/serial" | grep -v '^MEMCHECK target' | head -n 40
	echo "# $name: QEMU said:"; cat "$d/qemu.out"
	echo "# $name: mfrctl memfd list / poison list while QEMU ran:"
	cat "$d/mfrctl-memfd" "$d/mfrctl-poison"
}

# reset_guest DIR SOCK: system_reset from QEMU's monitor; DIR/reset says
# what came of it: "rebooted" (the checker filled its memory again),
# "qemu-exited" (QEMU's own words in qemu.out) or "no-reboot".
reset_guest() {
	local d=$1 sock=$2 ready0
	ready0=$(grep -c '^MEMCHECK ready' "$d/serial")
	if ! kill -0 "$qemu_pid" 2>/dev/null; then
		echo qemu-exited >"$d/reset"
		return
	fi
	echo "# system_reset (t=${SECONDS}s)"
	"$PYTHON" "$hmp" "$sock" system_reset >/dev/null 2>&1
	wait_until "${VMM_BOOT_TIMEOUT:-900}" bash -c "[ \$(grep -c '^MEMCHECK ready' '$d/serial') -gt $ready0 ] ||
		! kill -0 $qemu_pid 2>/dev/null"
	if [ "$(grep -c '^MEMCHECK ready' "$d/serial")" -gt "$ready0" ]; then
		echo rebooted >"$d/reset"
	elif ! kill -0 "$qemu_pid" 2>/dev/null; then
		echo qemu-exited >"$d/reset"
	else
		echo no-reboot >"$d/reset"
	fi
}

# probe_cpu CPU: what the guest kernel sees of machine-check recovery with
# that -cpu (vendor, mce/mca, MCG_CAP, SUCCOR), one "probe" line.
probe_cpu() {
	local cpu=$1 d=$VMM_DIR/probe pid
	rm -rf "$d" && mkdir -p "$d"
	qemu-system-x86_64 -accel kvm -cpu "$cpu" -smp 1 -m 256M \
		-object memory-backend-memfd,id=hm,size=256M,hugetlb=on,hugetlbsize=2M,share=on \
		-machine q35,memory-backend=hm -nodefaults -display none \
		-kernel "$image/vmlinuz" -initrd "$image/initramfs.cpio.gz" \
		-append "console=ttyS0 quiet panic=0 memcheck.wait=1" \
		-serial "file:$d/serial" >"$d/qemu.out" 2>&1 &
	pid=$!
	wait_until 300 bash -c "grep -qs '^MEMCHECK mcg_cap' '$d/serial' || ! kill -0 $pid 2>/dev/null"
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	echo "probe cpu=$cpu: $(grep -h '^MEMCHECK \(cpu\|mcg_cap\)' "$d/serial" | cut -d' ' -f2- | tr '\n' ' ')" \
		"qemu: $(tr '\n' ' ' <"$d/qemu.out")" | tee -a "$VMM_DIR/probes"
}
if [ -n "${VMM_PROBE_CPUS:-}" ]; then
	: >"$VMM_DIR/probes"
	IFS=';' read -ra cpus <<<"$VMM_PROBE_CPUS"
	for c in "${cpus[@]}"; do probe_cpu "$c"; done
fi

: >"$results"
for s in ${VMM_SCENARIOS:-stock-2m keep-2m}; do
	case $s in
	none) continue ;;	# VMM_SCENARIOS=none: the premise (and probes) only
	stock-*)
		[ -z "$mfrd_pid" ] || { kill "$mfrd_pid"; wait "$mfrd_pid"; mfrd_pid=; }
		# The module keeps the rules mfrd pushed: take them back.
		del_all_rules ;;
	keep-*) [ -n "$mfrd_pid" ] || check "mfrd pushed the rule for QEMU's memfd" start_mfrd ;;
	esac
	# NAME is OPTIN-SIZE[-pv|-reset]: stock-2m, keep-1g, keep-2m-pv, ...
	IFS=- read -r optin size extra <<<"$s"
	size=${size^^}
	scenario "$s" "$optin" "$size" "$([ "$size" = 1G ] && echo 1G || echo "${VMM_MEM:-512M}")" "$extra"
done
if [ -n "$mfrd_pid" ]; then
	echo "# mfrd's log (the journal of a systemd host):"
	cat "$T/log"
	echo "# mfrctl history and metrics:"
	"$ctl" history --db "$T/state/mfrd.db" 2>&1 | tail -n 5
	grep -E '^mfr_' "$T/metrics/mfr.prom" | head -n 20
fi
finish
