#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build the patched 6.12 kernel into $MFR_CACHE/kernel/<flavor>/: unpack
# Debian's linux-source-6.12, apply kernel-hooks/series, configure from
# kernel-hooks/<flavor>.config on top of allnoconfig, build with ccache.
# A changed series or config is patched in place and built incrementally.
# Prints the build directory (the O= tree, usable as KDIR) on stdout.
#
#   --prepare-only   unpack and patch, do not configure or build
set -euo pipefail
. "$(dirname "$0")/lib.sh"

prepare_only=
[ "${1:-}" = --prepare-only ] && prepare_only=1

[ -r "$LINUX_SOURCE_TARBALL" ] ||
	die "$LINUX_SOURCE_TARBALL missing: apt-get install linux-source-6.12 (or run 'make deps')"
[ -f "$MFR_SERIES_DIR/$KERNEL_FLAVOR.config" ] ||
	die "no config fragment $MFR_SERIES_DIR/$KERNEL_FLAVOR.config"

dir=$(kernel_dir)
key=$(kernel_key)
src=$dir/linux
obj=$dir/obj
mkdir -p "$dir"
# The source already patched for this key: a build running meanwhile
# only writes $obj, and a re-patch (another key) removes .patched first.
# So the host tests that need the source only (checkpatch.pl, the YNL
# generator) do not wait for the kernel build beside them.
if [ -n "$prepare_only" ] && [ "$(cat "$dir/.patched" 2>/dev/null)" = "$key" ]; then
	echo "$src"
	exit 0
fi
exec 9>"$dir/.lock"
flock 9

if [ "$(cat "$dir/.built" 2>/dev/null)" = "$key" ] && [ -z "$prepare_only" ]; then
	echo "$obj"
	exit 0
fi

suite=$(host_suite)
base=$(base_version "$suite")
have=$(linux_source_version)
[ "$base" = "$have" ] ||
	echo "warning: series made against $suite's linux-source-6.12 ${base:-(none in BASE)}, building on $have" >&2

if [ "$(cat "$dir/.patched" 2>/dev/null)" != "$key" ]; then
	rm -f "$dir/.built" "$dir/.patched"
	new=$dir/linux.new
	rm -rf "$new"
	mkdir -p "$new"
	echo "unpacking $LINUX_SOURCE_TARBALL ($have)" >&2
	tar -xf "$LINUX_SOURCE_TARBALL" -C "$new" --strip-components=1
	while read -r p; do
		[ -f "$MFR_SERIES_DIR/$p" ] || die "series names $p, which does not exist"
		# No fuzz: a patch that only applies loosely is treated as broken.
		if ! out=$(patch -d "$new" -p1 --batch --forward --fuzz=0 \
			--no-backup-if-mismatch -r - <"$MFR_SERIES_DIR/$p" 2>&1); then
			echo "$out" >&2
			die "${MFR_SERIES_DIR#"$MFR_ROOT"/}/$p does not apply to linux-source-6.12 $have"
		fi
		echo "applied $p" >&2
	done < <(series_patches)
	if [ -d "$src" ] && [ -d "$obj" ]; then
		# Rewrite only the files whose content changed: make then
		# rebuilds what depends on them, nothing else.
		rsync -rlc --delete "$new/" "$src/" >&2
		rm -rf "$new"
	else
		rm -rf "$src" "$obj"
		mv "$new" "$src"
	fi
	echo "$key" >"$dir/.patched"
fi
if [ -n "$prepare_only" ]; then
	echo "$src"
	exit 0
fi

frag=$MFR_SERIES_DIR/$KERNEL_FLAVOR.config
mkdir -p "$obj"
make -s -C "$src" O="$obj" ARCH=x86_64 KCONFIG_ALLCONFIG="$frag" allnoconfig >&2
# Kconfig silently drops symbols whose dependencies are not met.
missing=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=n) want="# ${line%=n} is not set" ;;
	CONFIG_*) want=$line ;;
	*) continue ;;
	esac
	if ! grep -qxF -- "$want" "$obj/.config"; then
		echo "config: '$line' did not survive Kconfig" >&2
		missing=1
	fi
done <"$frag"
[ "$missing" = 0 ] || die "config fragment $frag does not apply cleanly"

export CCACHE_DIR=${CCACHE_DIR:-$MFR_CACHE/ccache}
# The paths of a flavor's build never change, so the cache also serves a
# rebuild from nothing (a header every file includes changed).
export CCACHE_BASEDIR=$dir CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
export KBUILD_BUILD_TIMESTAMP="2025-01-01 00:00 UTC" KBUILD_BUILD_USER=mfr KBUILD_BUILD_HOST=mfr
jobs=$(($(nproc) + 1))
echo "building $KERNEL_FLAVOR kernel in $obj (-j$jobs)" >&2
make -C "$src" O="$obj" ARCH=x86_64 CC="ccache gcc" -j"$jobs" bzImage modules >&2
echo "$key" >"$dir/.built"

# Builds of earlier versions of this script, one directory per key.
rm -rf "$MFR_CACHE/kernel/$KERNEL_FLAVOR"-[0-9a-f]*[0-9a-f]
echo "$obj"
