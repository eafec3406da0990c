#!/usr/bin/env python3
"""Turns the BENCH lines of a make-bench console log into a table and JSON.

Usage: bench_report.py CONSOLE_LOG OUT_JSON MACHINE_DESCRIPTION
"""
import json
import re
import statistics
import sys

CASES = {
    "veth": "(a) veth, copy",
    "split-off-copy": "(b) devmemnic, split off, copy",
    "split-on-copy": "(c) devmemnic, split on, copy",
    "split-on-discard": "(d) devmemnic, MSG_TRUNC discard",
    "devmem-ncdevmem-rs": "(e) devmem, ncdevmem-rs",
    "devmem-16k-ncdevmem-rs": "(e) devmem 16K, ncdevmem-rs",
    "devmem-64k-ncdevmem-rs": "(e) devmem 64K, ncdevmem-rs",
    "devmem-upstream": "(f) devmem, upstream ncdevmem",
    "zcrx-4k-ncdevmem-rs": "(g) zcrx 4K, ncdevmem-rs",
    "zcrx-64k-ncdevmem-rs": "(h) zcrx 64K, ncdevmem-rs",
    "zcrx-4k-upstream": "(g) zcrx 4K, iou-zcrx 2M",
    "zcrx-4k-ncdevmem-rs-v": "(g) zcrx 4K, ncdevmem-rs -v 2M",
    "zcrx-64k-upstream": "(h) zcrx 64K, iou-zcrx 2M",
    "zcrx-64k-ncdevmem-rs-v": "(h) zcrx 64K, ncdevmem-rs -v 2M",
    "tx-devmem": "(i) TX devmem, ncdevmem-rs",
    "tx-send": "(j) TX send",
    "tx-zerocopy": "(k) TX MSG_ZEROCOPY",
}
GIB = 1 << 30
# Where an idle CPU's samples land.
IDLE = {"default_idle", "default_idle_call", "cpu_idle_poll", "pv_native_safe_halt",
        "native_safe_halt", "acpi_safe_halt", "mwait_idle"}


def parse(path):
    runs, info, profile, samples = [], "", {}, {}
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            m = re.search(r"BENCH-INFO (.*)", line)
            if m:
                info = m.group(1)
            m = re.search(r"PROFILE-SAMPLES case=(\S+) (\d+)", line)
            if m:
                samples[m.group(1)] = int(m.group(2))
                continue
            m = re.search(r"PROFILE case=(\S+) pct=(\S+) dso=(\S+) fn=(.*)$", line)
            if m:
                profile.setdefault(m.group(1), []).append((m.group(4), m.group(3), float(m.group(2))))
                continue
            m = re.search(r"BENCH (case=.*)", line)
            if m:
                runs.append({k: v for k, v in (kv.split("=", 1) for kv in m.group(1).split())})
    return info, runs, profile, samples


