#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# scripts/debian-mirror.sh picks the mirror apt itself uses for bookworm,
# from one-line and deb822 sources in apt's order, skipping disabled
# stanzas, deb-src, other suites and schemes debootstrap cannot fetch; it
# fails with a clear message when there is none.  Each case is a scratch
# apt configuration (APT_CONFIG), never the host's.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
n=0

# case NAME WANT SOURCES_LIST [FILE CONTENT]...: WANT is the mirror
# expected, or "error".
case_() {
	local name=$1 want=$2 list=$3 dir out rc
	shift 3
	n=$((n + 1))
	dir=$tmp/$n
	mkdir -p "$dir/sources.list.d" "$dir/apt.conf.d" "$dir/lists/partial"
	printf '%b' "$list" >"$dir/sources.list"
	while [ $# -gt 0 ]; do
		printf '%b' "$2" >"$dir/sources.list.d/$1"
		shift 2
	done
	cat >"$dir/apt.conf" <<-CONF
		Dir::Etc "$dir";
		Dir::Etc::sourcelist "sources.list";
		Dir::Etc::sourceparts "sources.list.d";
		Dir::State::lists "$dir/lists";
	CONF
	rc=0
	out=$(APT_CONFIG=$dir/apt.conf MFR_DEBIAN_MIRROR='' "$root/scripts/debian-mirror.sh" 2>"$dir/err") || rc=$?
	out+=$(cat "$dir/err")
	if [ "$want" = error ]; then
		if [ "$rc" != 0 ] && grep -q 'no http(s) or file source for bookworm' <<<"$out"; then
			echo "ok - $name: fails ($out)"
		else
			echo "FAIL: $name: want a clear error, got rc $rc: $out"
			failed=$((failed + 1))
		fi
	elif [ "$rc" = 0 ] && [ "$out" = "$want" ]; then
		echo "ok - $name: $out"
	else
		echo "FAIL: $name: want $want, got rc $rc: $out"
		failed=$((failed + 1))
	fi
}

case_ "one-line, options and deb-src" http://one.example/debian \
	'deb-src http://src.example/debian bookworm main\n# deb http://commented.example/debian bookworm main\ndeb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://one.example/debian/ bookworm main\n'
case_ "deb822: disabled stanza, security, deb-src skipped" https://two.example/debian '' \
	debian.sources 'Types: deb\nURIs: http://off.example/debian\nSuites: bookworm\nComponents: main\nEnabled: no\n\nTypes: deb\n# a comment inside\nURIs: http://sec.example/debian-security\nSuites: bookworm-security\nComponents: main\n\nTypes: deb-src\nURIs: http://src.example/debian\nSuites: bookworm\nComponents: main\n\nTypes: deb\nURIs: https://two.example/debian\nSuites: bookworm-updates bookworm\nComponents: main contrib\n'
case_ "sources.list before sources.list.d" http://first.example/debian \
	'deb http://first.example/debian bookworm main\n' \
	a.sources 'Types: deb\nURIs: http://second.example/debian\nSuites: bookworm\nComponents: main\n'
case_ "sources.list.d in apt's order, .list and .sources mixed" http://a.example/debian '' \
	b.list 'deb http://b.example/debian bookworm main\n' \
	a.sources 'Types: deb\nURIs: http://a.example/debian\nSuites: bookworm\nComponents: main\n'
case_ "a mirror+ source debootstrap cannot use is skipped" http://plain.example/debian \
	'deb mirror+file:/etc/apt/mirrors.txt bookworm main\ndeb http://plain.example/debian bookworm main\n'
case_ "only bookworm-security and trixie" error \
	'deb http://sec.example/debian-security bookworm-security main\ndeb http://deb.example/debian trixie main\n'
case_ "no sources at all" error ''

out=$(MFR_DEBIAN_MIRROR=http://override.example/debian "$root/scripts/debian-mirror.sh")
if [ "$out" = http://override.example/debian ]; then
	echo "ok - MFR_DEBIAN_MIRROR overrides apt's sources"
else
	echo "FAIL: MFR_DEBIAN_MIRROR ignored: $out"
	failed=$((failed + 1))
fi
echo "this host: $("$root/scripts/debian-mirror.sh" 2>&1)"
[ "$failed" = 0 ] && echo "all debian-mirror checks passed"
[ "$failed" = 0 ]
