# SPDX-License-Identifier: GPL-2.0-or-later
# The family across network namespaces: status-get (host-wide counters and
# a generation every tenant moves) answers anyone in the initial network
# namespace, but from any other one only callers with CAP_NET_ADMIN over
# the initial user namespace; every other operation needs privilege over
# the initial user namespace wherever it comes from, so root of a user
# namespace of its own is refused too.  Needs CONFIG_NET_NS and
# CONFIG_USER_NS in the test kernel: without them this test fails.
. ./lib.sh

if ! unshare -n true 2>/dev/null; then
	fail "premise: new network namespaces (CONFIG_NET_NS=y in kernel-hooks/debug.config)"
	finish
	exit
fi

# The YNL library lives in the (root-only) kernel cache: give nobody a copy.
pub=$(mktemp -d)
mkdir -p "$pub/ksrc/tools/net" "$pub/ksrc/Documentation/netlink"
cp -r "$MFR_KSRC/tools/net/ynl" "$pub/ksrc/tools/net/"
cp "$MFR_KSRC/Documentation/netlink/genetlink.yaml" "$pub/ksrc/Documentation/netlink/"
cp nltest.py nl_perms.py "$SPEC" "$pub/"
chmod -R a+rX "$pub"
penv=(env MFR_KSRC="$pub/ksrc" MFR_SPEC="$pub/mfr.yaml")
nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)

# "OK" or "<errno name> <extack message>".
probe='
import errno, sys
sys.path.insert(0, sys.argv[1])
from nltest import Raw
e, msg, _, _ = Raw().request(1)
print("OK" if e == 0 else errno.errorcode[e] + " " + msg)
'
got=$("${nobody[@]}" "${penv[@]}" "$PYTHON" -c "$probe" "$pub")
check "nobody, initial netns: status-get answers ($got)" test "$got" = OK
got=$(unshare -n "${penv[@]}" "$PYTHON" -c "$probe" "$pub")
check "root, new netns: status-get answers ($got)" test "$got" = OK
got=$(unshare -n "${nobody[@]}" "${penv[@]}" "$PYTHON" -c "$probe" "$pub")
echo "nobody in a new netns: $got"
check "nobody, new netns: status-get is EPERM with an extack message" \
	bash -c "[[ '$got' == 'EPERM '*'initial network namespace'* ]]"
check "nobody, new netns: every operation EPERM" \
	unshare -n "${nobody[@]}" "${penv[@]}" "$PYTHON" "$pub/nl_perms.py" netns

# An unprivileged user's own user and network namespaces: full
# capabilities there, none over the initial user namespace.
if "${nobody[@]}" unshare -Urn true 2>/dev/null; then
	got=$("${nobody[@]}" unshare -Urn "${penv[@]}" "$PYTHON" -c "$probe" "$pub")
	echo "nobody as root of its own user and network namespaces: $got"
	check "nobody's own userns + netns: status-get is EPERM" \
		bash -c "[[ '$got' == 'EPERM '*'initial network namespace'* ]]"
	check "nobody's own userns + netns: every operation EPERM" \
		"${nobody[@]}" unshare -Urn "${penv[@]}" "$PYTHON" "$pub/nl_perms.py" netns
else
	fail "premise: unprivileged user namespaces (CONFIG_USER_NS=y in kernel-hooks/debug.config)"
fi
rm -rf "$pub"
finish
