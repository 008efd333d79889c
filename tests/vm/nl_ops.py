# SPDX-License-Identifier: GPL-2.0-or-later
"""Every operation of the mfr family through the kernel's YNL CLI, with the
values expected after real (MADV_HWPOISON) errors: opt-in by name rule, by
cgroup rule, memfd-set on a live memfd, budget fallback."""
import os
import subprocess

from nltest import Workload, check, cli, dump, errno_of, finish, do, getfd, memfds, \
    poison, status

HP = 2 << 20
EHWPOISON = 133     # Linux's; Python's errno module lacks it
EXPECT_KEPT = 'code=AR lsb=12 exact=1'

# --- status-get, rule-add / rule-get / rule-del ---------------------------
st = cli('--do', 'status-get', validate=True)
with open(os.path.join(os.environ['MFR_KSRC'], 'include/linux/mfr.h')) as hdr:
    API = next(int(line.split()[2]) for line in hdr
               if line.startswith('#define MFR_HOOKS_API_VERSION'))
check(st['hooks-api-version'] == API and st['module-version'],
      f"status-get: hook API {API} and a module version ({st})")
base_gen = st['generation']

rule = cli('--do', 'rule-add', '--json', '{"name-glob": "guest-ram*", "action": 1}')
name_rule = rule['id']
check(rule['generation'] > base_gen, f'rule-add returns an id and a newer generation ({rule})')
rules = cli('--dump', 'rule-get')
check(any(r['id'] == name_rule and r['name-glob'] == 'guest-ram*' and r['action'] == 'keep'
          for r in rules), f'rule-get lists the name rule ({rules})')

# --- opt-in by name rule, errors, release --------------------------------
w = Workload('guest-ram-ops', 2, ['ready:@a', 'wait:@b', 'poison:1', 'poison:2',
                                  'read:0', 'read:3', 'ready:@c', 'wait:@d', 'close'])
pid, fd, ino = w.ready('a')
mfds = {m['inode']: m for m in cli('--dump', 'memfd-get')}
m = mfds.get(ino, {})
check(m.get('name') == 'guest-ram-ops' and m.get('rule-id') == name_rule and
      m.get('policy') == 'keep' and m.get('pid') == pid and m.get('comm') == 'memfd_script' and
      m.get('size') == 2 * HP and m.get('hugepage-size') == HP and m.get('state') == 'clean' and
      m.get('raw-pages-poisoned') == 0 and m.get('cgroup-path'),
      f'memfd-get: the memfd was opted in by the name rule, with its owner ({m})')
