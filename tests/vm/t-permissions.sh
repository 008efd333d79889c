# SPDX-License-Identifier: GPL-2.0-or-later
# Status is open to everyone in the initial network namespace (other
# namespaces: t-nl-netns); the events group only to CAP_SYS_ADMIN.
. ./lib.sh

# The YNL library lives in the (root-only) kernel cache: give nobody a copy.
pub=$(mktemp -d)
cp -r "$MFR_KSRC/tools/net/ynl" "$pub/ynl"
cp "$MFR_KSRC/Documentation/netlink/genetlink.yaml" "$SPEC" "$pub/"
chmod -R a+rX "$pub"

as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }

# Prints "status=OK|<errno name>" and "events=OK|<errno name>".
probe='
import errno, sys
sys.path.insert(0, sys.argv[1] + "/ynl")
from lib import YnlFamily
def attempt(what, fn):
    try:
        fn()
        print(what + "=OK")
    except OSError as e:
        print(what + "=" + errno.errorcode[e.errno])
    except Exception as e:
        print(what + "=" + type(e).__name__ + ":" + str(e))
def family():
    return YnlFamily(sys.argv[1] + "/mfr.yaml", "")
# A fresh socket each: ntf_subscribe() binds, which fails once a request did.
attempt("status", lambda: family().do("status-get", {}))
attempt("events", lambda: family().ntf_subscribe("events"))
'
user=$(as_nobody "$PYTHON" -c "$probe" "$pub")
root=$("$PYTHON" -c "$probe" "$pub")
echo "nobody: $user"
echo "root: $root"
check "unprivileged status-get works" grep -qx status=OK <<<"$user"
check "unprivileged join of 'events' fails with EPERM" grep -qx events=EPERM <<<"$user"
check "root status-get works" grep -qx status=OK <<<"$root"
check "root joins 'events'" grep -qx events=OK <<<"$root"

# Every operation but status-get, for nobody (nl_perms.py, on the public copy).
mkdir -p "$pub/ksrc/tools/net" "$pub/ksrc/Documentation/netlink"
cp -r "$MFR_KSRC/tools/net/ynl" "$pub/ksrc/tools/net/"
cp "$MFR_KSRC/Documentation/netlink/genetlink.yaml" "$pub/ksrc/Documentation/netlink/"
cp nltest.py nl_perms.py "$SPEC" "$pub/"
chmod -R a+rX "$pub"
check "nobody: EPERM for every request but status-get, and for events" \
	as_nobody env MFR_KSRC="$pub/ksrc" MFR_SPEC="$pub/mfr.yaml" "$PYTHON" "$pub/nl_perms.py" nobody

# mfrctl takes the memfd of another process with pidfd_getfd(2), which
# needs ptrace-attach rights on it.
sync_dir=$(mktemp -d)
chmod 777 "$sync_dir"
as_nobody "$MFR_ROOT/build/helpers/memfd_script" nobody-ram 1 "ready:$sync_dir/a" \
	"wait:$sync_dir/b" close &
for _ in $(seq 500); do [ -e "$sync_dir/a" ] && break; sleep 0.02; done
read -r tpid tfd _ <"$sync_dir/a"
check "root without CAP_SYS_PTRACE: memfd set on nobody's memfd is refused (exit 4), naming ptrace" \
	bash -c "setpriv --bounding-set=-sys_ptrace --inh-caps=-sys_ptrace '$MFRCTL' memfd set $tpid $tfd default \
		2>&1 >/dev/null | grep -q 'ptrace-attach'; [ \${PIPESTATUS[0]} = 4 ]"
check "root with CAP_SYS_PTRACE: memfd set on nobody's memfd works" \
	"$MFRCTL" memfd set "$tpid" "$tfd" default
touch "$sync_dir/b"
wait
rm -rf "$pub" "$sync_dir"
finish
