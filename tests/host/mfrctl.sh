#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# mfrctl on the host, where no mfr module is loaded: the missing family
# and usage errors give their exit status and one clear message, --help
# works, and the man page renders without warnings.  Runs the ASan and
# UBSan build, so a leak or undefined behaviour on these paths fails too.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
make -s -C "$root/daemon" O="$root/build/daemon" asan
mfrctl=$root/build/daemon/asan/mfrctl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A sanitizer report must not pass for one of the statuses under test.
export ASAN_OPTIONS=detect_leaks=1:exitcode=99
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

checks=0
failed=0
fail() {
	echo "FAIL: $*"
	sed 's/^/    stderr: /' "$tmp/err"
	failed=$((failed + 1))
}

# run STATUS ARGS...: mfrctl ARGS exits with STATUS; output in $tmp/out, err
run() {
	local want=$1 rc=0
	shift
	checks=$((checks + 1))
	"$mfrctl" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = "$want" ] || { fail "mfrctl $*: exit $rc, want $want"; return 1; }
}

# No module: exit 3, nothing on stdout, exactly one line on stderr.
not_loaded() {
	run 3 "$@" || return 0
	if [ -s "$tmp/out" ] || [ "$(wc -l <"$tmp/err")" != 1 ] ||
		! grep -q '^mfrctl: the mfr module is not loaded' "$tmp/err"; then
		fail "mfrctl $*: want one line saying the module is not loaded"
	fi
}

# Usage error: exit 2, nothing on stdout, the message first on stderr.
usage() {
	local want=$1
	shift
	run 2 "$@" || return 0
	if [ -s "$tmp/out" ] || ! head -n1 "$tmp/err" | grep -q "^mfrctl: .*$want"; then
		fail "mfrctl $*: want a message about '$want'"
	fi
}

if [ -d /sys/module/mfr ]; then
	echo "mfr.ko is loaded on this host: not-loaded checks skipped"
else
	not_loaded status
	not_loaded -j status
	not_loaded stats
	not_loaded rules list
	not_loaded monitor --count 1
	# a bare noun runs its default verb (list)
	not_loaded rules
	not_loaded memfd
	not_loaded poison
	not_loaded -r -n -o name,action rules
	not_loaded -j -p status
	not_loaded -t monitor --count 1
fi

usage "unknown command 'frobnicate'" frobnicate
usage "unknown command 'rules frob'" rules frob
usage "unknown command 'memfd frob'" memfd frob
usage "unknown or repeated column 'frob'" -o id,frob rules list
usage "unknown or repeated column 'ID'" -o id,ID rules list
usage "apply to the tables of listings, not to status" -n status
usage "not to JSON output of rules list" -j -o id rules
usage "needs -j" -p rules
usage "-t applies to monitor" -t rules
usage "invalid rule id 'notanumber'" rules del notanumber
usage "missing argument" rules del
usage "unexpected argument '2'" rules del 1 2
usage "invalid policy 'bogus'" memfd set 1 2 bogus
usage "invalid pid '0'" memfd set 0 2 keep
usage "--action keep|default is required" rules add --name 'qemu-*'
usage "invalid budget '-1'" rules add --action keep --budget -1
usage "invalid budget '99999999999'" rules add --action keep --budget 99999999999
usage "invalid budget '0x10'" -j rules add --action keep --budget 0x10
usage "invalid action 'maybe'" rules add --action maybe
usage "not both" rules add --action keep --cgroup /a --cgroup-id 7
usage "option --count does not apply" rules list --count 3
usage "option --budget given twice" memfd set 1 2 keep --budget 1 --budget 2
usage "invalid count '0'" monitor --count 0
usage "unknown option '--frob'" status --frob
usage "needs a value" monitor --count

run 0 --help && { grep -q '^Usage: mfrctl' "$tmp/out" || fail "mfrctl --help: no usage text"; }
# Help per command: an area lists its commands only, a listing its columns.
run 0 rules --help && {
	grep -q '^  rules add' "$tmp/out" && ! grep -q '^  memfd' "$tmp/out" ||
		fail "mfrctl rules --help: not the help of rules"
}
run 0 poison list --help && {
	grep -q '^  head-pfn ' "$tmp/out" && ! grep -q '^  rules' "$tmp/out" ||
		fail "mfrctl poison list --help: no column list"
}
version=$(sed -n 's/^#define MFR_VERSION "\(.*\)"/\1/p' "$root/module/version.h")
run 0 -V && { [ "$(cat "$tmp/out")" = "mfrctl $version" ] || fail "mfrctl -V: $(cat "$tmp/out")"; }

