# SPDX-License-Identifier: GPL-2.0-or-later
# A cgroup-path rule is matched by name when a memfd is created, not
# resolved once when the rule is added:
#  - it is accepted before its cgroup exists (libvirt's machine.slice
#    appears with the first guest), and in force for the first memfd a
#    process in that cgroup creates, with no push in between;
#  - a scope removed and created again (a VM restarted) is matched with
#    the same rule (same id), as is a cgroup below the path;
#  - a cgroup whose name only starts like the path is not;
#  - a path that is no path of cgroup names is refused.
. ./lib.sh

script=$MFR_ROOT/build/helpers/memfd_script
ctl=$MFRCTL
cg=/sys/fs/cgroup
[ -e $cg/cgroup.procs ] || mount -t cgroup2 none $cg
# No cgroup or rule of ours before or after.
reset() {
	rmdir "$cg/mfr-late.slice/vm1.scope/inner" "$cg/mfr-late.slice/vm1.scope" \
		"$cg/mfr-late.slice" "$cg/mfr-late.slice2" 2>/dev/null
	del_all_rules
}
reset
T=$(mktemp -d)
trap 'reset; rm -rf "$T"' EXIT
json() { "$PYTHON" -c 'import json, sys; d = json.load(sys.stdin); sys.exit(0 if eval(sys.argv[1]) else 1)' "$1"; }

check "premise: /mfr-late.slice does not exist" test ! -e "$cg/mfr-late.slice"
id=$("$ctl" -j rules add --cgroup /mfr-late.slice --action keep --budget 8 |
	"$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["id"])')
check "a cgroup-path rule for a cgroup that does not exist yet is accepted (id $id)" test -n "$id"
check "rules list: by path, no cgroup id" \
	json "any(r['id'] == $id and r.get('cgroup_path') == '/mfr-late.slice' and 'cgroup_id' not in r for r in d)" \
	< <("$ctl" -j rules list)

# run_in CGROUP NAME: memfd_script in that cgroup from its first
# instruction (as "systemd-run --scope" starts a guest), holding memfd
# NAME until told to close it; prints its inode.
run_in() {
	local dir=$T/$2
	mkdir -p "$dir"
	sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2" "$3" 1 "ready:$4/ready" "wait:$4/go" close' \
		sh "$cg$1" "$script" "$2" "$dir" >"$dir/out" 2>&1 &
	echo $! >"$dir/pid"
	for _ in $(seq 600); do [ -e "$dir/ready" ] && break; sleep 0.1; done
	read -r _ _ ino <"$dir/ready" 2>/dev/null
	echo "${ino:-0}"
}
end_run() {
	touch "$T/$1/go"
	wait "$(cat "$T/$1/pid")"
}
kept_by() { # INODE RULE
	"$ctl" -j memfd list | json "any(m['inode'] == $1 and m['policy'] == 'keep' and m.get('rule_id') == $2 and m.get('budget') == 8 for m in d)"
}
not_kept() { # INODE
	"$ctl" -j memfd list | json "not any(m['inode'] == $1 for m in d)"
}

mkdir -p "$cg/mfr-late.slice/vm1.scope"
ino=$(run_in /mfr-late.slice/vm1.scope vm1)
check "the slice made after the rule: a memfd of its scope is kept by the rule from the first one" \
	kept_by "$ino" "$id"
end_run vm1

# The scope removed and made again: a new cgroup, the same rule.
rmdir "$cg/mfr-late.slice/vm1.scope"
mkdir "$cg/mfr-late.slice/vm1.scope"
ino=$(run_in /mfr-late.slice/vm1.scope vm1-again)
check "the scope made again: kept by the same rule, no push in between" kept_by "$ino" "$id"
end_run vm1-again

mkdir -p "$cg/mfr-late.slice/vm1.scope/inner"
ino=$(run_in /mfr-late.slice/vm1.scope/inner inner)
check "a cgroup below the path: kept" kept_by "$ino" "$id"
end_run inner

mkdir -p "$cg/mfr-late.slice2"
ino=$(run_in /mfr-late.slice2 sibling)
check "a cgroup whose name only starts like the path (/mfr-late.slice2): not kept" not_kept "$ino"
end_run sibling

for bad in /mfr-late.slice/ /a//b /a/../b; do
	rc=0
	"$ctl" rules add --cgroup "$bad" --action keep 2>"$T/err" || rc=$?
	check "rules add --cgroup $bad: refused (exit $rc: $(cat "$T/err"))" \
		bash -c "[ $rc = 1 ] && grep -q 'cgroup-path: not an absolute path of cgroup names' '$T/err'"
done
check "still the one rule" json "len(d) == 1" < <("$ctl" -j rules list)
finish
