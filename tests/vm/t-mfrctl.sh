# SPDX-License-Identifier: GPL-2.0-or-later
# mfrctl against the real module: each command, JSON that parses, exit
# codes for refusals, a missing module and missing privileges.
. ./lib.sh

ctl=$MFR_ROOT/build/daemon/mfrctl
script=$MFR_ROOT/build/helpers/memfd_script
sync=$(mktemp -d)
chmod 777 "$sync"

# json FILTER: evaluate a Python expression on the JSON document from stdin
# ("d"); succeeds when it is true.
json() { "$PYTHON" -c 'import json, sys; d = json.load(sys.stdin); sys.exit(0 if eval(sys.argv[1]) else 1)' "$1"; }
wait_file() { for _ in $(seq 1000); do [ -e "$1" ] && return 0; sleep 0.02; done; return 1; }

api=$(sed -n 's/^#define MFR_HOOKS_API_VERSION[[:space:]]*\([0-9]*\).*/\1/p' \
	"$MFR_KSRC/include/linux/mfr.h")
check "status -j: versions and counters (hook API $api)" \
	json "d['hooks_api_version'] == ${api:-0} and 'generation' in d and 'memfds_kept' in d" \
	< <("$ctl" -j status)
check "stats prints one line per counter" bash -c "'$ctl' stats | grep -q '^raw-pages-kept '"
check "status on a terminal-less stdout is human text" bash -c "'$ctl' status | grep -qi version"

