#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Bisectability of kernel-hooks/series: for each prefix (patch 1, 1-2, ...,
# all), build the kernel the way scripts/build-kernel.sh builds it (the
# same script, on a series directory holding only that prefix), then boot
# it without mfr.ko and run the stock pin test (tests/bisect/stock-pin.sh):
# a HugeTLB memfd without the flag gets the stock hugepage-sized SIGBUS and
# leaks its hugepage at close, and MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED is
# EINVAL before the uAPI patch and EOPNOTSUPP (no module) from it on.
# Every boot's kernel log is checked as vm-run.sh checks it.  Prints a
# table (patch | builds | boots+test | time) and the total time; exits
# non-zero if a prefix does not build or does not pass.  One build and one
# boot per patch: not part of "make test".
#
# Environment:
#   BISECT_DRY_RUN=1     print the plan (prefixes, config, expectations,
#                        build directories) and build nothing
#   BISECT_PATCHES="1 2" only these prefixes (numbers in series order,
#                        ranges too: "1 4-6")
#   BISECT_FLAVOR        config fragment kernel-hooks/<flavor>.config
#                        (debug, the test kernel's; bench has no debug
#                        options and boots faster)
#   BISECT_NO_BOOT=1     build only
#
# The prefixes are built one after the other in $MFR_CACHE/kernel/bisect,
# each incrementally on the one before (build-kernel.sh); the last, the
# whole series, is the ordinary <flavor> build.  Kconfig symbols
# that a later patch introduces are left out of a prefix's fragment.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

