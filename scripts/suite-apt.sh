#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Run apt-get or apt-cache against one Debian distribution (SUITE, with
# its -updates and -security suites) through a private apt state in
# $MFR_CACHE/apt/SUITE, whatever the host runs: the system's sources,
# package lists, cache and dpkg status are never read or written.  The
# mirrors are those the host's apt fetches bookworm and bookworm-security
# from (scripts/debian-mirror.sh), which carry every Debian suite; the
# archive keyring is the host's.  The lists are refreshed when older than
# MFR_APT_MAX_AGE minutes (default 360) or missing.
#
#   suite-apt.sh SUITE apt-get|apt-cache ARGS...
#   suite-apt.sh SUITE --opts      print the apt options, one per line
#   suite-apt.sh SUITE --sources   print the sources list it uses
set -euo pipefail
. "$(dirname "$0")/lib.sh"

suite=${1:?usage: suite-apt.sh SUITE apt-get|apt-cache|--opts|--sources ARGS...}
shift
[[ $suite =~ ^[a-z]+$ ]] || die "suite-apt.sh: '$suite' is not a distribution codename (bookworm, trixie)"
cmd=${1:?usage: suite-apt.sh SUITE apt-get|apt-cache|--opts|--sources ARGS...}
shift

dir=$MFR_CACHE/apt/$suite
mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/empty.d"
: >>"$dir/status"
mirror=$("$MFR_ROOT/scripts/debian-mirror.sh" bookworm)
security=$(MFR_DEBIAN_MIRROR=${MFR_DEBIAN_SECURITY_MIRROR:-} \
	"$MFR_ROOT/scripts/debian-mirror.sh" bookworm-security 2>/dev/null ||
	echo http://deb.debian.org/debian-security)
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || die "$keyring missing: apt-get install debian-archive-keyring"
cat >"$dir/sources.list.new" <<EOF
deb [signed-by=$keyring] $mirror $suite main
deb [signed-by=$keyring] $mirror $suite-updates main
deb [signed-by=$keyring] $security $suite-security main
EOF
mv "$dir/sources.list.new" "$dir/sources.list"

# The host's pinning does not apply either (an empty directory: apt
# warns about a missing one).
opts=(-o "Dir::Etc::sourcelist=$dir/sources.list" -o "Dir::Etc::sourceparts=$dir/empty.d"
	-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache"
	-o "Dir::State::status=$dir/status" -o "Dir::Etc::preferencesparts=$dir/empty.d"
	-o "Dir::Etc::preferences=$dir/empty.d/none" -o APT::Sandbox::User=root)

case $cmd in
--opts) printf '%s\n' "${opts[@]}"; exit 0 ;;
--sources) cat "$dir/sources.list"; exit 0 ;;
apt-get | apt-cache) ;;
*) die "suite-apt.sh: runs apt-get or apt-cache, not '$cmd'" ;;
esac

# One refresh at a time per suite; readers wait for it.
exec 9>"$dir/.lock"
flock 9
stamp=$dir/.updated
if [ -z "$(find "$stamp" -mmin -"${MFR_APT_MAX_AGE:-360}" 2>/dev/null)" ] ||
	! cmp -s "$dir/sources.list" "$dir/.updated-sources" 2>/dev/null; then
	echo "suite-apt: apt-get update for $suite ($mirror, $security)" >&2
	apt-get -q "${opts[@]}" update >"$dir/update.log" 2>&1 ||
		{ tail -n 20 "$dir/update.log" >&2; die "apt-get update of $suite failed (log: $dir/update.log)"; }
	# An unreachable suite is only a warning to apt-get update.
	if grep -E '^(W|E): Failed to fetch' "$dir/update.log" >&2; then
		die "apt-get update of $suite could not fetch every list (above)"
	fi
	cp "$dir/sources.list" "$dir/.updated-sources"
	touch "$stamp"
fi
exec 9>&-
exec "$cmd" "${opts[@]}" "$@"
