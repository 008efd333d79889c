# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared pieces of the Python VM tests of the mfr netlink family.

TAP-style checks, the kernel's YNL library and CLI driving module/mfr.yaml,
raw generic netlink requests (for malformed input), and memfd_script
workloads.  Runs as root in the guest; MFR_ROOT and MFR_KSRC are set.
"""
import copy
import ctypes
import errno
import json
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.environ['MFR_ROOT']
KSRC = os.environ['MFR_KSRC']
SPEC = os.environ.get('MFR_SPEC', os.path.join(ROOT, 'module/mfr.yaml'))
SCHEMA = os.path.join(KSRC, 'Documentation/netlink/genetlink.yaml')
HELPERS = os.path.join(ROOT, 'build/helpers')
sys.path.insert(0, os.path.join(KSRC, 'tools/net/ynl'))
from lib import YnlFamily, NlError  # noqa: E402
import yaml  # noqa: E402

_safe_load = yaml.safe_load
_parsed = {}


def _safe_load_once(stream):
    """yaml.safe_load for the YNL library, parsing each spec file once per
    process (with libyaml where there is one): family() builds a family
    for every request, and under TCG each pure-Python parse of the spec
    takes seconds."""
    name = getattr(stream, 'name', None)
    if name is None:
        return _safe_load(stream)
    if name not in _parsed:
        loader = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
        _parsed[name] = yaml.load(stream, Loader=loader)
    return copy.deepcopy(_parsed[name])


yaml.safe_load = _safe_load_once

failures = 0


def check(cond, what):
    global failures
    print(('ok - ' if cond else 'not ok - ') + what, flush=True)
    if not cond:
        failures += 1
    return cond


def finish():
    print(f'{failures} failed checks', flush=True)
    sys.exit(1 if failures else 0)


def family():
    # A fresh socket each time: a subscribed socket cannot make requests.
    # The spec is validated against the schema once, by cli(validate=True).
    return YnlFamily(SPEC, '')


def do(op, attrs=None):
    return family().do(op, attrs or {})


def dump(op, attrs=None):
    return family().dump(op, attrs or {})


def status():
    return do('status-get')


def cli(*args, validate=False, pass_fds=()):
    """The kernel's YNL CLI with the spec; parsed JSON output."""
    schema = ['--schema', SCHEMA] if validate else ['--no-schema']
    out = subprocess.run([sys.executable, os.path.join(KSRC, 'tools/net/ynl/cli.py'),
                          '--spec', SPEC, *schema, '--output-json', *args],
                         check=True, capture_output=True, text=True,
                         pass_fds=pass_fds).stdout
    return json.loads(out) if out.strip() else None


SYS_PIDFD_GETFD = 438
_libc = ctypes.CDLL(None, use_errno=True)


def getfd(pid, fd):
    """Our own descriptor of process pid's fd, taken as mfrctl takes it
    (pidfd_getfd(2), which needs ptrace-attach rights): memfd-set names a
    memfd by a descriptor of the caller's."""
    pidfd = os.pidfd_open(pid)
    try:
        r = _libc.syscall(SYS_PIDFD_GETFD, pidfd, fd, 0)
        if r < 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
        return r
    finally:
        os.close(pidfd)


def errno_of(fn):
    """Run fn; return (0, None) or (errno, extack dict) of its NlError."""
    try:
        fn()
        return 0, None
    except NlError as e:
        return -e.nl_msg.error, e.nl_msg.extack


class Workload:
    """memfd_script holding a named 2 MiB HugeTLB memfd (see its header)."""

    def __init__(self, name, hugepages, steps, keep=False, prefix=()):
        self.dir = tempfile.mkdtemp()
        self.steps = [s.replace('@', self.dir + '/') for s in steps]
        cmd = [*prefix, os.path.join(HELPERS, 'memfd_script')]
        if keep:
            cmd.append('--keep')
        self.proc = subprocess.Popen(cmd + [name, str(hugepages), *self.steps],
                                     stdout=subprocess.PIPE, text=True)
        self.out = []

    def ready(self, tag):
        """Wait for ready:@TAG; returns (pid, fd, inode)."""
        path = os.path.join(self.dir, tag)
        for _ in range(3000):
            if os.path.exists(path):
                return tuple(int(x) for x in open(path).read().split())
            if self.proc.poll() is not None:
                raise RuntimeError(f'memfd_script exited {self.proc.returncode}')
            time.sleep(0.02)
        raise TimeoutError(tag)

    def go(self, tag):
        """Release wait:@TAG."""
        open(os.path.join(self.dir, tag), 'w').close()

    def finish(self):
        out, _ = self.proc.communicate(timeout=300)
        self.out = out.splitlines()
        return self.proc.returncode