w.go('b')
w.ready('c')
recs = [p for p in cli('--dump', 'poison-get') if p['inode'] == ino]
check(sorted(p['offset'] for p in recs) == [4096, 8192] and
      all(p['state'] == 'kept' and p['times-consumed'] == 1 and p['folio-size'] == HP and
          p['head-pfn'] == p['pfn'] - p['offset'] // 4096 for p in recs),
      f'poison-get: two kept pages with offsets, head pfn, one consumption each ({recs})')
m = memfds()[ino]
check(m['raw-pages-poisoned'] == 2 and m['state'] == 'poisoned',
      f'memfd-get: 2 pages poisoned, state poisoned ({m})')
w.go('d')
w.finish()
check(w.out[:4] == [f'sigbus 1 {EXPECT_KEPT}', f'sigbus 2 {EXPECT_KEPT}',
                    'read 0 ok', 'read 3 ok'],
      f'the workload got page-sized SIGBUSes and kept reading ({w.out})')
recs = [p for p in poison().values() if p['inode'] == ino]
check(len(recs) == 2 and all(p['state'] == 'offlined' for p in recs),
      f'poison-get: both pages offlined after close ({recs})')
check(ino not in memfds(), 'memfd-get: the closed memfd is gone')

# --- opt-in by cgroup rule ------------------------------------------------
cg = '/sys/fs/cgroup'
if not os.path.exists(cg + '/cgroup.procs'):
    subprocess.run(['mount', '-t', 'cgroup2', 'none', cg], check=True)
os.makedirs(cg + '/mfr-vmm', exist_ok=True)
rule = cli('--do', 'rule-add', '--json',
           '{"cgroup-path": "/mfr-vmm", "action": 1, "budget": 4}')
cg_rule = rule['id']
rules = {r['id']: r for r in cli('--dump', 'rule-get')}
check(rules[cg_rule].get('cgroup-path') == '/mfr-vmm' and 'cgroup-id' not in rules[cg_rule]
      and rules[cg_rule].get('budget') == 4, f'rule-get: the cgroup rule, by path ({rules[cg_rule]})')
enter = ['sh', '-c', f'echo $$ > {cg}/mfr-vmm/cgroup.procs && exec "$0" "$@"']
w = Workload('vm-7-ram', 1, ['ready:@a', 'wait:@b', 'close'], prefix=enter)
pid, fd, ino = w.ready('a')
m = memfds().get(ino, {})
check(m.get('rule-id') == cg_rule and m.get('cgroup-path') == '/mfr-vmm' and
      m.get('budget') == 4, f'memfd-get: opted in by the cgroup rule, budget 4 ({m})')
w.go('b')
w.finish()

# An unmatched memfd is not opted in.
w = Workload('scratch', 1, ['ready:@a', 'wait:@b', 'close'])
pid, fd, ino = w.ready('a')
check(ino not in memfds(), 'a memfd no rule matches is not listed')

# --- memfd-set on a live memfd, then budget fallback ----------------------
# The request names the memfd by a descriptor of ours, as mfrctl does; ours
# is closed at once, or it would hold the memfd after the workload's close.
myfd = getfd(pid, fd)
reply = cli('--do', 'memfd-set', '--json',
            f'{{"pid": {pid}, "fd": {myfd}, "policy": 1, "budget": 2}}', pass_fds=(myfd,))
os.close(myfd)
check(reply['inode'] == ino and reply['policy'] == 'keep' and reply['budget'] == 2,
      f'memfd-set keeps the live memfd with budget 2 ({reply})')
m = memfds().get(ino, {})
check(m.get('pid') == pid and 'rule-id' not in m, f'memfd-get lists it, owned by the workload ({m})')
w.go('b')
w.finish()

before = status()
w = Workload('scratch-2', 1, ['ready:@a', 'wait:@b', 'poison:0', 'poison:1', 'poison:2',
                              'read:3', 'ready:@c', 'wait:@d', 'close'])
pid, fd, ino = w.ready('a')
myfd = getfd(pid, fd)
do('memfd-set', {'pid': pid, 'fd': myfd, 'policy': 1, 'budget': 2})
w.go('b')
w.ready('c')
m = memfds()[ino]
check(m['state'] == 'over-budget' and m['raw-pages-poisoned'] == 3,
      f'memfd-get: over budget after the third error ({m})')
recs = sorted((p for p in poison().values() if p['inode'] == ino), key=lambda p: p['offset'])
# The two kept pages fell back; the one past the budget is recorded too.
check([p['state'] for p in recs] == ['fallback'] * 3,
      f'poison-get: all three pages in fallback ({recs})')
after = status()
check(after['budget-fallbacks'] == before['budget-fallbacks'] + 1,
      'status: one budget fallback')
e, ext = errno_of(lambda: do('memfd-set', {'pid': pid, 'fd': myfd, 'policy': 0}))
os.close(myfd)
check(e == 16 and 'poisoned' in (ext or {}).get('msg', ''),
      f'memfd-set default on a poisoned memfd: EBUSY ({e}, {ext})')
# A fourth error in the hugepage that fell back: recorded, not a second fallback.
subprocess.run(['modprobe', 'hwpoison_inject'], check=True)
try:
    with open('/sys/kernel/debug/hwpoison/corrupt-pfn', 'w') as f:
        f.write(str(recs[0]['head-pfn'] + 5))
except OSError as e:
    # The hugepage is no longer kept mapped: "already poisoned", as stock.
    check(e.errno == EHWPOISON, f'corrupt-pfn in the fallen-back hugepage: {e}')
recs = [p for p in poison().values() if p['inode'] == ino]
check(len(recs) == 4 and all(p['state'] == 'fallback' for p in recs),
      f'a fourth error after the fallback: recorded as fallback ({recs})')
check(status()['budget-fallbacks'] == before['budget-fallbacks'] + 1,
      'status: still one budget fallback after a fourth error')
w.go('d')
w.finish()
check(w.out == [f'sigbus 0 {EXPECT_KEPT}', f'sigbus 1 {EXPECT_KEPT}',
                'sigbus 2 code=AR lsb=21 exact=1', 'read 3 sigbus lsb=21'],
      f'past the budget: hugepage-sized SIGBUS, the hugepage is gone ({w.out})')
recs = [p for p in poison().values() if p['inode'] == ino]
check(len(recs) == 4 and all(p['state'] == 'offlined' for p in recs),
      f'poison-get: released, the fallen-back hugepage was offlined all the same ({recs})')

# A hugepage whose first error is past the budget is never kept: the stock
# handling, one fallback, and no record left behind after the close.
before = status()
w = Workload('scratch-2b', 2, ['ready:@a', 'wait:@b', 'poison:0', 'poison:512', 'close'])
pid, fd, ino = w.ready('a')
myfd = getfd(pid, fd)
do('memfd-set', {'pid': pid, 'fd': myfd, 'policy': 1, 'budget': 1})
os.close(myfd)
w.go('b')
w.finish()
check(w.out == [f'sigbus 0 {EXPECT_KEPT}', 'sigbus 512 code=AR lsb=21 exact=1'],
      f'second hugepage past the budget: hugepage-sized SIGBUS ({w.out})')
check(status()['budget-fallbacks'] == before['budget-fallbacks'] + 1,
      'status: one budget fallback for the hugepage never kept')
recs = [p for p in poison().values() if p['inode'] == ino]
check([p['state'] for p in recs] == ['offlined'],
      f'poison-get: only the kept hugepage\'s page, offlined; none left in fallback ({recs})')

# memfd-set default on a kept, clean memfd
w = Workload('scratch-3', 1, ['ready:@a', 'wait:@b', 'close'], keep=True)
pid, fd, ino = w.ready('a')
kept = status()['memfds-kept']
myfd = getfd(pid, fd)
reply = cli('--do', 'memfd-set', '--json', f'{{"pid": {pid}, "fd": {myfd}, "policy": 0}}',
            pass_fds=(myfd,))
os.close(myfd)
check(reply['policy'] == 'default' and ino not in memfds() and status()['memfds-kept'] == kept - 1,
      f'memfd-set default releases a clean kept memfd ({reply})')
w.go('b')
w.finish()

# The second 4 KiB page of a hugepage: its struct page holds folio fields
# (kernel-hooks/0001 makes memory-failure find its mappers).
w = Workload('scratch-4', 1, ['poison:1', 'read:0', 'close'], keep=True)
w.finish()
check(w.out == [f'sigbus 1 {EXPECT_KEPT}', 'read 0 ok'],
      f'an error in the second page of a hugepage is signalled like any other ({w.out})')

for rid in (name_rule, cg_rule):
    cli('--do', 'rule-del', '--json', f'{{"id": {rid}}}')
check(not any(r['id'] in (name_rule, cg_rule) for r in dump('rule-get')),
      'rule-del removed both rules')
os.rmdir(cg + '/mfr-vmm')
finish()
