#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Generate the mfr netlink code and uAPI header from module/mfr.yaml.

Runs the kernel's own ynl-gen-c.py (from the linux-source tree) and then
makes two adjustments it cannot express in 6.12:
  - SPDX lines: GPL-2.0-only for module code, GPL-2.0 WITH
    Linux-syscall-note for the uAPI header (the spec stays dual-licensed);
  - multicast groups with "flags: [admin-perm]" get
    GENL_MCAST_CAP_SYS_ADMIN (the 6.12 generator drops group flags).

With --check, compare instead of write and fail on any difference.
"""
import argparse
import difflib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
SPEC = ROOT / 'module' / 'mfr.yaml'
OUTPUTS = {
    # output path: (ynl-gen-c mode args, SPDX line)
    'module/include/uapi/linux/mfr.h':
        (['--mode', 'uapi', '--header'],
         '/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */'),
    'module/mfr-nl-gen.h':
        (['--mode', 'kernel', '--header'],
         '/* SPDX-License-Identifier: GPL-2.0-only */'),
    'module/mfr-nl-gen.c':
        (['--mode', 'kernel', '--source'],
         '// SPDX-License-Identifier: GPL-2.0-only'),
}


def admin_groups(spec):
    groups = spec.get('mcast-groups', {}).get('list', [])
    return [g['name'] for g in groups if 'admin-perm' in g.get('flags', [])]


def postprocess(text, spdx, spec):
    lines = text.split('\n')
    if 'SPDX-License-Identifier' not in lines[0]:
        sys.exit('unexpected generator output: no SPDX line first')
    lines[0] = spdx
    text = '\n'.join(lines)
    for name in admin_groups(spec):
        plain = '{ "%s", },' % name
        if plain in text:
            text = text.replace(
                plain,
                '{ .name = "%s", .flags = GENL_MCAST_CAP_SYS_ADMIN, },' % name)
    return text


def generate(ksrc, workdir):
    # ynl-gen-c finds the schema next to the spec's parent directory and
    # names the spec relative to the nearest MAINTAINERS file.
    (workdir / 'module').mkdir()
    (workdir / 'MAINTAINERS').touch()
    shutil.copy(SPEC, workdir / 'module' / 'mfr.yaml')
    shutil.copy(ksrc / 'Documentation/netlink/genetlink.yaml', workdir)
    spec = yaml.safe_load(SPEC.read_text())
    gen = ksrc / 'tools/net/ynl/ynl-gen-c.py'
    out = {}
    for path, (mode, spdx) in OUTPUTS.items():
        target = workdir / os.path.basename(path)
        subprocess.run([sys.executable, str(gen), *mode,
                        '--spec', str(workdir / 'module' / 'mfr.yaml'),
                        '-o', str(target)], check=True)
        out[path] = postprocess(target.read_text(), spdx, spec)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--ksrc', required=True, type=pathlib.Path,
                    help='linux-source tree providing tools/net/ynl')
    ap.add_argument('--check', action='store_true',
                    help='fail if the committed files differ')
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        out = generate(args.ksrc, pathlib.Path(tmp))
    stale = 0
    for path, text in out.items():
        dest = ROOT / path
        old = dest.read_text() if dest.exists() else ''
        if args.check:
            if old != text:
                stale += 1
                sys.stdout.writelines(difflib.unified_diff(
                    old.splitlines(True), text.splitlines(True),
                    'a/' + path, 'b/' + path))
        elif old != text:
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text)
            print('wrote', path)
    if stale:
        sys.exit(f'{stale} generated file(s) out of date: run "make ynl-regen"')


if __name__ == '__main__':
    main()
