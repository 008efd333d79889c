#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""table.py RESULTS [--update RESULTS.md]: the "guest-visible cost of one
error" part of bench/RESULTS.md from make test-vmm's result lines
("result NAME key=value ...", and "note NAME: text" remarks), on stdout, or in place of that part (the
last one) of the file named."""
import argparse
import sys

HEADING = "## P6: guest-visible cost of one error"

INTRO = """\
`make test-vmm` (tests/vmm/): Debian's own `qemu-system-x86_64 -accel kvm`, unmodified, in the patched kernel booted under TCG with `-cpu max` (nested SVM with nested paging); guest RAM a `memory-backend-memfd` with `hugetlb=on`; the guest Debian's `linux-image-amd64` running a memory checker (tests/vmm/memcheck.c) over most of its RAM.  One host pfn backing a checker page, 0x5000 into a 2 MiB frame of guest physical memory, gets hwpoison-inject's `corrupt-pfn` (action optional).  *Stock*: no rule matches QEMU's memfd (the patched kernel behaves as without the series); *opted in*: mfrd's rule `name-glob = memory-backend-memfd`, `action = keep`.  *Address exact*: the guest was told the poisoned 4 KiB page (exact) or the start of its 2 MiB page.  *Checker pages lost*: pages of the checker's buffer a SIGBUS took away; *guest HardwareCorrupted*: what the guest kernel offlined.  *Host lost after exit*: 4 KiB pages of the poisoned hugepage still HWPoison or huge in `/proc/kpageflags` after QEMU exited (neither in the page allocator nor usable in the pool); *host HardwareCorrupted*: its growth over the run.  *Survived*: the guest still running, its kernel without a panic, after the checker ended.  Scenarios ending in `-pv` have the guest's steal-time and kvmclock areas (`MSR_KVM_STEAL_TIME`, `MSR_KVM_SYSTEM_TIME_NEW`) in the page that gets the error; those ending in `-reset` get a `system_reset` from QEMU's monitor after the error (*after system_reset*: what came of it).

The guest's vCPU offers no `MCG_SER_P` under this emulation (README, "A KVM guest through one error"), so its kernel grades every machine check "Uncorrected": taken in kernel mode it panics, in user mode the guest goes on without offlining the page.  Whether the guest lives is chance (where the vCPU was when QEMU injected); the comparison is in what the host gives it: how many machine checks, at which address, and what it loses."""

COLUMNS = [
    ("scenario", lambda r: r["name"]),
    ("guest RAM", lambda r: r["size"]),
    ("rule", lambda r: "opted in" if r["optin"] == "keep" else "stock"),
    ("guest vCPU", lambda r: f"`{r['cpu']}`"),
    ("machine checks in the guest", lambda r: f"{r['guest_mces']}+, still coming"
     if int(r["guest_mces"]) >= 20 and r["finished"] == "no" else r["guest_mces"]),
    ("guest physical address given", lambda r: r["guest_addrs"] or "none"),
    ("guest mode at the first machine check", lambda r: r.get("first_mce_in", "?")),
    ("address exact", lambda r: " and ".join(
        {"exact-4k": "4 KiB page", "2m-start": "2 MiB start", "1g-start": "1 GiB start",
         "none": "-"}.get(k, k)
        for k in r["exact"].split("+"))),
    ("vMCEs QEMU injected (AO / AR)", lambda r: f"{r['qemu_ao']} / {r['qemu_ar']}"
     if "qemu_ao" in r else "-"),
    ("SIGBUS in the guest", lambda r: r["sigbus"]),
    ("checker pages lost", lambda r: "-" if r["lost_pages"] == "?" else r["lost_pages"]),
    ("guest HardwareCorrupted", lambda r: f"{r['guest_hwcorrupted_kb']} KiB"
     if r.get("guest_hwcorrupted_kb") else "-"),
    ("wrong words", lambda r: r["wrong"]),
    ("checker finished", lambda r: r["finished"]),
    ("guest survived", lambda r: "no: machine-check storm"
     if r["survived"] == "storm" or (r["survived"] == "yes" and r["finished"] == "no"
                                      and int(r["guest_mces"]) >= 20)
     else "no: panic" if r["survived"] == "panic" else r["survived"]),
    ("after system_reset", lambda r: {"no": "-", "rebooted": "the guest booted again",
                                      "qemu-exited": "QEMU exited",
                                      "no-reboot": "no reboot"}.get(r.get("reset", "no"),
                                                                    r.get("reset"))),
    ("host lost after exit", lambda r: f"{r['host_lost_kb']} KiB"),
    ("host HardwareCorrupted", lambda r: f"{r.get('hardware_corrupted_kb', '?')} KiB"),
    ("hugepages left the pool", lambda r: str(-int(r.get("pool_pages", "0")))),
]


def parse(path):
    rows = []
    for line in open(path):
        words = line.split()
        if len(words) < 2 or words[0] != "result":
            continue
        row = {"name": words[1]}
        for w in words[2:]:
            k, _, v = w.partition("=")
            v = v.rstrip(",")
            row[k] = v if k == "cpu" else v.replace(",", ", ")
        rows.append(row)
    return rows


def order(row):
    """2 MiB before 1 GiB, plain before -pv and -reset, stock before opted in."""
    return (row["size"] != "2M", row["name"].endswith("-pv"), row["name"].endswith("-reset"),
            row["optin"] == "keep")


def render(rows):
    rows = sorted(rows, key=order)
    out = [HEADING, "", INTRO, ""]
    out.append("| " + " | ".join(c for c, _ in COLUMNS) + " |")
    out.append("|" + "---|" * len(COLUMNS))
    for r in rows:
        out.append("| " + " | ".join(str(f(r)) for _, f in COLUMNS) + " |")
    notes = [r for r in rows if r.get("qemu")]
    remarks = [line.split(None, 2)[1:] for line in open(RESULTS_PATH)
               if line.startswith("note ")]
    if notes:
        out.append("")
        out.append("What QEMU said when the host sent it the SIGBUS:")
        out.append("")
        for r in notes:
            said = r["qemu"].replace("_", " ").replace("BUS MCEERR A", "BUS_MCEERR_A")
            out.append(f"- {r['name']}: `{said}`")
    if remarks:
        out.append("")
        out.extend(f"- {name} {text.strip()}" for name, text in remarks)
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--update", metavar="RESULTS_MD")
    a = ap.parse_args()
    global RESULTS_PATH
    RESULTS_PATH = a.results
    rows = parse(a.results)
    if not rows:
        sys.exit(f"table.py: no result lines in {a.results}")
    part = render(rows)
    if not a.update:
        sys.stdout.write(part)
        return
    text = open(a.update).read()
    if HEADING in text:
        text = text[:text.index(HEADING)]
    with open(a.update, "w") as f:
        f.write(text.rstrip("\n") + "\n\n" + part)


main()
