#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Print the Debian mirror this host's apt fetches SUITE (default bookworm)
# from, for debootstrap: the first such "deb" source in apt's own order.
# apt parses the sources itself (sources.list and sources.list.d, one-line
# and deb822, "Enabled: no" honoured), so nothing here re-implements
# either format.  Suites written as "stable" or "oldstable" count when
# apt's lists name their codename.  MFR_DEBIAN_MIRROR overrides it all.
#
#   debian-mirror.sh [SUITE]
set -euo pipefail

suite=${1:-bookworm}
if [ -n "${MFR_DEBIAN_MIRROR:-}" ]; then
	echo "$MFR_DEBIAN_MIRROR"
	exit 0
fi

# Only schemes debootstrap can fetch from (not cdrom:, mirror+, tor+...).
first_usable() {
	grep -m1 -E '^(https?|file)://' || true
}
mirror=$(apt-get indextargets --no-release-info --format '$(REPO_URI)' \
	'Identifier: Packages' 'Target-Of: deb' "Release: $suite" | first_usable)
[ -n "$mirror" ] || mirror=$(apt-get indextargets --format '$(REPO_URI)' \
	'Identifier: Packages' 'Target-Of: deb' "Codename: $suite" 2>/dev/null | first_usable)
if [ -z "$mirror" ]; then
	echo "error: apt has no http(s) or file source for $suite (/etc/apt/sources.list," \
		"/etc/apt/sources.list.d); set MFR_DEBIAN_MIRROR" >&2
	exit 1
fi
echo "${mirror%/}"
