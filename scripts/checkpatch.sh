#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# checkpatch.pl --strict (from the linux-source tree) over module/ (and the
# test modules of tests/kmod) and over
# every patch of kernel-hooks/.  Any error, warning or check fails.
#   checkpatch.sh [module|patches|all]
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# spdxcheck.py needs Debian's python3 with python3-ply and python3-git.
export PATH=/usr/bin:$PATH
ksrc=$("$MFR_ROOT/scripts/build-kernel.sh" --prepare-only)
# spdxcheck.py reads LICENSES/ from the HEAD commit of its tree: give it a
# throwaway to the unpacked source.
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
# one of links to the unpacked source, with LICENSES/ committed.
for e in "$ksrc"/*; do
	[ "${e##*/}" = LICENSES ] || ln -s "$e" "$tree/"
done
cp -r "$ksrc/LICENSES" "$tree/"
git -C "$tree" init -q
git -C "$tree" add LICENSES
git -C "$tree" -c user.name=mfr -c user.email=mfr@localhost commit -qm licenses
checkpatch() {
	local err
	err=$(mktemp)
	"$tree/scripts/checkpatch.pl" --strict --quiet --no-summary --show-types \
		--root="$tree" "$@" 2>"$err" || { cat "$err" >&2; rm -f "$err"; return 1; }
	# A crashed helper (spdxcheck.py) must not pass silently.
	if [ -s "$err" ]; then
		cat "$err" >&2
		rm -f "$err"
		return 1
	fi
	rm -f "$err"
}

rc=0
case "${1:-all}" in
module | all)
	# Sources only: not the build's own *.mod.c.
	(cd "$MFR_ROOT" && checkpatch -f $(ls module/*.[ch] tests/kmod/*.c | grep -v '\.mod\.c$') \
		module/include/uapi/linux/*.h) || rc=1
	;;&
patches | all)
	# The tree above is a release tarball without upstream history, so
	# checkpatch cannot look up the ids of Fixes: tags; they name upstream
	# commits, checked by hand when the tag is written.
	while read -r p; do
		checkpatch --ignore UNKNOWN_COMMIT_ID "$MFR_SERIES_DIR/$p" || rc=1
	done < <(series_patches)
	;;
esac
[ "$rc" = 0 ] && echo "checkpatch --strict: clean"
exit "$rc"
