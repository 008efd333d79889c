#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# apt-get or apt-cache for one Debian release (bookworm, trixie) with an
# apt configuration of its own under $MFR_VMM_CACHE, whatever this host
# runs: the make test-vmm guests' kernels and the second VMM (QEMU 7.2)
# are fetched with it, never installed.  The mirrors are the ones this
# host's apt uses for bookworm and bookworm-security (scripts/debian-
# mirror.sh); the package lists are fetched again when older than a day.
#
#   apt.sh CODENAME apt-get|apt-cache ARGS...
set -euo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"

[ $# -ge 2 ] || die "usage: apt.sh CODENAME apt-get|apt-cache ARGS..."
codename=$1 tool=$2
shift 2
case $tool in apt-get | apt-cache) ;; *) die "apt.sh: $tool is neither apt-get nor apt-cache" ;; esac
MFR_VMM_CACHE=${MFR_VMM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mfr-vmm}
dir=$MFR_VMM_CACHE/apt-$codename
mkdir -p "$dir/lists/partial" "$dir/archives/partial"
opts=(-o "Dir::Etc::sourcelist=$dir/sources.list" -o Dir::Etc::sourceparts=/nonexistent
	-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir" -o "Dir::State::status=$dir/status"
	-o APT::Get::List-Cleanup=0)
# As root, apt drops to its _apt user, which cannot write under $HOME.
[ "$(id -u)" != 0 ] || opts+=(-o APT::Sandbox::User=root)

if [ ! -s "$dir/sources.list" ] || [ -n "$(find "$dir/sources.list" -mmin +1440)" ]; then
	mirror=$("$MFR_ROOT/scripts/debian-mirror.sh" bookworm)
	security=$("$MFR_ROOT/scripts/debian-mirror.sh" bookworm-security 2>/dev/null ||
		echo "${mirror%/debian}/debian-security")
	cat >"$dir/sources.list.new" <<-EOF2
		deb $mirror $codename main
		deb $mirror $codename-updates main
		deb $security $codename-security main
	EOF2
	mv "$dir/sources.list.new" "$dir/sources.list"
	: >"$dir/status"
	echo "apt.sh: fetching the package lists of $codename" >&2
	apt-get "${opts[@]}" -q update >&2 || {
		rm -f "$dir/sources.list"
		die "apt.sh: apt-get update for $codename failed"
	}
fi
exec "$tool" "${opts[@]}" "$@"
