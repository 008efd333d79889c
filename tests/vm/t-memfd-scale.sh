# SPDX-License-Identifier: GPL-2.0-or-later
# What a user's flagged memfds cost, as nobody:
#  1. the time of one create, and of one close, does not grow with the
#     number of flagged memfds open (10 000): the module finds a memfd's
#     record by a hash lookup, not a walk over all of them.  A TCG guest's
#     clock runs on while the host runs something else, so each batch of
#     100 flagged memfds is timed against a batch of plain HugeTLB memfds
#     (which the module does not track) right after it: the median over
#     SCALE_ROUNDS (21) rounds of flagged / plain, with 10 000 open, must
#     stay within SCALE_MAX_RATIO (1.5) times what it is with none open.
#     (A list walk made a close 6 times slower with 10 000 open.)
#  2. the records are charged to the creator's memory cgroup: 10 000 open
#     flagged memfds in one cgroup cost its "slab" (memory.stat) at least
#     256 bytes each more than 10 000 plain HugeTLB memfds in another.
. ./lib.sh

churn=$MFR_ROOT/build/helpers/memfd_churn
open_n=10000
rounds=${SCALE_ROUNDS:-21}
ratio=${SCALE_MAX_RATIO:-1.5}
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
# 10 000 memfds and a batch: raise the limit before dropping privileges.
ulimit -Hn 65536 && ulimit -Sn 65536

# 1. Per-create and per-close time.
check "no memfd kept before" ./expect-status memfds-kept=0
out=$("${nobody[@]}" "$churn" timing "$open_n" 100 "$rounds")
echo "$out"
v() { sed -n "s/^$1=//p" <<<"$out"; }
within() { # BASE VALUE
	awk -v b="$1" -v x="$2" -v r="$ratio" 'BEGIN { exit !(x <= b * r) }'
}
for op in create close; do
	base=$(v "${op}_ratio_0") loaded=$(v "${op}_ratio_$open_n")
	echo "per-$op: $(v "${op}_ns_0") ns with none open, $(v "${op}_ns_$open_n") ns with $open_n" \
		"(plain: $(v "plain_${op}_ns_0"), $(v "plain_${op}_ns_$open_n"))"
	check "per-$op time / plain with $open_n open ($loaded/1000) <= $ratio x with none ($base/1000)" \
		within "${base:-0}" "${loaded:-999999999}"
done
check "no memfd kept after" ./expect-status memfds-kept=0

# 2. Charged to the creator's memory cgroup.
root=/sys/fs/cgroup
grep -q "^cgroup2 $root " /proc/mounts || mount -t cgroup2 none "$root"
check "the memory controller is available" grep -qw memory "$root/cgroup.controllers"
echo +memory >"$root/cgroup.subtree_control"
sync_dir=$(mktemp -d)
chmod 777 "$sync_dir"
slab_of() { awk '$1 == "slab" { print $2 }' "$1/memory.stat"; }
for kind in plain keep; do
	cg=$root/mfr-scale-$kind
	mkdir -p "$cg"
	bash -c "echo \$\$ >$cg/cgroup.procs && exec ${nobody[*]} $churn hold $open_n $kind $sync_dir/$kind-ready $sync_dir/go" &
done
for _ in $(seq 3000); do
	[ -e "$sync_dir/plain-ready" ] && [ -e "$sync_dir/keep-ready" ] && break
	sleep 0.1
done
check "both holders ready" test -e "$sync_dir/plain-ready" -a -e "$sync_dir/keep-ready"
check "$open_n memfds kept" ./expect-status memfds-kept=$open_n
plain=$(slab_of "$root/mfr-scale-plain") keep=$(slab_of "$root/mfr-scale-keep")
per=$(((keep - plain) / open_n))
echo "memory.stat slab: $plain bytes for $open_n plain memfds, $keep for $open_n flagged: $per bytes more each"
check "each flagged memfd charges its creator's cgroup >= 256 bytes more ($per)" [ "$per" -ge 256 ]
touch "$sync_dir/go"
wait
check "no memfd kept once closed" ./expect-status memfds-kept=0
rmdir "$root/mfr-scale-plain" "$root/mfr-scale-keep"
rm -rf "$sync_dir"
finish
