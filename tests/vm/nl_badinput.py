# SPDX-License-Identifier: GPL-2.0-or-later
"""Bad input: every attribute of every write request missing, out of range,
of the wrong type, or naming a file that is not a HugeTLB memfd, gets a
specific errno and an extended-ACK message (or the missing attribute), and
changes nothing."""
import errno
import os
import subprocess
import tempfile

from nltest import Raw, Workload, attr, check, errname, finish, getfd, status, u32, u64

# uAPI numbers (module/include/uapi/linux/mfr.h)
RULE_ADD, RULE_DEL, MEMFD_SET = 2, 3, 6
R_ID, R_GLOB, R_CGID, R_CGPATH, R_UID, R_ACTION, R_BUDGET = 1, 2, 3, 4, 5, 6, 7
M_PID, M_FD, M_POLICY, M_BUDGET = 3, 14, 9, 10
EINVAL, ERANGE, ENOENT, ESRCH, EBADF, EBUSY = (errno.EINVAL, errno.ERANGE, errno.ENOENT,
                                               errno.ESRCH, errno.EBADF, errno.EBUSY)

raw = Raw()
keep = u32(R_ACTION, 1)


def expect(what, cmd, payload, want_errno, want_msg=None, want_miss=None, silent=False):
    e, msg, miss, offs = raw.request(cmd, payload)
    ok = e == want_errno
    if want_msg is not None:
        ok = ok and want_msg in msg
    if want_miss is not None:
        ok = ok and miss == want_miss
    elif not silent:
        # Without a missing-attribute report, a message must say what
        # was wrong.
        ok = ok and bool(msg)
    check(ok, f'{what}: {errname(want_errno)} (got {errname(e)}, "{msg}", miss={miss}, offset={offs})')


gen0 = status()['generation']

# rule-add
expect('rule-add without action', RULE_ADD, attr(R_GLOB, 'x*'), EINVAL, 'action', R_ACTION)
expect('rule-add action out of range', RULE_ADD, u32(R_ACTION, 2), ERANGE)
expect('rule-add action of the wrong type', RULE_ADD, attr(R_ACTION, b'\1\0'), EINVAL)
expect('rule-add action as a u64', RULE_ADD, u64(R_ACTION, 1), EINVAL)
expect('rule-add budget out of range', RULE_ADD, keep + u32(R_BUDGET, 1048577), ERANGE)
expect('rule-add budget with action default', RULE_ADD, u32(R_ACTION, 0) + u32(R_BUDGET, 3),
       EINVAL, 'budget')
expect('rule-add empty name-glob', RULE_ADD, keep + attr(R_GLOB, ''), EINVAL, 'name-glob')
expect('rule-add name-glob too long', RULE_ADD, keep + attr(R_GLOB, 'g' * 300), EINVAL)
expect('rule-add name-glob not terminated', RULE_ADD, keep + attr(R_GLOB, b'abcd'), EINVAL)
expect('rule-add cgroup-id 0', RULE_ADD, keep + u64(R_CGID, 0), ERANGE)
expect('rule-add unknown cgroup-id', RULE_ADD, keep + u64(R_CGID, 1 << 40), ENOENT, 'cgroup-id')
# A path need not exist (matched by name at memfd_create), but it must be
# one: absolute, no empty, "." or ".." name, no "/" at the end.
for bad in ('no-slash', '/a//b', '/a/', '/a/../b', '/./a', ''):
    expect(f'rule-add cgroup-path {bad!r}', RULE_ADD, keep + attr(R_CGPATH, bad), EINVAL,
           'cgroup-path')
expect('rule-add cgroup-id and cgroup-path', RULE_ADD,
       keep + u64(R_CGID, 1) + attr(R_CGPATH, '/'), EINVAL, 'not both')
expect('rule-add uid of the wrong type', RULE_ADD, keep + attr(R_UID, 'root'), EINVAL)
expect('rule-add unknown attribute', RULE_ADD, keep + u32(42, 1), EINVAL)
# The core rejects a truncated attribute stream before any policy: no
# extack message, only the errno.
expect('rule-add truncated attribute', RULE_ADD, keep + b'\x08\x00\x07\x00\x01', EINVAL,
       silent=True)