id=$("$ctl" -j rules add --name 'guest-ram*' --action keep --budget 3 |
	"$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["id"])')
check "rules add prints the new id ($id)" [ -n "$id" ]
check "rules list -j shows the rule" \
	json "any(r['id'] == $id and r['name_glob'] == 'guest-ram*' and r['action'] == 'keep' and r['budget'] == 3 for r in d)" \
	< <("$ctl" -j rules list)

# A workload opted in by the rule, one error, kept alive while we look.
"$script" guest-ram-ctl 1 poison:5 "ready:$sync/a" "wait:$sync/b" close >"$sync/out" &
wait_file "$sync/a"
read -r pid fd ino <"$sync/a"
check "memfd list -j: opted in by rule $id, owned by the workload" \
	json "any(m['inode'] == $ino and m['name'] == 'guest-ram-ctl' and m['rule_id'] == $id and m['pid'] == $pid and m['raw_pages_poisoned'] == 1 for m in d)" \
	< <("$ctl" -j memfd list)
check "poison list -j: the kept page at offset 20480" \
	json "any(p['inode'] == $ino and p['offset'] == 20480 and p['state'] == 'kept' and p['times_consumed'] == 1 for p in d)" \
	< <("$ctl" -j poison list)
check "memfd list (human) names the memfd" bash -c "'$ctl' memfd list | grep -q guest-ram-ctl"
check "memfd set default on a poisoned memfd fails (exit 1) with the reason" \
	bash -c "'$ctl' memfd set $pid $fd default 2>&1 >/dev/null | grep -q poisoned; [ \${PIPESTATUS[0]} = 1 ]"

# monitor -j sees the release of that memfd.
"$ctl" -j -t monitor --count 3 >"$sync/events" &
mon=$!
sleep 1
touch "$sync/b"
wait %1 2>/dev/null
timeout 60 tail --pid=$mon -f /dev/null
check "monitor -j: pending, offlined, evicted for the memfd" \
	"$PYTHON" -c '
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
print(evs)
kinds = [e["event"] for e in evs if e.get("inode") == int(sys.argv[2])]
sys.exit(0 if kinds == ["folio-pending", "folio-offlined", "memfd-evicted"] else 1)' "$sync/events" "$ino"
check "monitor -j -t: snake_case keys in every event" \
	jq -se '[.[] | paths | .[] | strings] | length > 0 and all(test("^[a-z0-9_]+$"))' "$sync/events"
check "monitor -j -t: every event has an ISO 8601 UTC time first" \
	jq -se 'length == 3 and all(.[]; (keys_unsorted[0] == "time") and
		(.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z$")))' "$sync/events"

# memfd set on a live memfd no rule matches.
"$script" scratch-ctl 1 "ready:$sync/c" "wait:$sync/d" close >/dev/null &
wait_file "$sync/c"
read -r pid fd ino <"$sync/c"
check "memfd set PID FD keep --budget 2 (-j: snake_case keys)" bash -c \
	"'$ctl' -j memfd set $pid $fd keep --budget 2 | jq -e '.budget == 2 and ([paths | .[] | strings] | all(test(\"^[a-z0-9_]+\$\")))' >/dev/null"
check "the memfd is listed with budget 2" \
	json "any(m['inode'] == $ino and m['budget'] == 2 for m in d)" < <("$ctl" -j memfd list)
check "memfd set PID FD default" "$ctl" memfd set "$pid" "$fd" default
touch "$sync/d"
wait

# A cgroup rule with a budget of 1: the second error falls back.
cg=/sys/fs/cgroup
[ -e $cg/cgroup.procs ] || mount -t cgroup2 none $cg
mkdir -p $cg/mfr-ctl
cgid=$("$ctl" -j rules add --cgroup /mfr-ctl --action keep --budget 1 |
	"$PYTHON" -c 'import json,sys; print(json.load(sys.stdin)["id"])')
# A blank in the name: tables must keep their columns (-r escapes it).
sh -c "echo \$\$ > $cg/mfr-ctl/cgroup.procs && exec '$script' 'vm ctl' 1 poison:0 poison:1 \
	'ready:$sync/e' 'wait:$sync/f' close" >"$sync/out2" &
wait_file "$sync/e"
read -r pid fd ino <"$sync/e"
check "memfd list -j: opted in by the cgroup rule, over budget after 2 errors" \
	json "any(m['inode'] == $ino and m['rule_id'] == $cgid and m['cgroup_path'] == '/mfr-ctl' and m['state'] == 'over-budget' for m in d)" \
	< <("$ctl" -j memfd list)
# Both pages are recorded: the kept one fell back, the one past the budget
# was never kept; both are isolated when the hugepage is released.
check "poison list -j: both pages in fallback" \
	json "[p['state'] for p in d if p['inode'] == $ino] == ['fallback', 'fallback']" < <("$ctl" -j poison list)
check "stats: a budget fallback" json 'd["budget_fallbacks"] >= 1' < <("$ctl" -j stats)

# Output conventions, with a rule, a kept memfd and poisoned pages about.
# Every key of every -j document is snake_case (jq paths), enums are
# strings, -p indents, and the tables take -o, -n, -r.
snake_everywhere() { # MFRCTL ARGS...: all keys of the output match ^[a-z0-9_]+$
	"$ctl" "$@" >"$sync/j" || return 1
	jq -se '[.[] | paths | .[] | strings] | length > 0 and all(test("^[a-z0-9_]+$"))' "$sync/j" >/dev/null ||
		{ echo "# keys of mfrctl $*: $(jq -sc '[.[] | paths | .[] | strings] | unique' "$sync/j")"; return 1; }
}
for args in "-j status" "-j stats" "-j rules list" "-j memfd list" "-j poison list" \
	"-j -p status" "-j rules"; do
	# shellcheck disable=SC2086
	check "mfrctl $args: snake_case keys only" snake_everywhere $args
done
check "mfrctl -j rules add/del: snake_case keys" bash -c "
	id=\$('$ctl' -j rules add --name 'snake-*' --action default | tee '$sync/add' | jq -r .id) &&
	'$ctl' -j rules del \$id >'$sync/del' &&
	jq -se '[.[] | paths | .[] | strings] | all(test(\"^[a-z0-9_]+\$\"))' '$sync/add' '$sync/del' >/dev/null"
check "enum values are strings (state, policy, action)" \
	bash -c "'$ctl' -j memfd list | jq -e 'all(.[]; (.state | type) == \"string\" and (.policy | type) == \"string\")' &&
		'$ctl' -j poison list | jq -e 'all(.[]; (.state | type) == \"string\")' &&
		'$ctl' -j rules list | jq -e 'all(.[]; (.action | type) == \"string\")'" >/dev/null
check "-p: indented JSON that parses the same" \
	bash -c "[ \$('$ctl' -j -p status | wc -l) -gt 3 ] && '$ctl' -j -p rules | jq -e 'length >= 1' >/dev/null"
check "-r -n -o name,state: the blank in 'vm ctl' escaped, columns kept" \
	bash -c "'$ctl' -r -n -o name,state memfd list | grep -qx 'vm\\\\x20ctl over-budget'"
check "-o inode,name: two columns with headings, in that order" \
	bash -c "'$ctl' -o inode,name memfd | head -1 | grep -qE '^ *INODE +NAME *\$'"
check "-n: no heading line" bash -c "! '$ctl' -n memfd list | grep -q INODE"
check "a bare noun lists: mfrctl poison = mfrctl poison list" \
	bash -c "diff <('$ctl' poison) <('$ctl' poison list)"
touch "$sync/f"
wait
check "the workload saw 4 KiB, then hugepage-sized SIGBUS" \
	diff <(printf 'sigbus 0 code=AR lsb=12 exact=1\nsigbus 1 code=AR lsb=21 exact=1\n') "$sync/out2"
check "poison list -j: released, both pages offlined" \
	json "[p['state'] for p in d if p['inode'] == $ino] == ['offlined', 'offlined']" < <("$ctl" -j poison list)
check "rules del $cgid" "$ctl" rules del "$cgid"
rmdir $cg/mfr-ctl

check "rules del $id" "$ctl" rules del "$id"
check "rules del $id again: exit 1" bash -c "'$ctl' rules del $id 2>/dev/null; [ \$? = 1 ]"
check "rules list -j is empty" json 'd == []' < <("$ctl" -j rules list)
check "bad arguments: exit 2" bash -c "'$ctl' rules del x 2>/dev/null; [ \$? = 2 ]"

setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$ctl" rules list \
	>/dev/null 2>"$sync/eperm"
rc=$?
check "nobody: rules list exits 4 (permission denied)" [ "$rc" = 4 ]
check "nobody: status works" setpriv --reuid=65534 --regid=65534 --clear-groups \
	--inh-caps=-all "$ctl" status

rmmod mfr
"$ctl" status >/dev/null 2>"$sync/err"
rc=$?
cat "$sync/err"
check "module absent: exit 3" [ "$rc" = 3 ]
check "module absent: one line saying so" \
	bash -c "[ \$(wc -l <'$sync/err') = 1 ] && grep -q 'not loaded' '$sync/err'"
insmod "$MFR_ROOT/module/mfr.ko"
rm -rf "$sync"
finish
