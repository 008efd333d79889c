# SPDX-License-Identifier: GPL-2.0-or-later
"""The "events" group: a listener sees every transition of a scripted
scenario, in order; a listener whose socket overflows (ENOBUFS) and then
re-dumps ends with the same state as one that kept up."""
import errno
import socket

from nltest import Workload, check, dump, dump_flags, family, finish

KINDS = ('memfd-kept-ntf', 'memfd-evicted-ntf', 'page-poisoned-ntf', 'page-consumed-ntf',
         'budget-exceeded-ntf', 'folio-pending-ntf', 'folio-offlined-ntf')


def snapshot():
    """State as dumps show it: memfds by inode, poisoned pages by pfn."""
    return ({m['inode']: m['raw-pages-poisoned'] for m in dump('memfd-get')},
            {p['pfn']: (p['state'], p['times-consumed']) for p in dump('poison-get')})


def apply(state, ev):
    """What a daemon does with each event to keep its state."""
    mfds, pages = state
    kind, a = ev['name'], ev['msg']
    if kind == 'memfd-kept-ntf':
        mfds[a['inode']] = a['raw-pages-poisoned']
    elif kind == 'memfd-evicted-ntf':
        mfds.pop(a['inode'], None)
    elif kind == 'page-poisoned-ntf':
        pages[a['pfn']] = (a['state'], a['times-consumed'])
        if a['inode'] in mfds:
            mfds[a['inode']] += 1
    elif kind == 'page-consumed-ntf':
        pages[a['pfn']] = (pages[a['pfn']][0], a['times-consumed'])
    elif kind in ('folio-pending-ntf', 'folio-offlined-ntf'):
        new = 'pending' if kind == 'folio-pending-ntf' else 'offlined'
        for pfn, (st, n) in pages.items():
            if a['head-pfn'] <= pfn < a['head-pfn'] + a['folio-size'] // 4096 and \
                    st != 'fallback':
                pages[pfn] = (new, n)


requester = family()


def do_rule_add(glob):
    return requester.do('rule-add', {'name-glob': glob, 'action': 0})['id']


def listener(rcvbuf=None):
    ynl = family()
    if rcvbuf:
        ynl.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    ynl.ntf_subscribe('events')
    return ynl


def drain(ynl):
    ynl.check_ntf()
    events, ynl.async_msg_queue = list(ynl.async_msg_queue), type(ynl.async_msg_queue)()
    return events


keeper = listener()
laggard = listener(rcvbuf=1)        # the kernel's minimum: a few messages
state = snapshot()

# One kept memfd: 2 errors, then closed; a second one stays open, poisoned.
a = Workload('ev-a', 1, ['poison:3', 'poison:7', 'close'], keep=True)
b = Workload('ev-b', 1, ['poison:9', 'ready:@x', 'wait:@y', 'close'], keep=True)
a.finish()
b.ready('x')
events = drain(keeper)
for ev in events:
    apply(state, ev)

kinds = [ev['name'] for ev in events]
gens = [ev['msg']['generation'] for ev in events]
check(all(k in KINDS for k in kinds), f'only known event kinds ({kinds})')
check(gens == sorted(gens) and len(set(gens)) == len(gens),
      f'events arrive in generation order ({gens})')
ino_a = next(ev['msg']['inode'] for ev in events
             if ev['name'] == 'memfd-kept-ntf' and ev['msg']['name'] == 'ev-a')
seq_a = [ev['name'] for ev in events if ev['msg'].get('inode') == ino_a]
check(seq_a == ['memfd-kept-ntf', 'page-poisoned-ntf', 'page-consumed-ntf',
                'page-poisoned-ntf', 'page-consumed-ntf', 'folio-pending-ntf',
                'folio-offlined-ntf', 'memfd-evicted-ntf'],
      f'memfd ev-a: every transition, in order ({seq_a})')
consumed = [ev['msg'] for ev in events if ev['name'] == 'page-consumed-ntf'
            and ev['msg']['inode'] == ino_a]
check(all(c['signal-code'] == 'action-required' and c['comm'] == 'memfd_script' and c['pid'] > 0
          for c in consumed), f'consumption events name the task, action required ({consumed})')
off = [ev['msg'] for ev in events
       if ev['name'] == 'folio-offlined-ntf' and ev['msg']['inode'] == ino_a]
check(len(off) == 1 and off[0]['raw-pages-isolated'] == 2 and
      off[0]['healthy-pages-returned'] == 510, f'folio-offlined: 2 isolated, 510 returned ({off})')

overrun = False
try:
    laggard.check_ntf()
except OSError as e:
    overrun = e.errno == errno.ENOBUFS
check(overrun, 'the small listener overflowed (ENOBUFS)')
recovered = snapshot()            # what the laggard does: dump again
check(recovered == state, f'after re-dumping it has the keeper\'s state ({recovered} vs {state})')

b.go('y')
b.finish()
for ev in drain(keeper):
    apply(state, ev)
check(snapshot() == state, 'the keeper still agrees with the dumps after ev-b closes')

# A dump that state changes under is marked NLM_F_DUMP_INTR (0x10): enough
# rules for several passes, and one more added after the first.
NLM_F_DUMP_INTR = 0x10
ids = [do_rule_add(f'dump-intr-{i}-' + 'x' * 100) for i in range(120)]
flags = dump_flags(4)
check(len(flags) > 100 and not any(f & NLM_F_DUMP_INTR for f in flags),
      f'an undisturbed dump of {len(flags)} messages is not marked interrupted')
flags = dump_flags(4, between=lambda: ids.append(do_rule_add('dump-intr-late')))
check(any(f & NLM_F_DUMP_INTR for f in flags),
      'a dump the state changed under is marked NLM_F_DUMP_INTR')
for rid in ids:
    requester.do('rule-del', {'id': rid})
finish()
