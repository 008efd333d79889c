#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The host's side of the test VM's requests to its own QEMU's monitor (the
# outer emulator, under which the real-guest rig runs): the test VM writes
# one HMP command into DIR/req-NAME, this loop runs it on SOCKET and puts
# QEMU's answer in DIR/req-NAME.out.  Only "mce" (a machine-check bank
# write: the outer deferred error) and "xp" (read the test VM's physical
# memory: whether KVM still writes a page) are served; anything else is
# answered "refused".  Runs until killed.
#
#   outer-monitor.sh SOCKET DIR
set -uo pipefail
hmp=$(dirname "$0")/hmp.py
sock=${1:?usage: outer-monitor.sh SOCKET DIR} dir=${2:?usage: outer-monitor.sh SOCKET DIR}
mkdir -p "$dir"
while :; do
	for req in "$dir"/req-*; do
		case $req in *.out | *.tmp | *"req-*") continue ;; esac
		cmd=$(cat "$req")
		case $cmd in
		"mce "* | "xp "*)
			echo "outer-monitor: $cmd" >&2
			answer=$(python3 "$hmp" "$sock" "$cmd" 2>&1) || answer="failed: $answer"
			;;
		*) answer="refused: only mce and xp are served" ;;
		esac
		printf '%s\n' "$answer" >"$req.tmp" && mv "$req.tmp" "$req.out"
		rm -f "$req"
	done
	sleep 0.2
done
