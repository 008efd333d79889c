# SPDX-License-Identifier: GPL-2.0-or-later
# Netlink fuzzing (tests/helpers/nl_fuzz.c): random and mutated requests to
# the mfr family, as root and then as nobody.  Every request is answered,
# nobody gets nothing but status-get, the module's state is the same
# afterwards (the fuzzer deletes what it created) and kmemleak finds no
# leak.  NL_FUZZ_COUNT (default 15000) and NL_FUZZ_SEED set the runs:
# every suite run draws a new seed, so runs add up to more coverage than
# one long run.  50000 messages per run took about 4 minutes each on a
# 2-core machine under the debug kernel with one other VM beside it
# (449 s for both runs in a cold CI run), 8 at a load of 9: hence the
# 30 minute limit for longer runs.
#
# The generation contract (status "generation" in module/mfr.yaml): every
# successful write operation (rule-add, rule-del, memfd-set) bumps the
# state generation by exactly one, and nothing else the fuzzer does moves
# it.  So after the privileged run the generation has grown by exactly its
# accepted_changes + cleanup_dels + cleanup_sets, and the unprivileged run
# leaves it alone.
# vm-timeout: 1800
. ./lib.sh

kmemleak=/sys/kernel/debug/kmemleak
fuzz=$MFR_ROOT/build/helpers/nl_fuzz
count=${NL_FUZZ_COUNT:-15000}
seed=${NL_FUZZ_SEED:-$(date +%s)}
echo "nl_fuzz: seed $seed, $count messages per run (replay with NL_FUZZ_SEED=$seed)"

# 1. kmemleak, forgetting what is older than this test.
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
leakcheck=
if [ ! -e "$kmemleak" ]; then
	fail "kmemleak present ($kmemleak missing: CONFIG_DEBUG_KMEMLEAK=y?)"
else
	# kmemleak reports only objects older than 5 s: let the previous
	# test's allocations age so that its leaks are not blamed on us.
	sleep 5
	if echo scan >"$kmemleak" && echo clear >"$kmemleak"; then
		leakcheck=1
	else
		fail "kmemleak scan and clear (disabled at runtime?)"
	fi
fi

# The rule, memfd and poison dumps without their generation, sorted: the
# state the fuzzer must leave as it found it.
dump_state() {
	local op out
	for op in rule-get memfd-get poison-get; do
		out=$(ynl --dump "$op" --output-json) || return 1
		"$PYTHON" -c '
import json, sys
entries = json.loads(sys.argv[2])
for e in entries:
    e.pop("generation", None)
entries.sort(key=lambda e: json.dumps(e, sort_keys=True))
print(sys.argv[1] + ": " + json.dumps(entries, sort_keys=True))
' "$op" "$out" || return 1
	done
}

# Value of KEY=... in the fuzzer output $2.
kv() { sed -n "s/^$1=//p" <<<"$2" | tail -n 1; }
is_num() { [[ $1 =~ ^[0-9]+$ ]]; }

# run_fuzz NAME [ARGS...]: one nl_fuzz run, its output and time; sets $out.
run_fuzz() {
	local name=$1 start rc ms
	shift
	start=$(date +%s%N)
	out=$("$fuzz" --count "$count" --seed "$seed" "$@" 2>&1)
	rc=$?
	ms=$((($(date +%s%N) - start) / 1000000))
	# Failure details as they are, the key=value summary on one line.
	grep -v '^[A-Za-z_]*=' <<<"$out" | sed "s/^/  [$name] /"
	echo "  [$name] $(grep '^[A-Za-z_]*=' <<<"$out" | tr '\n' ' ')"
	echo "$name run: $((ms / 1000)).$((ms % 1000 / 100)) s for $count messages"
	check "$name nl_fuzz exits 0 (rc $rc)" [ "$rc" = 0 ]
}

# 2. Snapshot.
gen_before=$(status_attr generation)
state_before=$(dump_state) || { fail "dumps before fuzzing"; state_before=; }
echo "generation before: $gen_before"
echo "$state_before"

# 3. Privileged, then unprivileged.
run_fuzz privileged
accepted=$(kv accepted_changes "$out")
dels=$(kv cleanup_dels "$out")
sets=$(kv cleanup_sets "$out")
gen_mid=$(status_attr generation)

run_fuzz unprivileged --unprivileged
check "unprivileged run accepted nothing" [ "$(kv accepted_changes "$out")" = 0 ]
gen_after=$(status_attr generation)

# 4. The generation contract, and the state restored.
if is_num "$gen_before" && is_num "$accepted" && is_num "$dels" && is_num "$sets"; then
	want=$((gen_before + accepted + dels + sets))
	check "generation $gen_mid after the privileged run = $gen_before + $accepted accepted + $dels cleanup dels + $sets cleanup sets" \
		[ "$gen_mid" = "$want" ]
else
	fail "generation accounting: before '$gen_before', accepted_changes '$accepted', cleanup_dels '$dels', cleanup_sets '$sets'"
fi
check "unprivileged run left the generation at $gen_mid (now $gen_after)" \
	[ "${gen_mid:-none}" = "${gen_after:-missing}" ]

if ! state_after=$(dump_state) || [ -z "$state_before" ]; then
	fail "dumps before and after fuzzing"
elif [ "$state_after" = "$state_before" ]; then
	pass "rule, memfd and poison dumps unchanged"
else
	fail "rule, memfd and poison dumps unchanged"
	diff <(echo "$state_before") <(echo "$state_after") | sed 's/^/  /'
fi

# 5. Leaks: two scans a few seconds apart (a reported object must be
# older than 5 s and unreferenced), then nothing may be reported.
if [ -n "$leakcheck" ]; then
	echo scan >"$kmemleak"
	sleep 6
	echo scan >"$kmemleak"
	leaks=$(cat "$kmemleak")
	if [ -z "$leaks" ]; then
		pass "kmemleak reports nothing"
	else
		fail "kmemleak reports nothing"
		echo "$leaks" | head -n 200
	fi
fi
finish
