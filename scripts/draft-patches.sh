#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Turn the drafts kernel-hooks/doc/mfd_mfr_policy.rst and
# kernel-hooks/selftest/hugetlb-mfr.c into two patches that follow
# kernel-hooks/series (git format-patch, numbered after its last patch):
#   Documentation: describe MFD_MF_KEEP_UE_MAPPED for HugeTLB memfds
#   selftests/mm: add hugetlb-mfr for MFD_MF_KEEP_UE_MAPPED
# They are made in a scratch git tree holding only the files the series
# and the two patches touch, unpacked from $LINUX_SOURCE_TARBALL with the
# series applied by "git am", so "git am" of series + these two onto the
# full source works.  Writes build/draft-patches/*.patch; prints the paths.
# A draft step for issue 15: once the series is re-cut, these two go into
# it (the lead renumbers and adds them to series).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$MFR_ROOT/build/draft-patches
tree=$MFR_ROOT/build/draft-patches.tree
doc=$MFR_SERIES_DIR/doc/mfd_mfr_policy.rst
test_c=$MFR_SERIES_DIR/selftest/hugetlb-mfr.c
[ -f "$doc" ] && [ -f "$test_c" ] || die "drafts missing: $doc, $test_c"
[ -r "$LINUX_SOURCE_TARBALL" ] || die "$LINUX_SOURCE_TARBALL missing: apt-get install linux-source-6.12"

mapfile -t patches < <(series_patches)
extra=(MAINTAINERS Documentation/userspace-api/index.rst
	tools/testing/selftests/mm/Makefile tools/testing/selftests/mm/.gitignore
	tools/testing/selftests/mm/run_vmtests.sh)
files=$({
	for p in "${patches[@]}"; do
		sed -n 's|^diff --git a/\([^ ]*\) b/\([^ ]*\)$|\1\n\2|p' "$MFR_SERIES_DIR/$p"
	done
	printf '%s\n' "${extra[@]}"
} | sort -u)

rm -rf "$tree" "$out"
mkdir -p "$tree" "$out"
list=$(mktemp)
printf 'linux-source-6.12/%s\n' $files >"$list"
# Files the series creates are "Not found in archive"; anything else is not.
errs=$(tar -xJf "$LINUX_SOURCE_TARBALL" -C "$tree" --strip-components=1 -T "$list" 2>&1) || true
rm -f "$list"
if printf '%s\n' "$errs" | grep -v -e 'Not found in archive' -e 'Exiting with failure status' | grep -q .; then
	die "unpacking $LINUX_SOURCE_TARBALL: $errs"
fi

cd "$tree"
export GIT_AUTHOR_DATE="2026-01-01 00:00:00 +0000" GIT_COMMITTER_DATE="2026-01-01 00:00:00 +0000"
git init -q
git add -A
git commit -q -m "linux-source-6.12 $(linux_source_version) (the files the series touches)"
for p in "${patches[@]}"; do
	git am -q "$MFR_SERIES_DIR/$p" || die "git am $p failed"
done

# insert_after FILE ANCHOR TEXT: TEXT (may hold newlines) after the first
# line equal to ANCHOR; fails if there is none.
insert_after() {
	local file=$1 anchor=$2 text=$3
	grep -qxF -- "$anchor" "$file" || die "$file: no line '$anchor'"
	ANCHOR=$anchor TEXT=$text awk '
		{ print }
		!done && $0 == ENVIRON["ANCHOR"] { print ENVIRON["TEXT"]; done = 1 }
	' "$file" >"$file.new"
	cat "$file.new" >"$file" # keeps the mode (run_vmtests.sh is executable)
	rm -f "$file.new"
}

