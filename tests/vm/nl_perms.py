# SPDX-License-Identifier: GPL-2.0-or-later
"""Permission checks, run under reduced credentials by t-permissions.sh.

  nl_perms.py nobody          every request but status-get: EPERM; no events
  nl_perms.py netns           from a network namespace other than the
                              initial one, without CAP_NET_ADMIN there:
                              every request, status-get too, EPERM
"""
import errno
import sys

from nltest import NLM_F_ACK, NLM_F_DUMP, NLM_F_REQUEST, Raw, check, errname, family, \
    finish, u32

raw = Raw()
EPERM = errno.EPERM

if len(sys.argv) != 2 or sys.argv[1] not in ('nobody', 'netns'):
    sys.exit(f'usage: {sys.argv[0]} nobody|netns')
e, msg, _, _ = raw.request(1)
if sys.argv[1] == 'nobody':
    check(e == 0, f'status-get works ({errname(e)})')
else:
    check(e == EPERM and 'initial network namespace' in msg,
          f'status-get: EPERM naming the initial network namespace (got {errname(e)}, "{msg}")')
for name, cmd, payload, flags in (
        ('rule-add', 2, u32(6, 1), 0), ('rule-del', 3, u32(1, 1), 0),
        ('rule-get', 4, b'', NLM_F_DUMP), ('memfd-get', 5, b'', NLM_F_DUMP),
        ('memfd-set', 6, u32(3, 1) + u32(14, 0) + u32(9, 1), 0),
        ('poison-get', 7, b'', NLM_F_DUMP), ('rule-replace', 15, b'', 0)):
    e, msg, _, _ = raw.request(cmd, payload, NLM_F_REQUEST | NLM_F_ACK | flags)
    check(e == EPERM, f'{name}: EPERM (got {errname(e)})')
if sys.argv[1] == 'nobody':
    try:
        family().ntf_subscribe('events')
        joined = 0
    except OSError as err:
        joined = err.errno
    check(joined == EPERM, f'joining "events": EPERM (got {errname(joined)})')
finish()