def memfds():
    return {m['inode']: m for m in dump('memfd-get')}


def poison():
    return {p['pfn']: p for p in dump('poison-get')}


# --- raw generic netlink, for requests the YNL library would not build ---

NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 1, 4, 0x300
NETLINK_EXT_ACK = 11
NLMSGERR_ATTR_MSG, NLMSGERR_ATTR_OFFS, NLMSGERR_ATTR_MISS_TYPE = 1, 2, 5


def attr(atype, payload):
    if isinstance(payload, str):
        payload = payload.encode() + b'\0'
    hdr = struct.pack('HH', 4 + len(payload), atype)
    return hdr + payload + b'\0' * (-len(payload) % 4)


def u32(atype, v):
    return attr(atype, struct.pack('I', v))


def u64(atype, v):
    return attr(atype, struct.pack('Q', v))


class Raw:
    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
        self.sock.setsockopt(270, NETLINK_EXT_ACK, 1)
        self.sock.bind((0, 0))
        self.seq = 1
        self.family_id = family().nlproto.family_id

    def request(self, cmd, payload=b'', flags=NLM_F_REQUEST | NLM_F_ACK):
        """Returns (errno, extack message, miss type, has offset)."""
        self.seq += 1
        genl = struct.pack('BBH', cmd, 1, 0)
        msg = struct.pack('IHHII', 16 + len(genl) + len(payload), self.family_id,
                          flags, self.seq, 0) + genl + payload
        self.sock.send(msg)
        while True:
            data = self.sock.recv(65536)
            off = 0
            while off < len(data):
                ln, typ, fl, seq, _ = struct.unpack_from('IHHII', data, off)
                if typ == NLMSG_ERROR and seq == self.seq:
                    return self._parse_err(data[off:off + ln], fl)
                if typ == NLMSG_DONE and seq == self.seq:
                    return 0, '', None, False
                off += (ln + 3) & ~3

    @staticmethod
    def _parse_err(msg, flags):
        err, = struct.unpack_from('i', msg, 16)
        inner_len, = struct.unpack_from('I', msg, 20)
        # Capped ACKs (the default) carry only the request's header.
        pos = 20 + (16 if flags & 0x100 else inner_len)
        text, miss, has_offs = '', None, False
        if flags & 0x200:  # NLM_F_ACK_TLVS
            while pos + 4 <= len(msg):
                ln, typ = struct.unpack_from('HH', msg, pos)
                if ln < 4:
                    break
                body = msg[pos + 4:pos + ln]
                if typ == NLMSGERR_ATTR_MSG:
                    text = body.rstrip(b'\0').decode()
                elif typ == NLMSGERR_ATTR_MISS_TYPE:
                    miss, = struct.unpack('I', body)
                elif typ == NLMSGERR_ATTR_OFFS:
                    has_offs = True
                pos += (ln + 3) & ~3
        return -err, text, miss, has_offs


def dump_flags(cmd, between=None, bufsize=4096):
    """Dump @cmd on a raw socket read in small pieces, so that it takes
    several passes; call @between after the first piece.  Returns the
    nlmsg_flags of every message."""
    r = Raw()
    r.seq += 1
    genl = struct.pack('BBH', cmd, 1, 0)
    r.sock.send(struct.pack('IHHII', 20, r.family_id, NLM_F_REQUEST | NLM_F_DUMP,
                            r.seq, 0) + genl)
    flags, first, done = [], True, False
    while not done:
        data = r.sock.recv(bufsize)
        off = 0
        while off < len(data):
            ln, typ, fl, _, _ = struct.unpack_from('IHHII', data, off)
            flags.append(fl)
            done |= typ in (NLMSG_DONE, NLMSG_ERROR)
            off += (ln + 3) & ~3
        if first and between:
            between()
        first = False
    return flags


def errname(e):
    return errno.errorcode.get(e, str(e)) if e else 'OK'
