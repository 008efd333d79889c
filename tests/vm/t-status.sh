# SPDX-License-Identifier: GPL-2.0-or-later
# The status operation answers from userspace with the versions and the
# counters, all zero in a freshly loaded module.
. ./lib.sh

rmmod mfr && insmod "$MFR_ROOT/module/mfr.ko" || exit 1

api=$(sed -n 's/^#define MFR_HOOKS_API_VERSION[[:space:]]*\([0-9]*\).*/\1/p' \
	"$MFR_KSRC/include/linux/mfr.h")
ver=$(sed -n 's/^#define MFR_VERSION "\(.*\)"/\1/p' "$MFR_ROOT/module/version.h")
out=$(ynl --do status-get --output-json)
echo "$out"
# One parse: a Python start takes seconds under TCG.
declare -A st
while IFS='=' read -r k v; do
	st[$k]=$v
done < <("$PYTHON" -c 'import json, sys
for k, v in json.loads(sys.argv[1]).items():
    print(f"{k}={v}")' "$out")
get() { echo "${st[$1]-None}"; }

check "hooks-api-version is the kernel's ($api)" [ "$(get hooks-api-version)" = "$api" ]
check "module-version is $ver" [ "$(get module-version)" = "$ver" ]
check "module-version matches modinfo" \
	[ "$(get module-version)" = "$(cat /sys/module/mfr/version)" ]
for c in memfds-kept raw-pages-kept folios-pending folios-offlined \
	raw-pages-isolated healthy-pages-returned; do
	check "counter $c is 0" [ "$(get "$c")" = 0 ]
done
finish
