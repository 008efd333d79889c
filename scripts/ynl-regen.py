#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Generate the mfr netlink code and uAPI header from module/mfr.yaml.

Runs the kernel's own ynl-gen-c.py (from the linux-source tree) and then
makes two adjustments it cannot express in 6.12:
  - SPDX lines: GPL-2.0-only for module code, GPL-2.0 WITH
    Linux-syscall-note for the uAPI header (the spec stays dual-licensed);
  - multicast groups with "flags: [admin-perm]" get
    GENL_MCAST_CAP_SYS_ADMIN (the 6.12 generator drops group flags).

It also writes the userspace tables mfrctl and mfrd use (the model is
ynl-gen-c's "--mode user", whose libynl runtime 6.12 does not ship for
out-of-tree families): daemon/mfr-spec-gen.[ch], the name and wire type
of every attribute, the names of enum values, and each command's name,
attribute set and event kind, so that nothing of the family is typed
twice.

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


USER_SPDX = '// SPDX-License-Identifier: GPL-2.0-or-later'
USER_TYPES = {'u32': 'MFR_ATTR_U32', 'uint': 'MFR_ATTR_UINT',
              'string': 'MFR_ATTR_STRING', 'nest': 'MFR_ATTR_NEST'}


def c_name(name):
    return name.upper().replace('-', '_')


def c_ident(name):
    return name.replace('-', '_')


def userspace_tables(spec):
    """daemon/mfr-spec-gen.h and .c from the spec."""
    prefix = 'MFR_'
    enums = [d for d in spec['definitions'] if d['type'] == 'enum']
    sets = {s['name']: s for s in spec['attribute-sets']}
    # Subsets share their parent's numbering: a nest of one is read
    # with the parent's table.
    root = {n: s.get('subset-of', n) for n, s in sets.items()}
    tables = [n for n, s in sets.items() if 'subset-of' not in s]
    ops = spec['operations']['list']
    by_name = {o['name']: o for o in ops}
    gen = '/* Do not edit directly, auto-generated from module/mfr.yaml */\n'
    gen += '/* by scripts/ynl-regen.py: "make ynl-regen". */\n'

    h = [USER_SPDX, gen, '#ifndef MFR_SPEC_GEN_H', '#define MFR_SPEC_GEN_H', '',
         '#include <linux/mfr.h>', '',
         '/* The attribute sets, indexes of mfr_attr_sets[]. */',
         'enum mfr_set_id {']
    h += [f'\tMFR_SET_{c_name(n)},' for n in tables]
    h += ['\tMFR_SET_COUNT,', '};', '']
    h += ['/* Highest attribute type of any set: parse tables have one more entry. */']
    maxes = [f'MFR_A_{c_name(n)}_MAX' for n in tables]
    expr = maxes[0]
    for m in maxes[1:]:
        expr = f'MFR_SPEC_MAX2({expr}, {m})'
    h += ['#define MFR_SPEC_MAX2(a, b)\t((int)(a) > (int)(b) ? (int)(a) : (int)(b))',
          f'#define MFR_SPEC_MAX_ATTR\t{expr}', '']
    h += [f'extern const struct mfr_enum mfr_{c_ident(e["name"])}_enum;' for e in enums]
    h += ['', '#endif /* MFR_SPEC_GEN_H */', '']

    c = [USER_SPDX, gen, '#include "mfr-spec.h"', '']
    for e in enums:
        ident = c_ident(e['name'])
        c.append(f'static const char *const {ident}_names[] = {{')
        for entry in e['entries']:
            ename = entry if isinstance(entry, str) else entry['name']
            c.append(f'\t[{prefix}{c_name(e["name"])}_{c_name(ename)}] = "{ename}",')
        c += ['};', '',
              f'const struct mfr_enum mfr_{ident}_enum = {{',
              f'\t.names = {ident}_names,',
              f'\t.count = sizeof({ident}_names) / sizeof({ident}_names[0]),',
              '};', '']
    for n in tables:
        c.append(f'static const struct mfr_attr {c_ident(n)}_attrs[] = {{')
        for a in sets[n]['attributes']:
            fields = [f'.name = "{a["name"]}"', f'.type = {USER_TYPES[a["type"]]}']
            if 'enum' in a:
                fields.append(f'.values = &mfr_{c_ident(a["enum"])}_enum')
            if a['type'] == 'nest':
                nested = root[a['nested-attributes']]
                fields.append(f'.nested = &mfr_attr_sets[MFR_SET_{c_name(nested)}]')
            c.append(f'\t[MFR_A_{c_name(n)}_{c_name(a["name"])}] = {{ {", ".join(fields)} }},')
        c += ['};', '']
    c.append('const struct mfr_attr_set mfr_attr_sets[MFR_SET_COUNT] = {')
    for n in tables:
        ident = c_ident(n)
        c.append(f'\t[MFR_SET_{c_name(n)}] = {{ .name = "{n}", .max = MFR_A_{c_name(n)}_MAX, '
                 f'.attrs = {ident}_attrs }},')
    c += ['};', '']
    c.append('const struct mfr_cmd mfr_cmds[MFR_CMD_MAX + 1] = {')
    for o in ops:
        aset = o.get('attribute-set') or by_name[o['notify']]['attribute-set']
        fields = [f'.name = "{o["name"]}"', f'.set = MFR_SET_{c_name(root[aset])}']
        if 'mcgrp' in o:
            fields.append(f'.event = "{o["name"].removesuffix("-ntf")}"')
        c.append(f'\t[MFR_CMD_{c_name(o["name"])}] = {{ {", ".join(fields)} }},')
    c += ['};', '']
    return {'daemon/mfr-spec-gen.h': '\n'.join(h), 'daemon/mfr-spec-gen.c': '\n'.join(c)}


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
    out.update(userspace_tables(spec))
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
