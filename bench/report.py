#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Turn the result lines of bench/guest.sh into bench/RESULTS.md.

Each figure is a count, a size or a ratio of two things measured in the
same "make bench" run; repeated timings are given as median and spread
((max - min) / median) over the runs after the first, which warms up.
"""
import argparse
import os
import platform
import re
import statistics
import subprocess
import sys

P2_CONFIGS = [
    ("stock", "without the series"),
    ("hooks", "series, mfr.ko not loaded"),
    ("module", "mfr.ko loaded"),
    ("keep", "mfr.ko loaded, memfd opted in"),
]


def parse(path):
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            fields = line.split()
            row = {}
            for tok in fields:
                if "=" in tok:
                    k, v = tok.split("=", 1)
                    row[k] = v
                else:
                    row["bench"] = tok
            rows.append(row)
    return rows


def size(n):
    n = int(n)
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"


def med_spread(values):
    m = statistics.median(values)
    spread = (max(values) - min(values)) / m * 100 if m else 0.0
    return m, spread


def cmd(*argv):
    try:
        return subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ""


def machine():
    model = re.search(r"^Model name:\s*(.*)$", cmd("lscpu"), re.M)
    qemu = cmd("qemu-system-x86_64", "--version").splitlines()
    return (f"{model.group(1).strip() if model else platform.processor()}, "
            f"{os.cpu_count()} host CPUs; {qemu[0] if qemu else 'QEMU ?'}, TCG")


def p1_section(rows, out):
    out.append("## P1: memory one error costs\n")
    out.append("A memfd of one hugepage, N distinct 4 KiB pages poisoned through "
               "hwpoison-inject.  *Unreachable*: bytes of the live mapping a reader "
               "cannot use: pages that raise SIGBUS plus the poisoned pages "
               "themselves (an injected error leaves the memory readable in a VM; on "
               "hardware reading one is a machine check, which mfr turns into a "
               "SIGBUS for that 4 KiB page: `make test-mce`); every other page read "
               "back what was written, or the row says how many did not.  *Lost*: bytes "
               "neither the hugepage pool nor the page allocator has back after "
               "close (a leaked hugepage, or the pages of a dissolved one still "
               "flagged HWPoison or huge, by /proc/kpageflags).\n")
    out.append("| page | errors | kernel | unreachable while live | of which SIGBUS by the kernel | "
               "lost after close | returned to the allocator | lost per error |")
    out.append("|---|---|---|---|---|---|---|---|")
    names = {("stock", "stock"): "without the series",
             ("mfr", "module"): "mfr, not opted in",
             ("mfr", "keep"): "mfr, opted in"}
    by = {}
    for r in rows:
        if r.get("bench") != "p1":
            continue
        by[(r["size"], int(r["errors"]), r["kernel"], r["config"])] = r
        name = names.get((r["kernel"], r["config"]), r["config"])
        per = int(r["lost"]) // int(r["errors"])
        flag = "" if r.get("wrong_pages", "0") == "0" else f" ({r['wrong_pages']} pages read back wrong)"
        out.append(f"| {r['size']} | {r['errors']} | {name} | {size(r['unreachable'])} | "
                   f"{size(r['sigbus'])} | {size(r['lost'])} | {size(r['returned'])} | "
                   f"{size(per)}{flag} |")
    out.append("")
    ratios = []
    for (sz, e, k, c), r in sorted(by.items()):
        s = by.get((sz, e, "stock", "stock"))
        if k == "mfr" and c == "keep" and s and int(r["lost"]):
            ratios.append(f"{sz} × {e}: {int(s['lost']) // int(r['lost'])}× less lost, "
                          f"{int(s['unreachable']) // max(int(r['unreachable']), 1)}× less unreachable")
    if ratios:
        out.append("Opted in against the kernel without the series: " + "; ".join(ratios) + ".\n")


def p2_section(rows, out):
    out.append("## P2: hook cost on hugetlb's fault and fork paths\n")
    out.append("Rates per second of guest clock (1 ns per guest instruction): in "
               "each boot the median of the runs after the first; over the boots "
               "(several per kernel, the configurations of the series' kernel in "
               "alternating order) the median of those medians, their spread in "
               "brackets; the ratio is to the kernel without the series.  *fault*: map a shared "
               "hugetlb area, write-fault its 8 hugepages, unmap; *fork*: map, "
               "write-fault 2 hugepages, fork, the child exits; *+both*: the two "
               "loops side by side.  One instance of each, then two: the VMs have "
               "one vCPU, because under `-icount` QEMU runs several vCPUs round-robin "
               "in one host thread (there is no parallelism to measure) and a task "
               "sleeping on an idle vCPU sometimes never woke; the second figure is "
               "two loops sharing that vCPU.  The loops run with address-space "
               "randomisation off (`setarch -R`): a fork copies and frees the page "
               "tables of the whole process, and how many there are depends on where "
               "ASLR put its mappings, which moved the fork loop by several per cent "
               "from one process to the next.  On bare metal, run "
               "`p2_hugetlb_faults fault|fork|both $(nproc) SECONDS RUNS` for one per CPU.\n")
    # (workload, instances, config) -> {boot: [rates]}; a boot's state moves
    # the fork loop by a few per cent, so each boot gives one median.
    per_boot = {}
    for r in rows:
        if r.get("bench") != "p2" or r["run"] == "0":
            continue
        per_boot.setdefault((r["workload"], r["instances"], r["config"]), {}) \
            .setdefault(r.get("boot", "0"), []).append(float(r["rate"]))
    data = {k: [statistics.median(v) for _, v in sorted(boots.items())]
            for k, boots in per_boot.items()}
    nboots = max((len(v) for v in data.values()), default=0)
    out.append(f"Boots per kernel: {nboots}.\n")
    keys = sorted({(w, n) for (w, n, _) in data})
    out.append("| workload | instances | " + " | ".join(d for _, d in P2_CONFIGS) + " |")
    out.append("|---|---|" + "---|" * len(P2_CONFIGS))
    worst, worst_at, unresolved = 0.0, "", []
    for w, n in keys:
        base = data.get((w, n, "stock"))
        bm, bsp = med_spread(base) if base else (None, None)
        cells = []
        for c, desc in P2_CONFIGS:
            v = data.get((w, n, c))
            if not v:
                cells.append("–")
                continue
            m, sp = med_spread(v)
            if bm and c != "stock":
                cells.append(f"{m:,.0f} (±{sp:.2f} %) **{m / bm:.4f}**")
                # A ratio says something only where both spreads are
                # well below the 1 % it is held to.
                if max(sp, bsp) < 0.5:
                    if abs(m / bm - 1) >= worst:
                        worst, worst_at = abs(m / bm - 1), f"{w}, {n} instance(s), {desc}"
                else:
                    unresolved.append(f"{w} × {n} ({desc}: ±{sp:.1f} %, without the series ±{bsp:.1f} %)")
            else:
                cells.append(f"{m:,.0f} (±{sp:.2f} %)")
        out.append(f"| {w} | {n} | " + " | ".join(cells) + " |")
    out.append("")
    out.append(f"Largest distance from the kernel without the series among the figures whose "
               f"runs agree within 0.5 %: **{worst * 100:.2f} %** ({worst_at}; "
               f"{'within' if worst <= 0.01 else 'outside'} the 1 % target).\n")

    # The module's own cost, inside one boot: against the same kernel
    # before mfr.ko was loaded.  Free of whatever differs between boots.
    out.append("The module's own cost, measured in each boot against the same kernel "
               "without `mfr.ko` loaded (median over the boots):\n")
    out.append("| workload | instances | mfr.ko loaded | mfr.ko loaded, memfd opted in |")
    out.append("|---|---|---|---|")
    for w, n in keys:
        hooks = per_boot.get((w, n, "hooks"))
        if not hooks:
            continue
        cells = []
        for c in ("module", "keep"):
            v = per_boot.get((w, n, c), {})
            ratios = [statistics.median(v[b]) / statistics.median(hooks[b])
                      for b in sorted(v) if b in hooks]
            cells.append(f"{statistics.median(ratios):.4f}" if ratios else "–")
        out.append(f"| {w} | {n} | " + " | ".join(cells) + " |")
    out.append("")

    # Boot-to-boot: the same loop, the same kernel pair, one and two
    # instances; if the ratio to the kernel without the series moves by
    # more than 1 % between them, what differs between the two boots
    # outweighs what the hooks could add.
    for w in sorted({w for (w, _) in keys}):
        ratios = []
        for n in sorted({n for (ww, n) in keys if ww == w}):
            st, hk = data.get((w, n, "stock")), data.get((w, n, "hooks"))
            if st and hk:
                ratios.append((n, med_spread(hk)[0] / med_spread(st)[0]))
        if len(ratios) > 1 and max(r for _, r in ratios) - min(r for _, r in ratios) > 0.01:
            out.append(f"*{w}*: the series without the module measures "
                       + " and ".join(f"{r:.4f} with {n} instance(s)" for n, r in ratios)
                       + " of the kernel without it.  The hooks are the same code under both "
                       "figures, so a spread this wide, let alone of opposite sign, is the two "
                       "boots differing, not the hooks; the median over several boots per "
                       "kernel is the figure to read.\n")

    if unresolved:
        out.append("Not resolved to 1 % here, because their runs spread more than 0.5 %: "
                   + "; ".join(unresolved) + ".  Two loops sharing one vCPU get "
                   "whatever share of it the scheduler gives each within a window; "
                   "these figures want longer windows or bare metal.\n")


def p3_section(rows, out):
    out.append("## P3: release cost of a kept hugepage\n")
    out.append("A kept memfd of one hugepage with N poisoned 4 KiB pages, unmapped, "
               "timed from close() until the pool shows the release done (N = 0: "
               "back in the free pool; otherwise dissolved, healthy pages freed, "
               "poisoned ones offline).  The reference *healthy dissolve* is the "
               "same size of healthy hugepage going back to the page allocator "
               "(the pool lowered by one), which any N ≥ 1 release also does.  "
               "Guest-clock milliseconds; 1 GiB: one run per count (each dissolves "
               "a 1 GiB page for good), 2 MiB: median and spread of the runs.\n")
    for sz in ("2M", "1G"):
        data = {}
        for r in rows:
            if r.get("bench") == "p3" and r["size"] == sz:
                data.setdefault(r["poisoned"], []).append(float(r["seconds"]) * 1e3)
        if not data:
            continue
        clean = statistics.median(data["0"]) if "0" in data else None
        healthy = statistics.median(data["shrink"]) if "shrink" in data else None
        pts = sorted((int(n), statistics.median(v)) for n, v in data.items()
                     if n not in ("0", "shrink"))
        out.append(f"**{sz} pages**\n")
        out.append("| poisoned pages | close to done (ms) | against a clean close | "
                   "against a healthy dissolve |")
        out.append("|---|---|---|---|")
        order = ["0"] + [str(n) for n, _ in pts] + (["shrink"] if healthy else [])
        for n in order:
            m, sp = med_spread(data[n])
            spread = f" (±{sp:.1f} %)" if len(data[n]) > 1 else ""
            label = "healthy dissolve (reference)" if n == "shrink" else n
            r1 = f"{m / clean:.1f}×" if clean else "–"
            r2 = f"**{m / healthy:.2f}×**" if healthy else "–"
            out.append(f"| {label} | {m:.3f}{spread} | {r1} | {r2} |")
        if len(pts) >= 3:
            xs, ys = zip(*pts)
            mx, my = statistics.mean(xs), statistics.mean(ys)
            sxx = sum((x - mx) ** 2 for x in xs)
            slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
            icpt = my - slope * mx
            ss_tot = sum((y - my) ** 2 for y in ys)
            ss_res = sum((y - (icpt + slope * x)) ** 2 for x, y in zip(xs, ys))
            r2 = 1 - ss_res / ss_tot if ss_tot else 1.0
            out.append(f"\nLeast-squares line over N ≥ 1: {icpt:.3f} ms + {slope * 1e3:.2f} µs "
                       f"per poisoned page, R² = {r2:.4f}.\n")
        else:
            out.append("")


def p4_section(rows, out):
    out.append("## P4: report path under a storm\n")
    out.append("hwpoison-inject poisons distinct 4 KiB pages of memfds that mfrd's rule "
               "opts in, as fast as it goes; mfrd persists each report to SQLite "
               "(WAL, synchronous=FULL, one transaction per batch) and logs it after "
               "the commit, so injection-to-log time bounds injection-to-persisted "
               "from above.  Guest-clock times.\n")
    out.append("| memfds | injected | module records | mfrd logged | persisted | lost | "
               "storm (s) | p50 (ms) | p99 (ms) | max (ms) |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r.get("bench") != "p4":
            continue
        lost = int(r["injected"]) - int(r["persisted"])
        out.append(f"| {r['memfds']} | {r['injected']} | {r['module_records']} | {r['logged']} | "
                   f"{r['persisted']} | **{lost}** | {r['storm_seconds']} | {r['p50_ms']} | "
                   f"{r['p99_ms']} | {r['max_ms']} |")
    out.append("")
    bounded = [r for r in rows if r.get("bench") == "p4bounded"]
    if not bounded:
        return
    out.append("Bounded growth under the same kind of storm: the journal rate limit at "
               "its default (50 entries of a kind per 60 s, the rest summed up) and "
               "the events log kept to `events_max_rows`.  The page records are never "
               "pruned: none may be lost.  *Journal entries*: page lines mfrd logged "
               "during the storm; *suppressed*: entries of every kind the rate limit "
               "left out since mfrd started, the reconcile of the earlier parts' "
               "records at its start included (which also spends the window's 50 "
               "page entries before the storm begins).\n")
    out.append("| errors | module records | persisted | lost | events rows (max) | "
               "events pruned | journal entries | journal suppressed |")
    out.append("|---|---|---|---|---|---|---|---|")
    for r in bounded:
        lost = int(r["errors"]) - int(r["persisted"] or 0)
        out.append(f"| {r['errors']} | {r['module_records']} | {r['persisted']} | **{lost}** | "
                   f"{r['events_rows']} ({r['events_max_rows']}) | {r['events_pruned']} | "
                   f"{r['journal_logged']} | {r['journal_suppressed']} |")
    out.append("")


def p5_section(rows, out):
    out.append("## P5: guest-RAM workload through one error\n")
    out.append("`guest_ram`: 2 threads (on the one vCPU) check and rewrite every 64-bit word of a 64 MiB "
               "memfd of 2 MiB pages; one 4 KiB page is poisoned (MADV_HWPOISON) half "
               "way.  A SIGBUS marks the range it names lost, as a VMM forwards it to "
               "its guest; without mfr the VMM then maps 4 KiB pages over the lost "
               "hugepage.  Throughput in million words per second of guest clock.  "
               "TCG does not model TLB reach, so on these machines the figure is "
               "functional (what survives, what is lost); the benchmark is ready for "
               "bare metal, where 4 KiB pages cost TLB misses.\n")
    out.append("| kernel | before the error | after | after / before | lost | "
               "replaced by 4 KiB pages | words read back wrong |")
    out.append("|---|---|---|---|---|---|---|")
    names = {"stock": "without the series (VMM replaces the hugepage)", "keep": "mfr, opted in"}
    for r in rows:
        if r.get("bench") != "p5":
            continue
        b, a = float(r["before"]), float(r["after"])
        out.append(f"| {names.get(r['config'], r['config'])} | {b:.2f} | {a:.2f} | "
                   f"{a / b:.3f} | {r['lost_kib']} KiB | {r['replaced_kib']} KiB | {r['wrong']} |")
    out.append("")


P7_CONFIGS = [
    ("stock", "without the series"),
    ("hooks", "series, mfr.ko not loaded"),
    ("module", "mfr.ko loaded"),
    ("keep", "opted in, healthy"),
    ("keep-poisoned", "opted in, one 4 KiB poisoned"),
]


def p7_section(rows, out):
    data = {}
    for r in rows:
        if r.get("bench") == "p7" and r["run"] != "0":
            data.setdefault((r["mode"], r["config"]), []).append(float(r["rate"]))
    if not data:
        return
    out.append("## P7: GUP over a kept 1 GiB page\n")
    out.append("One memfd of one 1 GiB hugepage; every operation covers its first "
               "1023 MiB (the last 4 KiB page is the one poisoned, through "
               "hwpoison-inject, in the last column, and `p7_gup` checks first "
               "that the kernel refuses it to the same calls with EFAULT while "
               "the hugepage stays mapped).  *odirect*: an O_DIRECT read of 1 MiB "
               "from `/dev/nullb0` (null_blk moves no data: the read is the pin of "
               "its buffer and the block layer around it), the chunks in turn; "
               "*register*: `io_uring_register_buffers()` of the 1023 MiB as one "
               "buffer (a long-term pin of 261 888 base pages) and its "
               "unregistration.  Operations per second of guest clock, median of "
               "the runs after the first (spread in brackets); the ratio is to the "
               "kernel without the series, where a poisoned hugepage is unmapped "
               "whole, so the last column has no counterpart there and is set "
               "against its healthy figure.\n")
    out.append("| operation | " + " | ".join(d for _, d in P7_CONFIGS) + " |")
    out.append("|---|" + "---|" * len(P7_CONFIGS))
    healthy = []
    for mode in ("odirect", "register"):
        base = data.get((mode, "stock"))
        bm = statistics.median(base) if base else None
        cells = []
        for c, _ in P7_CONFIGS:
            v = data.get((mode, c))
            if not v:
                cells.append("–")
                continue
            m, sp = med_spread(v)
            if bm and c != "stock":
                cells.append(f"{m:,.1f} (±{sp:.2f} %) **{m / bm:.4f}**")
                if c == "keep":
                    healthy.append((mode, m / bm))
            else:
                cells.append(f"{m:,.1f} (±{sp:.2f} %)")
        out.append(f"| {mode} | " + " | ".join(cells) + " |")
    out.append("")
    if healthy:
        worst = min(healthy, key=lambda t: t[1])
        out.append(f"A healthy kept page against the kernel without the series: "
                   + ", ".join(f"{m} {r:.4f}" for m, r in healthy)
                   + f"; the lowest, {worst[1]:.4f} ({worst[0]}), is "
                   f"{'at or above' if worst[1] >= 0.99 else 'below'} the 0.99 target.  "
                   "With a poisoned base page, GUP-fast takes a range that holds "
                   "none of the folio's poisoned pages itself and leaves only a range "
                   "that covers one to the slow path, which hands the healthy base "
                   "pages out in naturally aligned blocks that hold no poisoned one, "
                   "each found by one lockless (RCU) walk of the folio's list of "
                   "poisoned pages.\n")


def p8_section(rows, out):
    data = {r["open"]: r for r in rows if r.get("bench") == "p8"}
    if "0" not in data or len(data) < 2:
        return
    many = max(data, key=int)
    out.append("## P8: a flagged memfd's create and close against the number open\n")
    out.append("The kernel with the series and mfr.ko, as `nobody`: batches of 100 "
               "empty HugeTLB memfds created with `MFD_MF_KEEP_UE_MAPPED` and then "
               "closed, each batch followed by a batch of plain HugeTLB memfds "
               "(which mfr.ko does not track) under the same conditions, with none "
               f"and with {int(many):,} flagged memfds open (`memfd_churn timing`).  "
               "Nanoseconds of guest clock per memfd, median of the rounds; the "
               "ratio is the median of the rounds' flagged / plain.  mfr.ko finds a "
               "memfd's record by a hash lookup and allocates it from an accounted "
               "cache, so the ratio should not grow with the number open (a list "
               "walk once made a close 6 times slower with 10 000 open).\n")
    out.append(f"| operation | none open: flagged / plain | {int(many):,} open: "
               "flagged / plain | growth |")
    out.append("|---|---|---|---|")
    for op in ("create", "close"):
        cells = []
        ratios = []
        for n in ("0", many):
            r = data[n]
            ratio = int(r[f"{op}_ratio"]) / 1000
            ratios.append(ratio)
            cells.append(f"{int(r[f'{op}_ns']):,} / {int(r[f'plain_{op}_ns']):,} "
                         f"**{ratio:.2f}**")
        out.append(f"| {op} | " + " | ".join(cells) + f" | **{ratios[1] / ratios[0]:.2f}** |")
    out.append("")


def p9_section(rows, out):
    data = {}
    counts = {}
    for r in rows:
        if r.get("bench") != "p9":
            continue
        if "pages_4k" in r:
            counts = r
        elif r["run"] != "0":
            data.setdefault((r["config"], r["what"]), []).append(float(r["rate"]))
    if not data:
        return
    out.append("## P9: a kept poisoned page, seen from elsewhere and from its guest\n")
    out.append("The kernel with the series and mfr.ko.  *futex*: `FUTEX_WAKE_OP_PRIVATE` "
               "on an anonymous word, nobody waiting (the in-place update of every "
               "process's futexes); *vcpu*: `KVM_RUN` round trips of a one-vCPU VM "
               "whose guest enabled steal time and leaves at once (each loads the "
               "vCPU and records steal time).  Each alternates windows without and "
               "with a kept poisoned hugepage held by another process; the process "
               "measured maps no kept memfd, so the series asks it one bit "
               "(`MMF_MAPPED_KEEP_UE`); *marked*, last, the measuring process maps "
               "a kept memfd itself, as a protected guest's VMM does, and its updates "
               "go through GUP-fast.  *stage2*: the guest reads a word of each "
               "4 KiB page of a 2 MiB page of its RAM, a kept hugepage with one "
               "poisoned 4 KiB page (skipped) against a healthy one.  Operations per "
               "second of guest clock, median of the runs after the first (spread in "
               "brackets).\n")
    out.append("| benchmark | without | with | ratio |")
    out.append("|---|---|---|---|")
    rows_out = (("futex", "none", "kept-elsewhere", "no kept page / one elsewhere"),
                ("vcpu", "none", "kept-elsewhere", "no kept page / one elsewhere"),
                ("futex", "none", "marked", "unmarked / the process maps a kept memfd"),
                ("vcpu", "none", "marked", "unmarked / the VMM maps a kept memfd"),
                ("stage2", "healthy", "poisoned", "healthy 2 MiB / poisoned, split"))
    for b, a, c, what in rows_out:
        va, vc = data.get((a, b)), data.get((c, b))
        if not va or not vc:
            continue
        ma, sa = med_spread(va)
        mc, sc = med_spread(vc)
        out.append(f"| {b} ({what}) | {ma:,.1f} (±{sa:.2f} %) | {mc:,.1f} (±{sc:.2f} %) "
                   f"| **{mc / ma:.4f}** |")
    out.append("")
    worst = [data.get((c, b)) and data.get(("none", b)) and
             statistics.median(data[(c, b)]) / statistics.median(data[("none", b)])
             for b, c in (("futex", "kept-elsewhere"), ("vcpu", "kept-elsewhere"))]
    worst = [w for w in worst if w]
    if worst:
        out.append(f"A kept poisoned page elsewhere costs the others {min(worst):.4f} at worst, "
                   f"{'at or above' if min(worst) >= 0.99 else 'below'} the 0.99 target.\n")
    if counts:
        out.append(f"KVM's stage-2 pages of the guest after the error, read from debugfs: "
                   f"{counts['pages_4k']} of 4 KiB and {counts['pages_2m']} of 2 MiB: the "
                   "split 2 MiB is 511 4 KiB entries (the poisoned page is never mapped), "
                   "the healthy hugepage and the guest's low 2 MiB stay 2 MiB entries.  "
                   "TCG models no TLB, so the stage2 ratio is what the split costs in "
                   "instructions; on hardware a split 2 MiB costs 511 TLB entries where one "
                   "did, which the upstream proposal measured at -1.2 % of guest "
                   "throughput with 5 % of guest memory split.\n")


def build_name(kdir):
    """FLAVOR-KEY of a kernel build directory (scripts/build-kernel.sh)."""
    d = os.path.dirname(kdir)
    try:
        with open(os.path.join(d, '.built')) as f:
            key = f.read().strip()
    except OSError:
        key = '?'
    return f"{os.path.basename(d)}-{key}"


SECTIONS = {"p1": p1_section, "p2": p2_section, "p3": p3_section, "p4": p4_section,
            "p5": p5_section, "p7": p7_section, "p8": p8_section, "p9": p9_section}


def split_sections(text):
    """RESULTS.md as (header lines, {"P1": lines, ...} in file order)."""
    head, parts, cur = [], {}, None
    for line in text.splitlines():
        m = re.match(r"## (P\d+):", line)
        if m:
            cur = parts.setdefault(m.group(1), [])
        (head if cur is None else cur).append(line)
    return head, parts


def update_parts(a, rows):
    """The previous RESULTS.md with the sections of a --parts run replaced."""
    head, old = split_sections(open(a.previous).read())
    new = {}
    for part in a.parts.split():
        if part not in SECTIONS:
            sys.exit(f"report.py: no part {part} (parts: {' '.join(SECTIONS)})")
        out = []
        SECTIONS[part](rows, out)
        if out:
            new[part.upper()] = out
    note = (f"- {', '.join(sorted(new))} from a run of that part alone: {a.started}, "
            f"{a.minutes} minutes, kernels `{build_name(a.mfr_kdir)}` and "
            f"`{build_name(a.stock_kdir)}`{' (BENCH_QUICK)' if a.quick else ''}; "
            "the other parts from the run above.")
    head = [line for line in head
            if not (line.startswith("- ") and "from a run of that part alone" in line
                    and any(line.startswith(f"- {k}") for k in new))]
    while head and not head[-1].strip():
        head.pop()
    head += [note, ""]
    merged = dict(old)
    merged.update(new)
    # P6 (make test-vmm's, tests/vmm/table.py) stays last.
    keys = sorted(merged, key=lambda k: (k == "P6", int(k[1:])))
    body = []
    for k in keys:
        body += [line for line in merged[k]]
        if body and body[-1].strip():
            body.append("")
    return "\n".join(head + body).rstrip() + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", required=True)
    ap.add_argument("--started", required=True)
    ap.add_argument("--minutes", required=True)
    ap.add_argument("--mfr-kdir", required=True)
    ap.add_argument("--stock-kdir", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--parts", help="only these parts (\"p7\"): their sections replace "
                    "the same ones of --previous, the others are kept")
    ap.add_argument("--previous", help="the RESULTS.md a --parts run updates")
    a = ap.parse_args()
    rows = parse(a.results)
    if a.parts:
        if not a.previous:
            sys.exit("report.py: --parts needs --previous")
        sys.stdout.write(update_parts(a, rows))
        return

    out = ["<!-- SPDX-License-Identifier: GPL-2.0-or-later -->",
           "# mfr benchmark results\n",
           "Written by `make bench` (bench/run.sh); do not edit by hand.\n"]
    if a.quick:
        out.append("**BENCH_QUICK run: the machinery only, the numbers are not worth keeping.**\n")
    out.append(f"- Date: {a.started}; took {a.minutes} minutes.")
    out.append(f"- Machine: {machine()}.")
    out.append("- Kernels: Debian linux-source-6.12 "
               f"{cmd('dpkg-query', '-W', '-f', '${Version}', 'linux-source-6.12').strip()}, "
               "non-debug `kernel-hooks/bench.config`, with the series "
               f"(`{build_name(a.mfr_kdir)}`) and without it "
               f"(`{build_name(a.stock_kdir)}`); each in a VM of "
               "one vCPU under `-icount shift=0,sleep=off` (the guest clock advances "
               "1 ns per guest instruction), side by side.\n")
    for section in (p1_section, p2_section, p3_section, p4_section, p5_section, p7_section,
                    p8_section, p9_section):
        section(rows, out)
    sys.stdout.write("\n".join(out).rstrip() + "\n")


if __name__ == "__main__":
    main()
