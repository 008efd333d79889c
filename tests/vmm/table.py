#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""table.py RESULTS [--update RESULTS.md]: the "guest-visible cost of one
error" part of bench/RESULTS.md from make test-vmm's result lines
("result NAME key=value ...", one per run, and "note NAME: text"
remarks), one row per scenario with its runs summed up, on stdout, or in
place of that part (the last one) of the file named."""
import argparse
import collections
import sys

HEADING = "## P6: guest-visible cost of one error"

INTRO = """\
`make test-vmm` (tests/vmm/): Debian's own `qemu-system-x86_64 -accel kvm`, unmodified (QEMU 10 from bookworm-backports, and Debian 12's QEMU 7.2 beside it), in the patched kernel booted under TCG with `-cpu max` (an AMD vCPU with nested SVM and nested paging); guest RAM a `memory-backend-memfd` with `hugetlb=on`; the guest Debian's own `linux-image-amd64` (Debian 12: 6.1, Debian 13: 6.12) on `-cpu host` (AMD, which QEMU 10 gives SUCCOR, 7.2 does not), running a memory checker (tests/vmm/memcheck.c) over most of its RAM.  One host page backing a checker page, 0x5000 into a 2 MiB frame of guest physical memory, gets an uncorrected error: *cpfn*, hwpoison-inject's `corrupt-pfn`; *mce*, a deferred error from the outer emulator's monitor on that host physical address (`mce 0 1 0x9c00180000000000 0x0 ADDR 0x8c`), which the host kernel's MCE poller finds and hands to memory-failure, as real errors on AMD hosts go.  *Stock*: no rule matches QEMU's memfd (the patched kernel behaves as without the series); *opted in*: mfrd's packaged rule (`name-glob = memory-backend-memfd`, `action = keep`).

Each row sums up its runs: a value with `(k/N)` after it held in k of the N runs.  A row's runs are all of one host kernel (series and config): batches of the same kernel add up, a batch of a new one replaces the row (tests/vmm/merge.py).  *Machine checks in the guest*: the records its kernel logged for the error, by kind (*deferred*: found by the poller, no machine check; *action-required*: a machine check that stopped an access).  *Address given*: the poisoned 4 KiB page (exact) or the start of its hugepage.  *Guest lost*: what the guest kernel offlined (HardwareCorrupted).  *Host lost after exit*: 4 KiB pages of the poisoned hugepage still HWPoison or huge in `/proc/kpageflags` after QEMU exited (neither in the page allocator nor usable in the pool); *hugepages left in use*: pool pages still in use after QEMU exited (stock keeps the poisoned one).  *Host kernel reports*: runs whose host kernel log had a BUG, WARNING, oops or panic."""

TOUCH_INTRO = """\
Scenarios ending in `-touch`: after the error the guest reads the poisoned page on purpose, from user mode (a mapping of that guest physical page, through tests/vmm/gpa-touch) and from its kernel (`copy_mc_to_kernel()` over a fresh mapping), three times each.  Each read must be a stage-2 fault that QEMU turns into `BUS_MCEERR_AR` at that exact address and the guest into a machine check it survives.  *Stage-2 pages*: KVM's counts of its stage-2 entries by size (debugfs `pages_4k`/`pages_2m`/`pages_1g`) just before the error and after the reads; *leaves over the poisoned gfn*: stage-2 leaf entries KVM installed after the error that map the poisoned page (`kvmmmu:kvm_mmu_set_spte`), and huge ones over its aligned 2 MiB."""

PV_INTRO = """\
Scenarios with `-pv`: the guest's steal-time and kvmclock areas (`MSR_KVM_STEAL_TIME`, `MSR_KVM_SYSTEM_TIME_NEW`) are in the page that gets the error; the outer emulator reads that host page (`xp`) twice, seconds apart, before the error and after it: whether KVM still wrote there."""


def share(rows, value):
    """'v' when every run gave v, else 'v1 (k1/N), v2 (k2/N)'."""
    counts = collections.Counter(value(r) for r in rows)
    if len(counts) == 1:
        return next(iter(counts))
    return ", ".join(f"{v} ({k}/{len(rows)})" for v, k in counts.most_common())


def yes_of(rows, value):
    """'k/N' runs for which value(r) holds."""
    return f"{sum(1 for r in rows if value(r))}/{len(rows)}"


