# SPDX-License-Identifier: GPL-2.0-or-later
# Sourced by the VM tests (run as root inside the guest by vm/suite.sh).
# MFR_ROOT and MFR_KSRC (linux-source tree for the YNL CLI) come from there.

PYTHON=${PYTHON:-/usr/bin/python3}
SPEC=$MFR_ROOT/module/mfr.yaml
failures=0

pass() { echo "ok - $*"; }
fail() {
	echo "not ok - $*"
	failures=$((failures + 1))
}
# check DESCRIPTION COMMAND...: run COMMAND, record ok/not ok.
check() {
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
finish() { [ "$failures" = 0 ]; }

# The kernel's YNL CLI driving the family through module/mfr.yaml.  The
# spec is validated against the genetlink schema once (t-nl-ops and the
# code generator): validating it on every call costs seconds under TCG.
ynl() {
	"$PYTHON" "$MFR_KSRC/tools/net/ynl/cli.py" --spec "$SPEC" --no-schema "$@"
}

# Value of one attribute of the status reply ("" if the call failed).
status_attr() {
	ynl --do status-get --output-json 2>/dev/null |
		"$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"
}

module_loaded() { [ -d /sys/module/mfr ]; }

# keep_scenario SIZE NPAGES INJECT RELEASE: run keep_hwpoison (see
# tests/helpers/keep_hwpoison.c) with the module's view checked while the
# memfd lives (counters, unload refused) and after the release.
keep_scenario() {
	local size=$1 npages=$2 inject=$3 release=$4 before hold
	modprobe hwpoison_inject
	before=$(./status-value folios-offlined)
	hold="./expect-status memfds-kept=1 raw-pages-kept=$npages folios-pending=0"
	hold+=" && ! rmmod mfr 2>/dev/null"
	check "keep_hwpoison $size $npages $inject $release" \
		"$MFR_ROOT/build/helpers/keep_hwpoison" "$size" "$npages" "$inject" \
		"$release" "cd $PWD && $hold"
	check "status after release" ./expect-status memfds-kept=0 raw-pages-kept=0 \
		folios-pending=0 folios-offlined=$((before + 1))
}
