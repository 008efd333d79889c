# SPDX-License-Identifier: GPL-2.0-or-later
"""rule-replace: the whole rule set in one request.

- the reply gives the new ids in the request's order, rule-get lists
  exactly the new set, status counts it;
- a set with one refused rule (budget on default, unknown cgroup, an id
  given, past MFR_RULES_MAX) changes nothing: the previous rules and ids
  stay, and the extended ACK points into the refused rule;
- a 300-rule set (more than half the limit) replaces itself twice;
- memfds created while the set [scratch-* default][* keep] replaces
  itself over and over get that set's decision every time: no scratch-*
  memfd is ever kept (the old add-then-delete switch kept some), every
  other one is;
- an empty request removes every rule.
"""
import os
import socket
import threading

from nltest import NlError, check, do, dump, errname, family, finish, status

MFD_HUGETLB = 0x4
RULES_MAX = 1024            # MFR_RULES_MAX in the uAPI header
KEEP, DEFAULT = 1, 0
NAMES = {KEEP: 'keep', DEFAULT: 'default'}   # as dumps give them


def rules():
    return [(r['id'], r.get('name-glob'), r['action'], r.get('budget', 0))
            for r in dump('rule-get')]


def replace(rule_list):
    return do('rule-replace', {'rule': rule_list})


def refused(rule_list):
    try:
        replace(rule_list)
        return 0, None
    except NlError as e:
        return -e.nl_msg.error, e.nl_msg.extack


# The set from the issue: scratch memfds get the default, the rest keep.
SET = [{'name-glob': 'scratch-*', 'action': DEFAULT}, {'name-glob': '*', 'action': KEEP}]

gen0 = status()['generation']
reply = replace(SET)
ids = [r['id'] for r in reply['rule']]
check(len(ids) == 2 and ids[1] == ids[0] + 1, f'reply: two new ids in order ({ids})')
check(reply['generation'] > gen0, 'reply: a newer generation')
check(rules() == [(ids[0], 'scratch-*', 'default', 0), (ids[1], '*', 'keep', 0)],
      f'rule-get lists exactly the new set ({rules()})')
check(status()['rules'] == 2, 'status counts 2 rules')

before = rules()
for what, bad, want in (
        ('a budget on a default rule', [SET[0], {'name-glob': 'x', 'action': DEFAULT, 'budget': 3}],
         'budget'),
        ('a cgroup path with a ".." in it', [SET[0], {'cgroup-path': '/a/../b', 'action': KEEP}],
         'cgroup-path'),
        ('a cgroup id that does not exist', [SET[0], {'cgroup-id': 1 << 40, 'action': KEEP}],
         'cgroup-id'),
        ('an id given by the request', [{'id': 7, 'action': KEEP}], 'id'),
        ('a rule without action', [SET[0], {'name-glob': 'y'}], 'action'),
        (f'{RULES_MAX + 1} rules', [{'name-glob': f'vm-{i}', 'action': KEEP}
                                    for i in range(RULES_MAX + 1)], 'too many')):
    e, ext = refused(bad)
    msg = (ext or {}).get('msg', '')
    check(e != 0 and want in msg, f'{what}: refused ({errname(e)}, "{msg}")')
    check(rules() == before, f'{what}: the previous rules and ids stay')

# More than half the limit, twice: no room for two copies is needed.
big = [{'name-glob': f'vm-{i}-*', 'action': KEEP, 'budget': i % 7} for i in range(300)]
for n in (1, 2):
    reply = replace(big)
    got = rules()
    check(len(reply['rule']) == 300 and len(got) == 300 and
          [r[1] for r in got] == [f'vm-{i}-*' for i in range(300)],
          f'300-rule set, replace {n}: all in, in order')
check(status()['rules'] == 300, 'status counts 300 rules')

# The switch race: replace the same set again and again while memfds
# are created; the decision must always be that set's.
replace(SET)
listener = family()
# Room for every event of the loop (SO_RCVBUFFORCE: we are root); the
# loop drains it as it goes too.
listener.sock.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)
listener.ntf_subscribe('events')
kept = set()


def drain():
    listener.check_ntf()
    for ev in listener.async_msg_queue:
        if ev['name'] == 'memfd-kept-ntf':
            kept.add(ev['msg']['name'])
    listener.async_msg_queue.clear()


stop = threading.Event()
switches = [0]


def switcher():
    req = family()
    while not stop.is_set():
        req.do('rule-replace', {'rule': SET})
        switches[0] += 1


t = threading.Thread(target=switcher)
t.start()
created = []
for i in range(400):
    name = f'scratch-{i}' if i % 2 == 0 else f'other-{i}'
    fd = os.memfd_create(name, MFD_HUGETLB)
    os.close(fd)
    created.append(name)
    if i % 25 == 24:
        drain()
stop.set()
t.join()
drain()
scratch_kept = sorted(n for n in kept if n.startswith('scratch-'))
others = [n for n in created if n.startswith('other-')]
check(switches[0] >= 20, f'{switches[0]} switches while 400 memfds were created')
check(not scratch_kept, f'no scratch-* memfd kept during the switches ({scratch_kept[:5]})')
check(all(n in kept for n in others),
      f'every other-* memfd kept ({len([n for n in others if n in kept])}/{len(others)})')

reply = replace([])
check(reply.get('rule', []) == [] and rules() == [] and status()['rules'] == 0,
      'an empty set removes every rule')
finish()
