#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Apply kernel-hooks/series with "patch -p1 --fuzz=0", in series order, to
# every linux-source-6.12 version each Debian distribution offers (Debian
# 12 bookworm and Debian 13 trixie, their -security and -updates suites:
# "apt-cache madison" through scripts/suite-apt.sh, whatever the host's
# own sources are), and print a table: distribution | version | suites |
# result | first failing patch.  kernel-hooks/BASE names one version per
# distribution: versions at or above it must take the whole series (a
# failure there makes the exit status non-zero and names the patch);
# older versions are reported for information only.
#
# Downloads ("apt-get download") are kept in $MFR_CACHE/series-check/debs;
# for each version only the files the series touches are unpacked, once
# per set of touched files, into $MFR_CACHE/series-check/trees.  The
# version installed in /usr/src is taken from there, not downloaded.
#
# Environment:
#   SERIES_CHECK_SUITES    distributions to walk (default "bookworm trixie")
#   SERIES_CHECK_VERSIONS  space-separated SUITE:VERSION (a bare VERSION is
#                          bookworm's) to check instead of those offered
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
read -ra suites <<<"${SERIES_CHECK_SUITES:-bookworm trixie}"
declare -A base
for d in "${suites[@]}"; do
	base[$d]=$(base_version "$d")
	[ -n "${base[$d]}" ] || die "$MFR_SERIES_DIR/BASE names no $PKG version for $d"
done

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

# Every version to check as "SUITE VERSION FROM" lines (FROM: the suites
# of that distribution offering it, comma-separated).
if [ -n "${SERIES_CHECK_VERSIONS:-}" ]; then
	for e in $SERIES_CHECK_VERSIONS; do
		case $e in
		*:*) echo "${e%%:*} ${e#*:} -" ;;
		*) echo "bookworm $e -" ;;
		esac
	done >"$cache/versions"
else
	for d in "${suites[@]}"; do
		out=$("$MFR_ROOT/scripts/suite-apt.sh" "$d" apt-cache madison "$PKG") ||
			die "apt-cache madison $PKG for $d failed"
		[ -n "$out" ] || die "$d offers no $PKG"
		# "linux-source-6.12 | VERSION | URI SUITE/main amd64 Packages"
		awk -F'|' -v d="$d" '{
			gsub(/ /, "", $2); split($3, w, " "); sub(/\/.*/, "", w[2])
			if ($2 in from) from[$2] = from[$2] "," w[2]; else from[$2] = w[2]
		}
		END { for (v in from) print d, v, from[v] }' <<<"$out"
	done >"$cache/versions"
fi
# Per distribution in the order asked for, newest first.
mapfile -t checks < <(for d in "${suites[@]}"; do
	awk -v d="$d" '$1 == d' "$cache/versions" | sort -k2,2Vr
done; awk -v s=" ${suites[*]} " 'index(s, " " $1 " ") == 0' "$cache/versions")
[ ${#checks[@]} -gt 0 ] || die "no $PKG version to check"

# tarball_stream VERSION DEB: the source tarball of that version on stdout,
# from /usr/src if that is the version installed, else from DEB.
tarball_stream() {
	if [ -z "$2" ]; then
		cat "$LINUX_SOURCE_TARBALL"
	else
		dpkg-deb --fsys-tarfile "$2" | tar -xO "./usr/src/$PKG.tar.xz"
	fi
}

# The .deb of VERSION of distribution SUITE in the cache, downloaded if
# missing.
deb_of() {
	local d=$1 v=$2 f
	f=$(find "$debs" -maxdepth 1 -name "${PKG}_*_all.deb" | while read -r d; do
		[ "$(dpkg-deb -f "$d" Version)" = "$v" ] && echo "$d"
	done | head -n1)
	if [ -z "$f" ]; then
		echo "downloading $PKG=$v ($d)" >&2
		(cd "$debs" && "$MFR_ROOT/scripts/suite-apt.sh" "$d" apt-get download -q "$PKG=$v") >&2 ||
			return 1
		f=$(deb_of "$d" "$v")
	fi
	[ -n "$f" ] && echo "$f"
}

# pristine SUITE VERSION: a directory with the touched files of that
# version (files the series creates are absent, as in the tarball),
# unpacked once.
pristine() {
	local d=$1 v=$2 dir=$trees/$2-$fileset tmp out deb
	if [ ! -f "$dir/.done" ]; then
		rm -rf "$trees/$v"-* && mkdir -p "$dir"
		tmp=$(mktemp)
		printf "$PKG/%s\n" $files >"$tmp"
		deb=
		if [ "$(linux_source_version)" != "$v" ] || [ ! -r "$LINUX_SOURCE_TARBALL" ]; then
			deb=$(deb_of "$d" "$v") || {
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
declare -A newest_ok
for c in "${checks[@]}"; do
	read -r d v from <<<"$c"
	b=${base[$d]:-}
	if [ -n "$b" ] && dpkg --compare-versions "$v" ge "$b"; then
		role=required
	else
		role=info
	fi
	t0=$(date +%s)
	first=-
	if ! src=$(pristine "$d" "$v"); then
		result="no source"
	else
		work=$(mktemp -d "$cache/work.XXXXXX")
		cp -a "$src/." "$work/"
		if first=$(apply "$work" "$v"); then
			result=applies
			first=-
			[ -n "${newest_ok[$d]:-}" ] || newest_ok[$d]=$v
		else
			result="does not apply"
		fi
		rm -rf "$work"
	fi
	if [ "$role" = required ] && [ "$result" != applies ]; then
		failed=1
		if [ "$first" = - ]; then failures+=("$d $v: $result"); else failures+=("$d $v: $first"); fi
		result="FAIL: $result"
	elif [ "$role" = info ] && [ "$result" != applies ]; then
		result="$result (below BASE, info)"
	fi
	rows+=("$d|$v|$from|$result|$first|$(($(date +%s) - t0))s")
done

printf '\nseries: %d patches; BASE:' "${#patches[@]}"
for d in "${suites[@]}"; do printf ' %s %s;' "$d" "${base[$d]}"; done
printf '\n\n'
{
	echo "distribution|version|suites|result|first failing patch|time"
	printf '%s\n' "${rows[@]}"
} | print_table
echo
echo "series-check: ${#checks[@]} versions in $(($(date +%s) - start)) s"
for d in "${suites[@]}"; do
	grep -qx "$d ${base[$d]} .*" "$cache/versions" ||
		echo "note: $d's BASE (${base[$d]}) is not among the versions checked"
	if [ -n "${newest_ok[$d]:-}" ] && dpkg --compare-versions "${newest_ok[$d]}" gt "${base[$d]}"; then
		echo "note: $d's ${newest_ok[$d]} takes the series; its BASE (${base[$d]}) could move up to it"
	fi
done
if [ "$failed" != 0 ]; then
	echo "series-check: FAILED: the series does not apply with --fuzz=0 to a version at or above BASE:" >&2
	printf '  %s\n' "${failures[@]}" >&2
	exit 1
fi
echo "series-check: OK (every version at or above BASE takes the whole series)"
