# SPDX-License-Identifier: GPL-2.0-or-later
# What a user's flagged memfds cost, as nobody: their records are
# charged to the creator's memory cgroup.  10 000 open flagged memfds in
# one cgroup cost its "slab" (memory.stat) at least 256 bytes each more
# than 10 000 plain HugeTLB memfds in another.  (The time of a create and
# of a close against the number open is make bench's part P8: a timing in
# this suite would fail at random on a loaded host.)
. ./lib.sh

churn=$MFR_ROOT/build/helpers/memfd_churn
open_n=10000
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
# 10 000 memfds: raise the limit before dropping privileges.
ulimit -Hn 65536 && ulimit -Sn 65536
check "no memfd kept before" ./expect-status memfds-kept=0

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
