#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# .ci/run runs the README's test command as the README gives it, and
# nothing else: no setup of its own (an "apt-get update" first hid a
# README command that failed on a stock Debian 12).  Its only other lines
# may be comments, "set" options and the cd to the clone's top.  The
# comparison must also catch .ci/run files that differ (below, last).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/host/lib-readme.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ci_commands FILE: FILE's lines that run something, trailing comments
# removed (the shebang, comments, blank lines, "set" and the cd to the
# clone's top left out); "\" continuations are refused.
ci_commands() {
	if grep -q '\\$' "$1"; then
		echo "$1: a line continues with \"\\\"; the command must be one line" >&2
		return 1
	fi
	sed -E -e '1{/^#!/d}' -e '/^[[:space:]]*(#|$)/d' \
		-e 's/[[:space:]]+#.*$//' -e 's/[[:space:]]+$//' "$1" |
		grep -v -x -E 'set( [-+][a-zA-Z]+( [a-z]+)?)+' |
		grep -v -x -F 'cd "$(dirname "$0")/.."' || true
}

# check_ci FILE WANT: FILE runs WANT and nothing else; says how not.
check_ci() {
	local file=$1 want=$2 got
	got=$(ci_commands "$file") || return 1
	if [ "$got" = "$want" ]; then
		return 0
	fi
	echo "$file does not run the README's test command alone."
	echo "  README.md (## The two commands): $want"
	if [ -z "$got" ]; then
		echo "  $file runs: nothing"
	else
		echo "  $file runs:"
		sed 's/^/    /' <<<"$got"
	fi
	return 1
}

want=$(readme_command test)
echo "README's test command: $want"
failed=0
if [ -x "$root/.ci/run" ]; then
	echo "ok - .ci/run is executable"
else
	echo "FAIL: .ci/run is missing or not executable"
	failed=1
fi
if check_ci "$root/.ci/run" "$want"; then
	echo "ok - .ci/run runs exactly the README's test command"
else
	echo "FAIL: .ci/run and README.md name different test commands"
	failed=1
fi

# The comparison is not vacuous: .ci/run files that do more, less or
# otherwise must fail it.
prelude=$'#!/usr/bin/env bash\n# CI\nset -euo pipefail\ncd "$(dirname "$0")/.."\n'
bad=(
	"${prelude}command -v make >/dev/null || { apt-get update -q && apt-get install -y -q make; }"$'\nexec make test\n'
	"${prelude}apt-get update"$'\n'"$want"$'\n'
	"${prelude}${want% test} check"$'\n'
	"${prelude}"
	"${prelude}${want% && make test} \\"$'\n'"  && make test"$'\n'
)
for i in "${!bad[@]}"; do
	printf '%s' "${bad[$i]}" >"$tmp/run$i"
	if check_ci "$tmp/run$i" "$want" >"$tmp/out$i" 2>&1; then
		echo "FAIL: a .ci/run that differs from the README passes the comparison:"
		sed 's/^/    /' "$tmp/run$i"
		failed=1
	fi
done
[ "$failed" = 0 ] && echo "ok - ${#bad[@]} differing .ci/run files fail the comparison"
[ "$failed" = 0 ]
