# SPDX-License-Identifier: GPL-2.0-or-later
# Status is open to everyone; the events group only to CAP_SYS_ADMIN.
. ./lib.sh

as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"; }

# Joins the group and reports the errno name ("OK" if the join worked).
join_events() {
	"$PYTHON" - "$MFR_KSRC" "$SPEC" <<'PY'
import sys
sys.path.insert(0, sys.argv[1] + '/tools/net/ynl')
from lib import YnlFamily
ynl = YnlFamily(sys.argv[2], sys.argv[1] + '/Documentation/netlink/genetlink.yaml')
try:
    ynl.ntf_subscribe('events')
    print('OK')
except OSError as e:
    import errno
    print(errno.errorcode[e.errno])
PY
}

check "unprivileged status-get works" as_nobody "$PYTHON" "$MFR_KSRC/tools/net/ynl/cli.py" \
	--spec "$SPEC" --schema "$MFR_KSRC/Documentation/netlink/genetlink.yaml" --do status-get
r=$(as_nobody bash -c "$(declare -f join_events); PYTHON=$PYTHON MFR_KSRC=$MFR_KSRC SPEC=$SPEC join_events")
check "unprivileged join of 'events' fails with EPERM (got $r)" [ "$r" = EPERM ]
r=$(join_events)
check "root joins 'events' (got $r)" [ "$r" = OK ]
finish