# rule-del
expect('rule-del without id', RULE_DEL, b'', EINVAL, 'id', R_ID)
expect('rule-del id 0', RULE_DEL, u32(R_ID, 0), ERANGE)
expect('rule-del unknown id', RULE_DEL, u32(R_ID, 987654), ENOENT, 'no such rule')
expect('rule-del id of the wrong type', RULE_DEL, attr(R_ID, b'\1\0'), EINVAL)

# memfd-set: the files it may be pointed at
w = Workload('bad-input', 1, ['ready:@a', 'wait:@b', 'close'])
pid, fd, _ = w.ready('a')
me = os.getpid()
tmpf = tempfile.TemporaryFile()
huge_dir = tempfile.mkdtemp()
subprocess.run(['mount', '-t', 'hugetlbfs', 'none', huge_dir], check=True)
hfile = open(os.path.join(huge_dir, 'file'), 'w+b')
hfile.truncate(2 << 20)
# A HugeTLB memfd whose page was poisoned before any opt-in.
early = Workload('poisoned-early', 1, ['poison:0', 'ready:@p', 'wait:@q', 'close'])
early_pid, early_fd, _ = early.ready('p')
# memfd-set names a memfd by a descriptor of the caller's (pidfd_getfd(2)).
myfd = getfd(pid, fd)
early_myfd = getfd(early_pid, early_fd)

def mset(p, f, policy=1, extra=b''):
    return u32(M_PID, p) + u32(M_FD, f) + u32(M_POLICY, policy) + extra


expect('memfd-set without pid', MEMFD_SET, u32(M_FD, myfd) + u32(M_POLICY, 1), EINVAL, 'pid', M_PID)
expect('memfd-set without fd', MEMFD_SET, u32(M_PID, pid) + u32(M_POLICY, 1), EINVAL, 'fd', M_FD)
expect('memfd-set without policy', MEMFD_SET, u32(M_PID, pid) + u32(M_FD, myfd), EINVAL,
       'policy', M_POLICY)
expect('memfd-set pid 0', MEMFD_SET, mset(0, myfd), ERANGE)
expect('memfd-set pid out of range', MEMFD_SET, mset(5000000, myfd), ERANGE)
expect('memfd-set no such pid', MEMFD_SET, mset(4000000, myfd), ESRCH, 'no such process')
expect('memfd-set fd out of range', MEMFD_SET, mset(pid, 1 << 31), ERANGE)
expect('memfd-set fd not open', MEMFD_SET, mset(pid, 999), EBADF, 'not open')
expect('memfd-set policy out of range', MEMFD_SET, mset(pid, myfd, 7), ERANGE)
expect('memfd-set budget out of range', MEMFD_SET, mset(pid, myfd, 1, u32(M_BUDGET, 1 << 21)),
       ERANGE)
expect('memfd-set budget with policy default', MEMFD_SET, mset(pid, myfd, 0, u32(M_BUDGET, 1)),
       EINVAL, 'budget')
expect('memfd-set on a regular file', MEMFD_SET, mset(me, tmpf.fileno()), EINVAL,
       'not a HugeTLB file')
expect('memfd-set on a socket', MEMFD_SET, mset(me, raw.sock.fileno()), EINVAL,
       'not a HugeTLB file')
expect('memfd-set on a hugetlbfs file that is not a memfd', MEMFD_SET, mset(me, hfile.fileno()),
       EINVAL, 'not a memfd')
expect('memfd-set on a memfd with poisoned pages', MEMFD_SET, mset(early_pid, early_myfd), EBUSY,
       'poisoned')

check(status()['generation'] == gen0,
      f'no rejected request changed any state (generation {gen0} -> {status()["generation"]})')

os.close(myfd)
os.close(early_myfd)
w.go('b')
w.finish()
early.go('q')
early.finish()
hfile.close()
subprocess.run(['umount', huge_dir], check=True)
finish()