def kinds(r):
    """'1 deferred + 6 action-required': the checker's records, of the
    error and of the touches after it; and, when the checker did not
    finish (stuck on pages that kept failing), the machine checks the
    guest kernel printed on its console, if more.  Lines from before
    guest_mce_printed counted the checker's copies of those console lines
    too (twice each while it ran), so they are used only then as well."""
    counts = collections.Counter()
    for field in ("guest_kinds", "touch_kinds"):
        for part in filter(None, r.get(field, "").split("_+_")):
            n, _, kind = part.partition("_")
            counts[kind.replace("_", " ")] += int(n)
    printed = r.get("guest_mce_printed", r.get("guest_mce_console", "0:0"))
    ar, _, ao = printed.partition(":")
    stuck = r["finished"] == "no"
    if stuck:
        counts["action-required"] = max(counts["action-required"], int(ar))
        counts["action-optional"] = max(counts["action-optional"], int(ao or 0))
    text = " + ".join(f"{n} {k}" for k, n in counts.items() if n) or "0"
    if int(ar) >= 20 and stuck:
        text += ", still coming"
    return text


def address(r):
    return " and ".join({"exact-4k": "4 KiB page", "2m-start": "2 MiB start",
                         "1g-start": "1 GiB start", "none": "-"}.get(k, k)
                        for k in r["exact"].split("+"))


def survived(r):
    if r["survived"] == "storm":
        return "no: machine-check storm"
    if r["survived"] == "panic":
        return "no: panic"
    if r["survived"] == "reset":
        return "no: reset itself"
    return r["survived"]


def after_reset(r):
    return {"no": "-", "rebooted": "booted again, checker finished",
            "qemu-exited": "QEMU exited", "no-reboot": "no reboot",
            "bios-zeroed": "no reboot: the punch zeroed SeaBIOS's RAM copy"}.get(r.get("reset", "no"),
                                                                      r.get("reset"))


def guest(r):
    """Debian 13, 6.12.118-1 from d13 and linux-image-...-amd64-6.12.118-1."""
    release = {"d12": "Debian 12", "d13": "Debian 13"}.get(r["name"].split("/")[1], "?")
    version = r.get("guest", "").rpartition("-amd64-")[2]
    return f"{release}, {version}" if version else release


COLUMNS = [
    ("scenario", lambda rs: rs[0]["name"].split("/")[0]),
    ("guest kernel", lambda rs: share(rs, guest)),
    ("QEMU", lambda rs: share(rs, lambda r: r.get("qemu", "?").partition(":")[2] or "?")),
    ("guest CPU", lambda rs: share(rs, lambda r: f"`-cpu {r.get('cpu', '?')}`")),
    ("rule", lambda rs: "opted in" if rs[0]["optin"] == "keep" else "stock"),
    ("runs", lambda rs: str(len(rs))),
    ("machine checks in the guest", lambda rs: share(rs, kinds)),
    ("address given", lambda rs: share(rs, address)),
    ("vMCEs QEMU injected (AO / AR)", lambda rs: share(rs, lambda r: f"{r['qemu_ao']} / {r['qemu_ar']}")),
    ("guest lost", lambda rs: share(rs, lambda r: f"{r['guest_hwcorrupted_kb']} KiB"
                                    if r.get("guest_hwcorrupted_kb") else "-")),
    ("wrong words", lambda rs: str(sum(int(r["wrong"]) for r in rs))),
    ("checker finished", lambda rs: yes_of(rs, lambda r: r["finished"] == "yes")),
    ("guest survived", lambda rs: yes_of(rs, lambda r: r["survived"] == "yes")
     + ("" if all(r["survived"] == "yes" for r in rs)
        else f" ({share([r for r in rs if r['survived'] != 'yes'], survived)})")),
    ("after system_reset", lambda rs: share(rs, after_reset)),
    ("host lost after exit", lambda rs: share(rs, lambda r: f"{r['host_lost_kb']} KiB")),
    ("hugepages left in use", lambda rs: share(rs, lambda r: r.get("pool_held", "?"))),
    ("host kernel reports", lambda rs: str(sum(int(r.get("host_reports", "0")) for r in rs))),
]

TOUCH_COLUMNS = [
    ("scenario", lambda rs: rs[0]["name"]),
    ("runs", lambda rs: str(len(rs))),
    ("reads that took a machine check (user + kernel)",
     lambda rs: share(rs, lambda r: f"{r['touched']} of {2 * int(r['touch_tries'])}"
                      if r.get("touched", "none") != "none" else "reads not made")),
    ("QEMU's BUS_MCEERR_AR at the exact address during the reads",
     lambda rs: share(rs, lambda r: r.get("qemu_ar_touch", r["qemu_ar_exact"]))),
    ("guest's records of the reads", lambda rs: share(rs, lambda r: r.get("touch_kinds", "").replace("_", " ") or "none")),
    ("stage-2 pages 4k / 2m / 1g before the error", lambda rs: share(rs, lambda r: r["stage2_before"].replace(",", " / "))),
    ("after the reads", lambda rs: share(rs, lambda r: r["stage2_after"].replace(",", " / "))),
    ("leaves over the poisoned gfn / huge over its 2 MiB / installed",
     lambda rs: share(rs, lambda r: r.get("spte_over", "?").replace(",", " / "))),
    ("guest survived", lambda rs: yes_of(rs, lambda r: r["survived"] == "yes")),
]

