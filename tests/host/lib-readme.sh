# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
# Sourced by host tests: the README's two commands as README.md gives
# them, so that tests run and compare what a newcomer reads, not a copy.

# readme_command TARGET: the line of the README's "## The two commands"
# shell block that ends in "make TARGET", without its trailing comment.
# Fails, saying why, unless exactly one such line exists and it is one
# line (no continuation).
readme_command() {
	local target=$1 readme block lines
	readme=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/README.md
	block=$(awk '
		/^## / { section = ($0 == "## The two commands"); next }
		section && !done && /^```sh$/ { inblock = 1; next }
		inblock && /^```$/ { inblock = 0; done = 1; next }
		inblock { print }
	' "$readme")
	if [ -z "$block" ]; then
		echo "README.md has no \`\`\`sh block under \"## The two commands\"" >&2
		return 1
	fi
	if grep -q '\\$' <<<"$block"; then
		echo "README.md's commands continue over several lines; each must be one line:" >&2
		echo "$block" >&2
		return 1
	fi
	# A comment starts at a '#' after a blank, as in sh.
	lines=$(sed -E -e 's/[[:space:]]+#.*$//' -e 's/[[:space:]]+$//' <<<"$block" |
		grep -E "(^|[;&|[:space:]])make $target\$" || true)
	case $(grep -c . <<<"$lines") in
	1) echo "$lines" ;;
	0)
		echo "README.md's \"## The two commands\" block has no line ending in \"make $target\":" >&2
		echo "$block" >&2
		return 1
		;;
	*)
		echo "README.md's \"## The two commands\" block has several lines ending in \"make $target\":" >&2
		echo "$lines" >&2
		return 1
		;;
	esac
}