# bash completion: nouns, verbs, columns for -o, from mfrctl's own help.
completion() { # WANT WORDS...: the completions of the last word
	local want=$1
	shift
	checks=$((checks + 1))
	got=$(PATH=$(dirname "$mfrctl"):$PATH bash -c '
		source /usr/share/bash-completion/bash_completion
		source "$0"
		COMP_WORDS=("${@}"); COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_mfrctl; echo "${COMPREPLY[*]}"' "$root/daemon/mfrctl.bash-completion" "$@" 2>&1)
	[ "$got" = "$want" ] || fail "completion of '$*': '$got', want '$want'"
}
if [ -r /usr/share/bash-completion/bash_completion ]; then
	completion "rules" mfrctl ru
	completion "list add del" mfrctl rules ""
	completion "keep default" mfrctl memfd set 1 2 ""
	completion "head-pfn" mfrctl poison list -o he
	completion "id,name" mfrctl rules -o id,na
	completion "--db --dimm" mfrctl history --d
	completion "--dry-run" mfrctl forget --db x --dr
	# Only what the command takes: -o, -n and -r where there are columns
	# (not summary, not forget), -t for monitor, -p with -j; a column
	# already chosen is not offered again.
	completion "" mfrctl summary -o
	completion "" mfrctl forget 0x1 -r
	completion "" mfrctl history -t
	completion "" mfrctl history -p
	completion "-p" mfrctl -j history -p
	completion "-t" mfrctl monitor -t
	completion "-o" mfrctl history -o
	completion "pfn,phys" mfrctl history -o pfn,p
	# --cgroup of a rule: from the cgroup root, not the working directory.
	mkdir -p "$tmp/cg/machine.slice/vm1.scope" "$tmp/cg/mine.slice" "$tmp/ma-local"
	checks=$((checks + 1))
	got=$(cd "$tmp" && MFRD_CGROUP_ROOT=$tmp/cg PATH=$(dirname "$mfrctl"):$PATH bash -c '
		source /usr/share/bash-completion/bash_completion
		source "$0"
		COMP_WORDS=(mfrctl rules add --cgroup "$1"); COMP_CWORD=4
		COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
		_mfrctl; echo "${COMPREPLY[*]}"' "$root/daemon/mfrctl.bash-completion" /ma 2>&1)
	[ "$got" = "/machine.slice/" ] || fail "completion of --cgroup /ma: '$got', want '/machine.slice/'"
	got=$(cd "$tmp" && MFRD_CGROUP_ROOT=$tmp/cg PATH=$(dirname "$mfrctl"):$PATH bash -c '
		source /usr/share/bash-completion/bash_completion
		source "$0"
		COMP_WORDS=(mfrctl rules add --cgroup "$1"); COMP_CWORD=4
		COMP_LINE="${COMP_WORDS[*]}"; COMP_POINT=${#COMP_LINE}
		_mfrctl; echo "${COMPREPLY[*]}"' "$root/daemon/mfrctl.bash-completion" /machine.slice/ 2>&1)
	[ "$got" = "/machine.slice/vm1.scope/" ] || fail "completion of --cgroup /machine.slice/: '$got'"
	# --boot and --dimm: the values in the store given with --db.
	python3 - "$tmp/hist.db" <<'EOP'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("CREATE TABLE poisoned_pages (boot_id TEXT, pfn INTEGER, phys_addr INTEGER, dimm TEXT,"
          " memfd_name TEXT, comm TEXT, cgroup_path TEXT, \"offset\" INTEGER, state TEXT,"
          " times_consumed INTEGER, first_seen_usec INTEGER, last_update_usec INTEGER)")
vm = "/machine.slice/machine-qemu\\x2d1\\x2dvm1.scope"
for boot, pfn, dimm, cg in (("b-one", 1, "BANK 0/DIMM_A1", vm), ("b-two", 2, "BANK 1/DIMM_B1", None),
                            ("b-two", 3, None, "/gone.slice")):
    c.execute("INSERT INTO poisoned_pages VALUES (?, ?, NULL, ?, NULL, NULL, ?, NULL, 'kept', 0, 1, 1)",
              (boot, pfn, dimm, cg))
c.execute("PRAGMA user_version = 3")
c.commit()
EOP
	completion "b-one b-two" mfrctl forget --db "$tmp/hist.db" --boot ""
	completion 'BANK\ 1/DIMM_B1' mfrctl history --db "$tmp/hist.db" --dimm "BANK 1"
	# history and summary --cgroup: the cgroups recorded (a VM's scope
	# is gone with the VM), as systemd names them.
	completion '/gone.slice /machine.slice/machine-qemu\\x2d1\\x2dvm1.scope' \
		mfrctl summary --db "$tmp/hist.db" --cgroup ""
else
	checks=$((checks + 1))
	fail "bash-completion is not installed (make deps)"
fi

# forget on a store of its own: hex pfns as listings print them, boot
# ids with or without dashes, a dry run, a question on a terminal and a
# refusal without one, and a journal entry (a socket of our own mounted
# over journald's, in a mount namespace of its own).
db=$tmp/mfrd.db
make_store() {
	rm -f "$db"
	python3 - "$db" <<'EOP'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("CREATE TABLE poisoned_pages (boot_id TEXT NOT NULL, pfn INTEGER NOT NULL,"
          " dimm TEXT, state TEXT NOT NULL, first_seen_usec INTEGER NOT NULL,"
          " last_update_usec INTEGER NOT NULL, PRIMARY KEY (boot_id, pfn))")
for boot, pfn in (("0b5c8f0e-1f6a-4e7c-9d3b-2a1908f7e6d5", 0x1000),
                  ("5d6e7f80-91a2-b3c4-d5e6-f708192a3b4c", 0x1000),
                  ("5d6e7f80-91a2-b3c4-d5e6-f708192a3b4c", 0x1abc)):
    c.execute("INSERT INTO poisoned_pages VALUES (?, ?, NULL, 'offlined', 1, 1)", (boot, pfn))
c.commit()
EOP
}
records() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from poisoned_pages").fetchone()[0])' "$db"; }
make_store
usage "ambiguous pfn '1234': pfns are hexadecimal.*write 0x1234 (if 1234 is decimal: 0x4d2)" \
	forget 1234 --yes --db "$db"
usage "invalid pfn '0x12g4'" forget 0x12g4 --yes --db "$db"
usage "invalid pfn '-1'" forget --yes --db "$db" -- -1
usage "no terminal to confirm on: give --yes" forget 0x1000 --db "$db" </dev/null
usage "--dry-run or --yes, not both" forget 0x1000 --dry-run --yes --db "$db"
run 0 forget 0x1000 --dry-run --db "$db" &&
	{ [ "$(cat "$tmp/out")" = "would forget 2 records of pfn 0x1000 (1 pfn, 2 boots)" ] &&
		[ "$(records)" = 3 ] || fail "forget --dry-run: $(cat "$tmp/out"), $(records) records left"; }
run 0 forget 1ABC --yes --db "$db" &&
	{ [ "$(cat "$tmp/out")" = "forgot 1 record" ] || fail "forget 1ABC (bare hex): $(cat "$tmp/out")"; }
run 0 forget --boot 0b5c8f0e1f6a4e7c9d3b2a1908f7e6d5 --yes --db "$db" &&
	{ [ "$(cat "$tmp/out")" = "forgot 1 record" ] || fail "forget --boot without dashes: $(cat "$tmp/out")"; }
make_store
run 0 forget --boot 5D6E7F80-91A2-B3C4-D5E6-F708192A3B4C --yes --db "$db" &&
	{ [ "$(cat "$tmp/out")" = "forgot 2 records" ] || fail "forget --boot with dashes: $(cat "$tmp/out")"; }
# The question, on a terminal (script(1) gives mfrctl one).
make_store
checks=$((checks + 1))
out=$(printf 'n\n' | script -qec "'$mfrctl' forget 0x1000 --db '$db'" /dev/null 2>&1) || true
if grep -q 'Forget 2 records of pfn 0x1000 (1 pfn, 2 boots)?.*\[y/N\]' <<<"$out" &&
	grep -q 'nothing forgotten' <<<"$out" && [ "$(records)" = 3 ]; then :; else
	fail "forget on a terminal, answered n: $out; $(records) records"
fi
checks=$((checks + 1))
out=$(printf 'y\n' | script -qec "'$mfrctl' forget 0x1000 --db '$db'" /dev/null 2>&1) || true
grep -q 'forgot 2 records' <<<"$out" && [ "$(records)" = 1 ] ||
	fail "forget on a terminal, answered y: $out; $(records) records"
# The journal entry.
make_store
checks=$((checks + 1))
if unshare -m true 2>/dev/null && [ -d /run/systemd ]; then
	mkdir "$tmp/journal"
	python3 - "$tmp/journal/socket" >"$tmp/journal.log" <<'EOP' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(30)
print(s.recv(65536).decode(errors="replace"), flush=True)
EOP
	listener=$!
	for _ in $(seq 50); do [ -S "$tmp/journal/socket" ] && break; sleep 0.1; done
	unshare -m sh -c 'mount -t tmpfs tmpfs /run/systemd && mkdir /run/systemd/journal &&
		mount --bind "$1" /run/systemd/journal && shift && exec "$@"' sh "$tmp/journal" \
		"$mfrctl" forget 0x1000 --yes --db "$db" >"$tmp/out" 2>"$tmp/err" || true
	wait "$listener" || true
	if grep -qx 'MESSAGE_ID=49d41c6281304526b50860bd66dbbaa2' "$tmp/journal.log" &&
		grep -qx 'MFR_FORGOTTEN=2' "$tmp/journal.log" && grep -qx 'MFR_FORGET=pfn 0x1000' "$tmp/journal.log" &&
		grep -q "^MESSAGE=mfrctl forget: 2 records of pfn 0x1000 deleted from $db by uid $(id -u)" "$tmp/journal.log"; then :; else
		fail "forget: no journal entry with its MESSAGE_ID: $(cat "$tmp/journal.log")"
	fi
else
	fail "forget's journal entry: unshare -m is not available (needs root)"
fi

checks=$((checks + 1))
if ! groff -man -ww -z "$root/daemon/mfrctl.8" >"$tmp/err" 2>&1 || [ -s "$tmp/err" ]; then
	fail "daemon/mfrctl.8 does not render cleanly with groff -man -ww"
fi

if [ "$failed" != 0 ]; then
	echo "$failed of $checks checks failed"
	exit 1
fi
echo "all $checks checks passed"