# insert_before FILE ANCHOR TEXT: the same, before the line.
insert_before() {
	local file=$1 anchor=$2 text=$3
	grep -qxF -- "$anchor" "$file" || die "$file: no line '$anchor'"
	ANCHOR=$anchor TEXT=$text awk '
		!done && $0 == ENVIRON["ANCHOR"] { print ENVIRON["TEXT"]; done = 1 }
		{ print }
	' "$file" >"$file.new"
	cat "$file.new" >"$file"
	rm -f "$file.new"
}

name=$(git -C "$MFR_ROOT" config user.name)
email=$(git -C "$MFR_ROOT" config user.email)
signoff="Signed-off-by: $name <$email>"

cp "$doc" Documentation/userspace-api/mfd_mfr_policy.rst
insert_after Documentation/userspace-api/index.rst "   perf_ring_buffer" "   mfd_mfr_policy"
insert_before MAINTAINERS "F:	include/linux/mfr.h" "F:	Documentation/userspace-api/mfd_mfr_policy.rst"
git add -A
git commit -q -F - <<EOF
Documentation: describe MFD_MF_KEEP_UE_MAPPED for HugeTLB memfds

Document what a HugeTLB memfd created with MFD_MF_KEEP_UE_MAPPED gets
from the kernel and its memory-failure recovery policy module: a
page-sized SIGBUS (si_addr_lsb == PAGE_SHIFT) for each error with the rest
of the hugepage kept mapped, repeated errors, the budget fallback, how
private mappings, userfaultfd, kernel accessors and hole punches treat a
kept hugepage, its release (healthy base pages back to the allocator,
poisoned ones never), pins, and what happens without a module.

$signoff
EOF

cp "$test_c" tools/testing/selftests/mm/hugetlb-mfr.c
insert_after tools/testing/selftests/mm/Makefile "TEST_GEN_FILES += hugetlb-madvise" \
	"TEST_GEN_FILES += hugetlb-mfr"
insert_after tools/testing/selftests/mm/.gitignore "hugetlb-madvise" "hugetlb-mfr"
insert_after tools/testing/selftests/mm/run_vmtests.sh 'CATEGORY="hugetlb" run_test ./hugetlb-read-hwpoison' \
	'# MFD_MF_KEEP_UE_MAPPED: skips (4) without a memory-failure recovery policy
hp1g=/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages
if [ -w "$hp1g" ]; then
	nr_1g_tmp=$(cat "$hp1g")
	echo $((nr_1g_tmp + 2)) > "$hp1g"
fi
CATEGORY="hugetlb" run_test ./hugetlb-mfr
[ -w "$hp1g" ] && echo "$nr_1g_tmp" > "$hp1g"'
insert_after MAINTAINERS "F:	mm/mfr.c" "F:	tools/testing/selftests/mm/hugetlb-mfr.c"
git add -A
git commit -q -F - <<EOF
selftests/mm: add hugetlb-mfr for MFD_MF_KEEP_UE_MAPPED

Test the memory-failure recovery policy of HugeTLB memfds for 2 MiB and
1 GiB hugepages: several MADV_HWPOISON errors, each from a helper thread
that catches its SIGBUS, in one hugepage of a memfd created with
MFD_MF_KEEP_UE_MAPPED.  Check that each error is signalled with its exact
address and si_addr_lsb == PAGE_SHIFT, that the bytes next to a poisoned
base page read back and read() stops before it, that every healthy byte
reads back through the mapping and through a new one, that the pool is
unchanged and HardwareCorrupted grew by one base page per error; and
after close, truncate or hole punch that the hugepage left the pool,
MemFree grew by the hugepage minus the poisoned base pages, and the
poisoned pfns stay HWPoison and out of the buddy allocator.

The test skips without a policy module (EOPNOTSUPP) or on a kernel
without the flag (EINVAL), and a variant skips without a free hugepage
of its size.  It offlines hugepages for good, so run_vmtests.sh runs it
among the destructive tests.

$signoff
EOF

git format-patch -q -2 --start-number $((${#patches[@]} + 1)) -o "$out" HEAD
ls -1 "$out"/*.patch