def stats(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main():
    log, out_json, machine = sys.argv[1:4]
    info, runs, profile, samples = parse(log)
    if not runs:
        sys.exit("no BENCH lines in " + log)
    cells = {}
    for r in runs:
        if r["rep"] == "profile":
            continue
        key = (r["case"], int(r["flows"]), int(r["mtu"]), r.get("module", ""))
        gib = int(r["bytes"]) / GIB
        c = cells.setdefault(key, {"mibps": [], "rx_cpu_per_gib": [], "guest_cpu_per_gib": []})
        c["mibps"].append(int(r["bytes"]) / (1 << 20) / max(float(r["secs"]), 0.01))
        c["rx_cpu_per_gib"].append((float(r["rx_user"]) + float(r["rx_sys"])) / gib)
        c.setdefault("rx_user_per_gib", []).append(float(r["rx_user"]) / gib)
        c["guest_cpu_per_gib"].append(float(r["guest_cpu"]) / gib)
        if int(r.get("frags", "0")) > 0:
            c.setdefault("frags_per_mib", []).append(int(r["frags"]) / (gib * 1024))
        if r.get("tx_user", "-") != "-":
            c.setdefault("tx_cpu_per_gib", []).append((float(r["tx_user"]) + float(r["tx_sys"])) / gib)
    order = list(CASES)
    rows = []
    for (case, flows, mtu, module), c in sorted(
            cells.items(), key=lambda kv: (kv[0][2], kv[0][1], order.index(kv[0][0]), kv[0][3] != "before")):
        rows.append({
            "case": case, "flows": flows, "mtu": mtu, "module": module, "runs": len(c["mibps"]),
            "goodput_mibps": stats(c["mibps"]),
            "rx_cpu_s_per_gib": stats(c["rx_cpu_per_gib"]),
            "rx_user_s_per_gib": stats(c["rx_user_per_gib"]),
            "guest_cpu_s_per_gib": stats(c["guest_cpu_per_gib"]),
            "tx_cpu_s_per_gib": stats(c["tx_cpu_per_gib"]) if c.get("tx_cpu_per_gib") else None,
            "frags_per_mib": stats(c["frags_per_mib"]) if c.get("frags_per_mib") else None,
        })

    def med(case, flows, mtu, what, module=None):
        for r in rows:
            if (r["case"], r["flows"], r["mtu"]) == (case, flows, mtu) and r[what] and \
                    r["module"] in ((module,) if module is not None else ("", "after")):
                return r[what]["median"]
        return None

    # With a baseline (BENCH_BASELINE): each cell after/before, same boot.
    changes = []
    for r in rows:
        if r["module"] != "after":
            continue
        change = {"case": r["case"], "flows": r["flows"], "mtu": r["mtu"]}
        for what in ("goodput_mibps", "rx_cpu_s_per_gib", "tx_cpu_s_per_gib"):
            a = med(r["case"], r["flows"], r["mtu"], what, "after")
            b = med(r["case"], r["flows"], r["mtu"], what, "before")
            change[what] = a / b if a is not None and b else None
        changes.append(change)

    ratios = []
    for mtu in sorted({r["mtu"] for r in rows}):
        for flows in sorted({r["flows"] for r in rows}):
            def ratio(name, a, b, what="goodput_mibps"):
                x, y = med(a, flows, mtu, what), med(b, flows, mtu, what)
                if x is not None and y:
                    ratios.append({"mtu": mtu, "flows": flows, "ratio": name, "value": x / y})
            ratio("goodput e/c (target >= 1.5)", "devmem-ncdevmem-rs", "split-on-copy")
            ratio("rx cpu/GiB e/c (target <= 0.25)", "devmem-ncdevmem-rs", "split-on-copy", "rx_cpu_s_per_gib")
            ratio("goodput e/d (target >= 0.9)", "devmem-ncdevmem-rs", "split-on-discard")
            ratio("goodput e/f (target >= 1.0)", "devmem-ncdevmem-rs", "devmem-upstream")
            ratio("rx cpu/GiB e/d (target <= 1.1)", "devmem-ncdevmem-rs", "split-on-discard", "rx_cpu_s_per_gib")
            for big in ("16k", "64k"):
                ratio(f"goodput e{big}/d (target >= 1.0)", f"devmem-{big}-ncdevmem-rs", "split-on-discard")
                ratio(f"rx cpu/GiB e{big}/d (target <= 1.1)", f"devmem-{big}-ncdevmem-rs", "split-on-discard",
                      "rx_cpu_s_per_gib")
                ratio(f"guest cpu/GiB e{big}/e (target <= 1.0)", f"devmem-{big}-ncdevmem-rs", "devmem-ncdevmem-rs",
                      "guest_cpu_s_per_gib")
            ratio("rx cpu/GiB e/f (target <= 1.0)", "devmem-ncdevmem-rs", "devmem-upstream", "rx_cpu_s_per_gib")
            ratio("goodput b/a (target >= 0.8)", "split-off-copy", "veth")
            ratio("guest cpu/GiB c/a (target <= 1.5)", "split-on-copy", "veth", "guest_cpu_s_per_gib")
            ratio("goodput h/c (target >= 2.0)", "zcrx-64k-ncdevmem-rs", "split-on-copy")
            ratio("rx cpu/GiB h/c (target <= 0.25)", "zcrx-64k-ncdevmem-rs", "split-on-copy", "rx_cpu_s_per_gib")
            ratio("goodput h/d (target >= 0.9)", "zcrx-64k-ncdevmem-rs", "split-on-discard")
            ratio("goodput g/c", "zcrx-4k-ncdevmem-rs", "split-on-copy")
            ratio("goodput rs-v/iou 4K (target >= 1.0)", "zcrx-4k-ncdevmem-rs-v", "zcrx-4k-upstream")
            ratio("goodput rs-v/iou 64K (target >= 1.0)", "zcrx-64k-ncdevmem-rs-v", "zcrx-64k-upstream")
            ratio("tx cpu/GiB i/j (target <= 0.5)", "tx-devmem", "tx-send", "tx_cpu_s_per_gib")
            ratio("tx cpu/GiB k/j", "tx-zerocopy", "tx-send", "tx_cpu_s_per_gib")
            ratio("goodput i/j", "tx-devmem", "tx-send")

    print(f"devmemnic bench: {machine}; guest: {info}")
    print("goodput in MiB/s, CPU in seconds per GiB received; median [min-max]")
    head = (f"{'case':43} {'flows':>5} {'mtu':>5} {'goodput':>18} {'receiver cpu/GiB':>20}"
            f" {'(user)':>6} {'sender cpu/GiB':>20} {'guest cpu/GiB':>20} {'frags/MiB':>9}")
    print(head)
    print("-" * len(head))
    for r in rows:
        def cell(s, fmt):
            return f"{s['median']:{fmt}} [{s['min']:{fmt}}-{s['max']:{fmt}}]"
        label = CASES[r["case"]] + (f" [{r['module']}]" if r["module"] else "")
        frags = f"{r['frags_per_mib']['median']:.0f}" if r["frags_per_mib"] else "-"
        print(f"{label:43} {r['flows']:>5} {r['mtu']:>5} {cell(r['goodput_mibps'], '.0f'):>18}"
              f" {cell(r['rx_cpu_s_per_gib'], '.2f'):>20} {r['rx_user_s_per_gib']['median']:>6.2f}"
              f" {cell(r['tx_cpu_s_per_gib'], '.2f') if r['tx_cpu_s_per_gib'] else '-':>20}"
              f" {cell(r['guest_cpu_s_per_gib'], '.2f'):>20} {frags:>9}")
    if changes:
        print()
        print("after/before (this tree over BENCH_BASELINE, same boot), ratios of medians:")
        for x in changes:
            def fmt(v):
                return f"{v:.2f}" if v is not None else "-"
            print(f"  {CASES[x['case']]:34} {x['flows']} flow(s), mtu {x['mtu']:>5}: goodput {fmt(x['goodput_mibps'])},"
                  f" receiver cpu/GiB {fmt(x['rx_cpu_s_per_gib'])}, sender cpu/GiB {fmt(x['tx_cpu_s_per_gib'])}")
    print()
    print("ratios of medians:")
    for x in ratios:
        print(f"  mtu {x['mtu']:>5}, {x['flows']} flow(s): {x['ratio']:34} {x['value']:.2f}")
    for case, fns in profile.items():
        idle = sum(pct for fn, _, pct in fns if fn in IDLE)
        busy = max(100.0 - idle, 1e-9)
        print(f"\nprofile, {CASES[case]} (1 flow, {samples.get(case, '?')} perf cpu-clock samples of both CPUs"
              f" during the transfer, {idle:.0f}% idle): share of busy samples, own time")
        for fn, dso, pct in [f for f in sorted(fns, key=lambda x: -x[2]) if f[0] not in IDLE][:25]:
            print(f"  {100 * pct / busy:6.2f}%  {dso:18} {fn}")
    with open(out_json, "w") as f:
        json.dump({"machine": machine, "guest": info, "rows": rows, "ratios": ratios, "changes": changes,
                   "profile": profile, "profile_samples": samples}, f, indent=1)
    print(f"\nJSON: {out_json}")


if __name__ == "__main__":
    main()