flavor=${BISECT_FLAVOR:-debug}
frag=$MFR_SERIES_DIR/$flavor.config
[ -f "$frag" ] || die "no config fragment $frag"
mapfile -t patches < <(series_patches)
n=${#patches[@]}
[ "$n" -gt 0 ] || die "empty series"

if [ -n "${BISECT_PATCHES:-}" ]; then
	prefixes=()
	for k in $BISECT_PATCHES; do
		[[ $k =~ ^([0-9]+)(-([0-9]+))?$ ]] ||
			die "BISECT_PATCHES: '$k' is not a patch number or range (1..$n, e.g. 3 or 2-5)"
		lo=$((10#${BASH_REMATCH[1]}))
		hi=$((10#${BASH_REMATCH[3]:-${BASH_REMATCH[1]}}))
		[ "$lo" -ge 1 ] && [ "$hi" -le "$n" ] && [ "$lo" -le "$hi" ] ||
			die "BISECT_PATCHES: '$k' is outside 1..$n"
		mapfile -t -O ${#prefixes[@]} prefixes < <(seq "$lo" "$hi")
	done
	mapfile -t prefixes < <(printf '%s\n' "${prefixes[@]}" | sort -n -u)
else
	mapfile -t prefixes < <(seq 1 "$n")
fi

# Kconfig symbols each patch introduces ("+config FOO" in a Kconfig file).
new_symbols() {
	sed -n 's/^+\(menu\)\{0,1\}config[[:space:]]\{1,\}\([A-Za-z0-9_]\{1,\}\).*/\2/p' \
		"$MFR_SERIES_DIR/$1"
}

# The patch that adds MFD_MF_KEEP_UE_MAPPED to the uAPI (0 if none).
flag_patch=0
for i in "${!patches[@]}"; do
	if grep -q '^+#define[[:space:]]\{1,\}MFD_MF_KEEP_UE_MAPPED' "$MFR_SERIES_DIR/${patches[$i]}"; then
		flag_patch=$((i + 1))
		break
	fi
done

work=$MFR_CACHE/bisect
logs=$MFR_ROOT/build/bisect
mkdir -p "$work" "$logs"

# series_dir K: a series directory holding patches 1..K and the fragment
# without the symbols of patches K+1..N; prints "DIR FLAVOR DROPPED".
series_dir() {
	local k=$1 dir=$work/series-$1 i dropped=() s
	if [ "$k" = "$n" ]; then
		echo "$MFR_SERIES_DIR $flavor -"
		return
	fi
	rm -rf "$dir" && mkdir -p "$dir"
	cp "$MFR_SERIES_DIR/BASE" "$dir/"
	: >"$dir/series"
	for ((i = 0; i < k; i++)); do
		cp "$MFR_SERIES_DIR/${patches[$i]}" "$dir/"
		echo "${patches[$i]}" >>"$dir/series"
	done
	cp "$frag" "$dir/bisect.config"
	for ((i = k; i < n; i++)); do
		for s in $(new_symbols "${patches[$i]}"); do
			if grep -q "^CONFIG_$s=\|^# CONFIG_$s is not set" "$dir/bisect.config"; then
				sed -i "/^CONFIG_$s=/d; /^# CONFIG_$s is not set/d" "$dir/bisect.config"
				dropped+=("CONFIG_$s")
			fi
		done
	done
	echo "$dir bisect ${dropped[*]:--}"
}

expect_flag() {
	if [ "$flag_patch" -gt 0 ] && [ "$1" -ge "$flag_patch" ]; then
		echo EOPNOTSUPP
	else
		echo EINVAL
	fi
}

fmt_time() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

if [ -n "${BISECT_DRY_RUN:-}" ]; then
	echo "bisect-check plan: ${#prefixes[@]} of $n prefixes, fragment $flavor.config, stock pin test without mfr.ko"
	echo "uAPI flag from patch $flag_patch on (MFD_HUGETLB | MFD_MF_KEEP_UE_MAPPED: EINVAL before, EOPNOTSUPP from it)"
	echo
	{
		echo "prefix|last patch|config left out|flag expect|build directory|cached"
		for k in "${prefixes[@]}"; do
			read -r dir fl dropped < <(series_dir "$k")
			bdir=$(MFR_SERIES_DIR=$dir KERNEL_FLAVOR=$fl kernel_dir)
			cached=no
			[ "$(cat "$bdir/.built" 2>/dev/null)" = "$(MFR_SERIES_DIR=$dir KERNEL_FLAVOR=$fl kernel_key)" ] &&
				cached=yes
			echo "1-$k|${patches[$((k - 1))]}|$dropped|$(expect_flag "$k")|${bdir/#$HOME/\~}|$cached"
		done
	} | print_table
	echo
	echo "each prefix: MFR_SERIES_DIR=<series dir> KERNEL_FLAVOR=<flavor> scripts/build-kernel.sh,"
	echo "then KDIR=<obj> VM_NO_MODULE=1 scripts/vm-run.sh tests/bisect/stock-pin.sh <flag expect>"
	echo "(dry run: nothing built; logs would go to ${logs#"$MFR_ROOT"/})"
	exit 0
fi

[ -x "$MFR_ROOT/build/helpers/stock_hwpoison" ] && [ -x "$MFR_ROOT/build/helpers/memfd_flags" ] ||
	die "helpers not built: run 'make helpers' (or 'make bisect-check')"

start=$(date +%s)
rows=()
failed=0
for k in "${prefixes[@]}"; do
	t0=$(date +%s)
	p=${patches[$((k - 1))]}
	read -r dir fl _ < <(series_dir "$k")
	echo "== 1-$k: $p" >&2
	built=FAIL
	booted=-
	if obj=$(MFR_SERIES_DIR=$dir KERNEL_FLAVOR=$fl "$MFR_ROOT/scripts/build-kernel.sh" \
		2>"$logs/$k-build.log"); then
		built=ok
		if [ -n "${BISECT_NO_BOOT:-}" ]; then
			booted=skipped
		elif KDIR=$obj VM_NO_MODULE=1 VM_MEM=2G VM_APPEND="hugepages=4" \
			VM_TIMEOUT=${VM_TIMEOUT:-900} "$MFR_ROOT/scripts/vm-run.sh" \
			"$MFR_ROOT/tests/bisect/stock-pin.sh $(expect_flag "$k")" \
			>"$logs/$k-vm.log" 2>&1; then
			booted=ok
		else
			booted=FAIL
			failed=1
			tail -n 30 "$logs/$k-vm.log" | sed 's/^/    /' >&2
		fi
	else
		failed=1
		tail -n 30 "$logs/$k-build.log" | sed 's/^/    /' >&2
	fi
	rows+=("$(printf '%04d' "$k") ${p#[0-9][0-9][0-9][0-9]-}|$built|$booted|$(fmt_time $(($(date +%s) - t0)))")
done

echo
{
	echo "patch|builds|boots+test|time"
	printf '%s\n' "${rows[@]}"
} | print_table
echo
echo "bisect-check: ${#prefixes[@]} prefixes in $(fmt_time $(($(date +%s) - start))) (logs in ${logs#"$MFR_ROOT"/})"
[ "$failed" = 0 ] || {
	echo "bisect-check: FAILED" >&2
	exit 1
}