PV_COLUMNS = [
    ("scenario", lambda rs: rs[0]["name"]),
    ("runs", lambda rs: str(len(rs))),
    ("KVM wrote the areas before the error", lambda rs: yes_of(rs, lambda r: r["pv_written_before"] == "yes")),
    ("after the error", lambda rs: yes_of(rs, lambda r: r["pv_written_after"] == "yes")),
    ("host kernel reports", lambda rs: str(sum(int(r.get("host_reports", "0")) for r in rs))),
]


def parse(path):
    rows, notes = [], []
    # newline="\n": a stray "\r" (the guest's serial console ends its lines
    # with one; lines written before guest.sh stripped it) is whitespace
    # inside a line, not the end of it.
    for line in open(path, newline="\n"):
        words = line.split()
        if len(words) >= 2 and words[0] == "note":
            name, text = line.split(None, 2)[1:]
            notes.append([legacy({"name": name.rstrip(":")})["name"] + ":", text])
        if len(words) < 2 or words[0] != "result":
            continue
        row = {"name": words[1]}
        for w in words[2:]:
            k, _, v = w.partition("=")
            row[k] = v.rstrip(",") if k in ("cpu", "guest_addrs") else v
        rows.append(live_locked(legacy(row)))
    return rows, notes


def legacy(row):
    """A line of the first rig (before scenarios named their injection,
    guest and VMM: "keep-2m-pv") in today's terms: hwpoison-inject, the
    Debian 12 guest, QEMU 7.2, whose message is in "qemu" there and the
    machine checks the guest logged in "guest_mces", kind not recorded."""
    if "/" in row["name"]:
        return row
    optin, size, *variants = row["name"].split("-")
    row["name"] = "-".join([optin, size, "cpfn"] + variants) + "/d12/7.2"
    row["said"] = row.pop("qemu", "")
    row["qemu"] = "1:7.2"
    if "guest_kinds" not in row:
        row["guest_kinds"] = f"{row.get('guest_mces', 0)}_kind_not_recorded"
    return row


def live_locked(row):
    """A guest QEMU keeps sending action-required machine checks while its
    checker never finishes is in a storm even if it logs none of them (they
    hit a page of its own kernel); lines from before guest.sh said so are
    read so."""
    if (row.get("survived") == "yes" and row.get("finished") == "no"
            and int(row.get("qemu_ar", 0)) >= 20):
        row["survived"] = "storm"
    return row


def order(name):
    """2 MiB before 1 GiB, guest, QEMU, injection, plain before variants,
    stock before opted in."""
    spec, guest, qemu = (name.split("/") + ["", ""])[:3]
    optin, size, err, *variants = spec.split("-")
    return (size != "2m", qemu != "10", guest, err, variants, optin == "keep")


def table(columns, groups):
    out = ["| " + " | ".join(c for c, _ in columns) + " |", "|" + "---|" * len(columns)]
    for rs in groups:
        out.append("| " + " | ".join(str(f(rs)).replace("|", "/") for _, f in columns) + " |")
    return out


def render(rows, notes):
    by_name = collections.OrderedDict()
    for r in sorted(rows, key=lambda r: order(r["name"])):
        by_name.setdefault(r["name"], []).append(r)
    groups = list(by_name.values())
    out = [HEADING, "", INTRO, ""]
    out += table(COLUMNS, groups)
    touch = [g for g in groups if "stage2_before" in g[0]]
    if touch:
        out += ["", TOUCH_INTRO, ""] + table(TOUCH_COLUMNS, touch)
    pv = [g for g in groups if "pv_written_before" in g[0]]
    if pv:
        out += ["", PV_INTRO, ""] + table(PV_COLUMNS, pv)
    said = [(g[0]["name"], g[0]["said"]) for g in groups if g[0].get("said")]
    if said:
        out += ["", "What QEMU said when the host sent it the SIGBUS (first run):", ""]
        for name, text in said:
            text = text.replace("_", " ").replace("BUS MCEERR A", "BUS_MCEERR_A")
            out.append(f"- {name}: `{text}`")
    if notes:
        out.append("")
        out.extend(f"- {name} {text.strip()}" for name, text in notes)
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--update", metavar="RESULTS_MD")
    a = ap.parse_args()
    rows, notes = parse(a.results)
    if not rows:
        sys.exit(f"table.py: no result lines in {a.results}")
    part = render(rows, notes)
    if not a.update:
        sys.stdout.write(part)
        return
    text = open(a.update).read()
    if HEADING in text:
        text = text[:text.index(HEADING)]
    with open(a.update, "w") as f:
        f.write(text.rstrip("\n") + "\n\n" + part)


main()
