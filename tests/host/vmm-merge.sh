#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/vmm/merge.py adds a make test-vmm batch to bench/vmm-results.txt:
# runs of the same kernel add up, numbered on; another kernel's (or an
# untagged line's) are replaced; --replace and an unknown kernel replace
# all; notes and the other scenarios stay; each line the batch adds is
# tagged with its kernel, so the next batch can tell.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
merge=$root/tests/vmm/merge.py
fail() { echo "$*"; cat "$tmp/committed"; exit 1; }
runs() { # scenario kernel: "run numbers" of its lines of that kernel
	awk -v n="$1" -v k="kernel=$2" '$1 == "result" && $2 == n {
		for (i = 3; i <= NF; i++) { if ($i ~ /^run=/) r = substr($i, 5); if ($i == k) ok = 1 }
		if (ok) printf "%s ", r; ok = 0 }' "$tmp/committed"
}

cat >"$tmp/committed" <<'EOF'
result keep-2m-mce/d13/10 run=1 survived=yes kernel=aaaa
result keep-2m-mce/d13/10 run=2 survived=yes kernel=aaaa
note keep-2m-mce/d13/10: a remark
result keep-1g-cpfn/d13/10 run=1 survived=yes kernel=old
result keep-1g-cpfn/d12/10 run=1 survived=yes
result stock-2m-mce/d13/10 run=1 survived=storm kernel=aaaa
EOF
cat >"$tmp/fresh" <<'EOF'
# a comment the guest printed
result keep-2m-mce/d13/10 run=1 survived=yes
result keep-2m-mce/d13/10 run=2 survived=reset
result keep-1g-cpfn/d13/10 run=1 survived=yes
result keep-1g-cpfn/d12/10 run=1 survived=yes
EOF
out=$("$PYTHON" "$merge" "$tmp/fresh" "$tmp/committed" aaaa)

# Same kernel: the two committed runs stay, the batch's are 3 and 4.
[ "$(runs keep-2m-mce/d13/10 aaaa)" = "1 2 3 4 " ] ||
	fail "same kernel did not add up: $(runs keep-2m-mce/d13/10 aaaa)"
grep -q '^result keep-2m-mce/d13/10 run=4 survived=reset kernel=aaaa$' "$tmp/committed" ||
	fail "the batch's second run lost its fields"
# Another kernel's run and an untagged one are replaced by the batch's.
[ "$(runs keep-1g-cpfn/d13/10 aaaa)" = "1 " ] && ! grep -q 'kernel=old' "$tmp/committed" ||
	fail "another kernel's line was kept"
[ "$(grep -c '^result keep-1g-cpfn/d12/10 ' "$tmp/committed")" = 1 ] ||
	fail "an untagged line was kept beside the batch's"
# Notes and a scenario the batch did not run stay; no comment got in.
grep -q '^note keep-2m-mce/d13/10: a remark$' "$tmp/committed" || fail "the note was lost"
grep -q '^result stock-2m-mce/d13/10 run=1 survived=storm kernel=aaaa$' "$tmp/committed" ||
	fail "another scenario was touched"
! grep -q 'a comment' "$tmp/committed" || fail "a non-result line of the batch got in"
grep -qx '# keep-2m-mce/d13/10: 4 runs of this kernel in P6' <<<"$out" || fail "says: $out"

# --replace: only the batch's runs, numbered from 1.
printf 'result keep-2m-mce/d13/10 run=7 survived=yes\n' >"$tmp/fresh"
"$PYTHON" "$merge" "$tmp/fresh" "$tmp/committed" aaaa --replace >/dev/null
[ "$(grep -c '^result keep-2m-mce/d13/10 ' "$tmp/committed")" = 1 ] &&
	[ "$(runs keep-2m-mce/d13/10 aaaa)" = "1 " ] || fail "--replace kept older runs"
# A kernel not known (KDIR given by hand) replaces too, tagged "unknown".
"$PYTHON" "$merge" "$tmp/fresh" "$tmp/committed" "" >/dev/null
"$PYTHON" "$merge" "$tmp/fresh" "$tmp/committed" "" >/dev/null
[ "$(runs keep-2m-mce/d13/10 unknown)" = "1 " ] || fail "unknown kernels added up"
# Bad arguments: a usage error, the file untouched.
cp "$tmp/committed" "$tmp/before"
if "$PYTHON" "$merge" "$tmp/fresh" "$tmp/committed" aaaa --bogus 2>/dev/null; then
	fail "merge.py took --bogus"
fi
cmp -s "$tmp/before" "$tmp/committed" || fail "a refused merge changed the file"
echo "merge adds runs of one kernel, replaces another's, keeps notes and other scenarios"
