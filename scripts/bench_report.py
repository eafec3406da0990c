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
    "devmem-upstream": "(f) devmem, upstream ncdevmem",
}
GIB = 1 << 30


def parse(path):
    runs, info, profile = [], "", {}
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            m = re.search(r"BENCH-INFO (.*)", line)
            if m:
                info = m.group(1)
            m = re.search(r"PROFILE (case=.*)", line)
            if m:
                kv = dict(x.split("=", 1) for x in m.group(1).split())
                profile.setdefault(kv["case"], []).append((kv["fn"], int(kv["hits"]), float(kv["us"])))
                continue
            m = re.search(r"BENCH (case=.*)", line)
            if m:
                runs.append({k: v for k, v in (kv.split("=", 1) for kv in m.group(1).split())})
    return info, runs, profile


def stats(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main():
    log, out_json, machine = sys.argv[1:4]
    info, runs, profile = parse(log)
    if not runs:
        sys.exit("no BENCH lines in " + log)
    cells = {}
    for r in runs:
        if r["rep"] == "profile":
            continue
        key = (r["case"], int(r["flows"]), int(r["mtu"]))
        gib = int(r["bytes"]) / GIB
        c = cells.setdefault(key, {"mibps": [], "rx_cpu_per_gib": [], "guest_cpu_per_gib": []})
        c["mibps"].append(int(r["bytes"]) / (1 << 20) / max(float(r["secs"]), 0.01))
        c["rx_cpu_per_gib"].append((float(r["rx_user"]) + float(r["rx_sys"])) / gib)
        c.setdefault("rx_user_per_gib", []).append(float(r["rx_user"]) / gib)
        c["guest_cpu_per_gib"].append(float(r["guest_cpu"]) / gib)
    order = list(CASES)
    rows = []
    for (case, flows, mtu), c in sorted(cells.items(), key=lambda kv: (kv[0][2], kv[0][1], order.index(kv[0][0]))):
        rows.append({
            "case": case, "flows": flows, "mtu": mtu, "runs": len(c["mibps"]),
            "goodput_mibps": stats(c["mibps"]),
            "rx_cpu_s_per_gib": stats(c["rx_cpu_per_gib"]),
            "rx_user_s_per_gib": stats(c["rx_user_per_gib"]),
            "guest_cpu_s_per_gib": stats(c["guest_cpu_per_gib"]),
        })

    def med(case, flows, mtu, what):
        for r in rows:
            if (r["case"], r["flows"], r["mtu"]) == (case, flows, mtu):
                return r[what]["median"]
        return None

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
            ratio("rx cpu/GiB e/f (target <= 1.0)", "devmem-ncdevmem-rs", "devmem-upstream", "rx_cpu_s_per_gib")
            ratio("goodput b/a (target >= 0.8)", "split-off-copy", "veth")

    print(f"devmemnic bench: {machine}; guest: {info}")
    print("goodput in MiB/s, CPU in seconds per GiB received; median [min-max]")
    head = (f"{'case':34} {'flows':>5} {'mtu':>5} {'goodput':>18} {'receiver cpu/GiB':>20}"
            f" {'(user)':>6} {'guest cpu/GiB':>20}")
    print(head)
    print("-" * len(head))
    for r in rows:
        def cell(s, fmt):
            return f"{s['median']:{fmt}} [{s['min']:{fmt}}-{s['max']:{fmt}}]"
        print(f"{CASES[r['case']]:34} {r['flows']:>5} {r['mtu']:>5} {cell(r['goodput_mibps'], '.0f'):>18}"
              f" {cell(r['rx_cpu_s_per_gib'], '.2f'):>20} {r['rx_user_s_per_gib']['median']:>6.2f}"
              f" {cell(r['guest_cpu_s_per_gib'], '.2f'):>20}")
    print()
    print("ratios of medians:")
    for x in ratios:
        print(f"  mtu {x['mtu']:>5}, {x['flows']} flow(s): {x['ratio']:34} {x['value']:.2f}")
    for case, fns in profile.items():
        print(f"\nkernel functions by own time, {CASES[case]} (1 flow, ftrace function profiler; Rust functions are not traced):")
        for fn, hits, us in sorted(fns, key=lambda x: -x[2])[:20]:
            print(f"  {fn:40} {hits:>10} calls {us / 1000:>10.1f} ms")
    with open(out_json, "w") as f:
        json.dump({"machine": machine, "guest": info, "rows": rows, "ratios": ratios,
                   "profile": profile}, f, indent=1)
    print(f"\nJSON: {out_json}")


if __name__ == "__main__":
    main()
