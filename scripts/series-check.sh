#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Apply kernel-hooks/series with "patch -p1 --fuzz=0", in series order, to
# every linux-source-6.12 version the package archive offers ("apt-cache
# madison"), and print a table: version | result | first failing patch.
# Versions at or above kernel-hooks/BASE must take the whole series (a
# failure there makes the exit status non-zero and names the patch);
# older versions are reported for information only.
#
# Downloads ("apt-get download") are kept in $MFR_CACHE/series-check/debs;
# for each version only the files the series touches are unpacked, once
# per set of touched files, into $MFR_CACHE/series-check/trees.  The
# version installed in /usr/src is taken from there, not downloaded.
#
# Environment:
#   SERIES_CHECK_VERSIONS  space-separated package versions to check
#                          instead of those apt-cache offers
#   SERIES_CHECK_VERBOSE=1 print patch's output for a failing patch
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PKG=linux-source-6.12
cache=$MFR_CACHE/series-check
debs=$cache/debs
trees=$cache/trees
mkdir -p "$debs" "$trees"
exec 9>"$cache/.lock"
flock 9

start=$(date +%s)
base=$(sed -n "s/^Debian package $PKG \([^ ]*\).*/\1/p" "$MFR_SERIES_DIR/BASE")
[ -n "$base" ] || die "no '$PKG VERSION' in $MFR_SERIES_DIR/BASE"

