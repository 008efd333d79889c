#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# scripts/vm-run.sh boots once more, loudly, when the emulator died of its
# own assertion before the guest reached its command, and only then: a
# stand-in for virtme-ng plays each boot (an abort, a guest that dies, a
# boot that runs its command).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
# vm-run.sh keeps a failed boot's files in build/vm/run.*: these are ours.
mkdir -p "$root/build/vm"
ls -d "$root"/build/vm/run.* >"$tmp/runs-before" 2>/dev/null || true
cleanup() {
	ls -d "$root"/build/vm/run.* 2>/dev/null | grep -vxF -f "$tmp/runs-before" |
		xargs -r rm -rf
	rm -rf "$tmp"
}
trap cleanup EXIT

# A kernel build directory as far as vm-run.sh looks at it.
kdir=$tmp/kdir
mkdir -p "$kdir/arch/x86/boot" "$kdir/.virtme_mods/lib/modules/0.0.0"
: >"$kdir/arch/x86/boot/bzImage"
: >"$kdir/modules.order"
touch -d '1 minute' "$kdir/.virtme_mods/lib/modules/0.0.0/modules.dep"

# The stand-in: boot N does what line N of $tmp/plan says.
cat >"$tmp/vng" <<'STUB'
#!/usr/bin/env bash
state=${0%/*}
n=$(($(cat "$state/boots" 2>/dev/null || echo 0) + 1))
echo "$n" >"$state/boots"
while [ $# -gt 0 ]; do
	[ "$1" = --exec ] && out=${2##* }
	shift
done
case $(sed -n "${n}p" "$state/plan") in
abort)
	echo "qemu-system-x86_64: system/physmem.c:2678: iotlb_to_section: Assertion \`section_index < d->map.sections_nb' failed." >&2
	exit 255 ;;
die)
	echo "a guest that died before its command" >&2
	exit 255 ;;
run)
	: >"$out/started"
	: >"$out/dmesg"
	echo 0 >"$out/rc"
	exit 0 ;;
esac
exit 1
STUB
chmod +x "$tmp/vng"

failed=0
# case PLAN WANT_RC WANT_BOOTS WANT_LINE: vm-run.sh against that plan.
case_() {
	local plan=$1 want_rc=$2 want_boots=$3 want_line=$4 rc=0 boots
	printf '%s\n' $plan >"$tmp/plan"
	rm -f "$tmp/boots"
	VNG=$tmp/vng KDIR=$kdir VM_TIMEOUT=600 "$root/scripts/vm-run.sh" true \
		>"$tmp/out" 2>"$tmp/err" || rc=$?
	boots=$(cat "$tmp/boots" 2>/dev/null || echo 0)
	if [ "$rc" = "$want_rc" ] && [ "$boots" = "$want_boots" ] &&
		{ [ -z "$want_line" ] || grep -q "$want_line" "$tmp/err"; } &&
		{ [ -n "$want_line" ] || ! grep -q 'QEMU ABORTED' "$tmp/err"; }; then
		echo "ok - '$plan': exit $rc after $boots boot(s)"
	else
		echo "FAIL: '$plan': exit $rc after $boots boot(s), wanted $want_rc after $want_boots" \
			"${want_line:+with \"$want_line\"}; its stderr:"
		sed 's/^/    /' "$tmp/err"
		failed=$((failed + 1))
	fi
}
case_ "abort run" 0 2 "QEMU ABORTED before the guest reached its command (boot 1): qemu-system-x86_64: .*iotlb_to_section"
case_ "abort abort run" 124 2 "QEMU ABORTED before the guest reached its command (boot 2)"
case_ "die run" 124 1 ""
case_ "run" 0 1 ""
[ "$failed" = 0 ]
