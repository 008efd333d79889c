#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Merge a make test-vmm batch into bench/vmm-results.txt.

    merge.py FRESH COMMITTED KERNEL [--replace]

FRESH is the batch's results file, COMMITTED the file P6 is drawn from,
KERNEL the kernel_key of the host kernel the batch ran ("" when it is not
known, e.g. a KDIR given by hand).  Each fresh result line gets
kernel=KERNEL.  A scenario's committed lines of that same kernel stay and
the batch's runs are added after them, numbered on (so that five-run
batches of one kernel add up to the row P6 shows, not the last batch
alone); committed lines of another kernel, or of none, are dropped, so a
row never mixes kernels.  --replace drops them whatever their kernel.
Notes and other scenarios stay as they are.  Writes COMMITTED in place
and prints, per scenario of the batch, how many runs its row now holds.
"""
import re
import sys


def fields(line):
    return dict(w.partition("=")[::2] for w in line.split()[2:])


def main(argv):
    if len(argv) not in (4, 5) or (len(argv) == 5 and argv[4] != "--replace"):
        sys.exit(__doc__.strip().splitlines()[2].strip())
    fresh_path, committed_path, kernel = argv[1:4]
    replace = len(argv) == 5 or not kernel
    fresh = [line.rstrip("\n") for line in open(fresh_path, newline="\n")
             if line.startswith("result ")]
    committed = [line.rstrip("\n") for line in open(committed_path, newline="\n")]
    names = {line.split()[1] for line in fresh}

    kept, runs = [], {}
    for line in committed:
        if line.startswith("result ") and line.split()[1] in names:
            name = line.split()[1]
            f = fields(line)
            if replace or f.get("kernel") != kernel:
                continue
            runs[name] = max(runs.get(name, 0), int(f.get("run", "0") or 0))
        kept.append(line)

    for line in fresh:
        name = line.split()[1]
        runs[name] = runs.get(name, 0) + 1
        line = re.sub(r" kernel=\S*", "", line)
        if re.search(r" run=\d+", line):
            line = re.sub(r" run=\d+", f" run={runs[name]}", line, count=1)
        kept.append(f"{line} kernel={kernel or 'unknown'}")

    with open(committed_path, "w") as out:
        out.write("\n".join(kept) + "\n")
    for name in sorted(names):
        n = sum(1 for line in kept
                if line.startswith("result ") and line.split()[1] == name)
        print(f"# {name}: {n} run{'s' if n != 1 else ''} of this kernel in P6")


if __name__ == "__main__":
    main(sys.argv)