mapfile -t patches < <(series_patches)
[ ${#patches[@]} -gt 0 ] || die "empty series"
for p in "${patches[@]}"; do
	[ -f "$MFR_SERIES_DIR/$p" ] || die "series names $p, which does not exist"
done

# Every path the series reads or writes (git-style headers: a/X b/Y).
files=$(for p in "${patches[@]}"; do
	sed -n 's|^diff --git a/\([^ ]*\) b/\([^ ]*\)$|\1\n\2|p' "$MFR_SERIES_DIR/$p"
done | sort -u)
[ -n "$files" ] || die "no 'diff --git' headers in the series"
fileset=$(printf '%s\n' "$files" | sha256sum | cut -c1-12)

if [ -n "${SERIES_CHECK_VERSIONS:-}" ]; then
	read -ra versions <<<"$SERIES_CHECK_VERSIONS"
else
	mapfile -t versions < <(apt-cache madison "$PKG" | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | sort -u)
	[ ${#versions[@]} -gt 0 ] ||
		die "apt-cache madison $PKG offers nothing (apt-get update? a deb-src/security line missing?)"
fi
# Newest first.
mapfile -t versions < <(printf '%s\n' "${versions[@]}" | sort -u -V -r)

# tarball_stream VERSION DEB: the source tarball of that version on stdout,
# from /usr/src if that is the version installed, else from DEB.
tarball_stream() {
	if [ -z "$2" ]; then
		cat "$LINUX_SOURCE_TARBALL"
	else
		dpkg-deb --fsys-tarfile "$2" | tar -xO "./usr/src/$PKG.tar.xz"
	fi
}

# The .deb of VERSION in the cache, downloaded if missing.
deb_of() {
	local v=$1 f
	f=$(find "$debs" -maxdepth 1 -name "${PKG}_*_all.deb" | while read -r d; do
		[ "$(dpkg-deb -f "$d" Version)" = "$v" ] && echo "$d"
	done | head -n1)
	if [ -z "$f" ]; then
		echo "downloading $PKG=$v" >&2
		# Root's download is "unsandboxed" (the _apt user cannot write
		# the cache): a warning, not an error.
		(cd "$debs" && apt-get download -q "$PKG=$v" 2>&1) |
			{ grep -v '^W: Download is performed unsandboxed' || true; } >&2
		[ "${PIPESTATUS[0]}" = 0 ] || return 1
		f=$(deb_of "$v")
	fi
	[ -n "$f" ] && echo "$f"
}

# pristine VERSION: a directory with the touched files of that version
# (files the series creates are absent, as in the tarball), unpacked once.
pristine() {
	local v=$1 dir=$trees/$1-$fileset tmp out deb
	if [ ! -f "$dir/.done" ]; then
		rm -rf "$trees/$v"-* && mkdir -p "$dir"
		tmp=$(mktemp)
		printf "$PKG/%s\n" $files >"$tmp"
		deb=
		if [ "$(linux_source_version)" != "$v" ] || [ ! -r "$LINUX_SOURCE_TARBALL" ]; then
			deb=$(deb_of "$v") || {
				echo "cannot download $PKG=$v" >&2
				rm -f "$tmp"
				return 1
			}
		fi
		echo "unpacking the series' files from $PKG $v" >&2
		# Members the series creates are "Not found in archive": fine.
		out=$(tarball_stream "$v" "$deb" | tar -xJ -C "$dir" --strip-components=1 -T "$tmp" 2>&1) || true
		rm -f "$tmp"
		if printf '%s\n' "$out" | grep -v -e 'Not found in archive' \
			-e 'Exiting with failure status due to previous errors' | grep -q .; then
			printf '%s\n' "$out" >&2
			return 1
		fi
		# The tarball must have held the files (a truncated stream would not).
		[ -f "$dir/mm/memory-failure.c" ] || return 1
		touch "$dir/.done"
	fi
	echo "$dir"
}

# apply DIR VERSION: apply the series to DIR; prints the first failing patch.
apply() {
	local dir=$1 v=$2 p out
	for p in "${patches[@]}"; do
		if ! out=$(patch -d "$dir" -p1 --batch --forward --fuzz=0 \
			--no-backup-if-mismatch -r - <"$MFR_SERIES_DIR/$p" 2>&1); then
			if [ -n "${SERIES_CHECK_VERBOSE:-}" ]; then
				echo "== $v: $p" >&2
				printf '%s\n' "$out" | sed 's/^/    /' >&2
			fi
			echo "$p"
			return 1
		fi
	done
}

rows=()
failures=()
failed=0
newest_ok=
for v in "${versions[@]}"; do
	if dpkg --compare-versions "$v" ge "$base"; then
		role=required
	else
		role=info
	fi
	t0=$(date +%s)
	first=-
	if ! src=$(pristine "$v"); then
		result="no source"
	else
		work=$(mktemp -d "$cache/work.XXXXXX")
		cp -a "$src/." "$work/"
		if first=$(apply "$work" "$v"); then
			result=applies
			first=-
			[ -n "$newest_ok" ] || newest_ok=$v
		else
			result="does not apply"
		fi
		rm -rf "$work"
	fi
	if [ "$role" = required ] && [ "$result" != applies ]; then
		failed=1
		if [ "$first" = - ]; then failures+=("$v: $result"); else failures+=("$v: $first"); fi
		result="FAIL: $result"
	elif [ "$role" = info ] && [ "$result" != applies ]; then
		result="$result (below BASE, info)"
	fi
	rows+=("$v|$result|$first|$(($(date +%s) - t0))s")
done

printf '\nseries: %d patches, BASE %s\n\n' "${#patches[@]}" "$base"
{
	echo "version|result|first failing patch|time"
	printf '%s\n' "${rows[@]}"
} | print_table
echo
echo "series-check: ${#versions[@]} versions in $(($(date +%s) - start)) s"
printf '%s\n' "${versions[@]}" | grep -qxF -- "$base" ||
	echo "note: BASE ($base) is not among the versions checked"
if [ -n "$newest_ok" ] && dpkg --compare-versions "$newest_ok" gt "$base"; then
	echo "note: $newest_ok takes the series; BASE ($base) could move up to it"
fi
if [ "$failed" != 0 ]; then
	echo "series-check: FAILED: the series does not apply with --fuzz=0 to a version at or above BASE:" >&2
	printf '  %s\n' "${failures[@]}" >&2
	exit 1
fi
echo "series-check: OK (every version at or above BASE takes the whole series)"
