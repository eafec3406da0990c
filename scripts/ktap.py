#!/usr/bin/env python3
"""Reads KUnit's KTAP output for devmemnic's suites from a guest console log.

Prints one "TEST kunit/<suite>/<case> PASS|FAIL[: why]" line per case. A case
passes only if every run of it (the module may load many times) said "ok". A
suite that started and never finished (crash, hang) fails; so does a log in
which no devmemnic suite ran at all.
"""
import re
import sys

SUITE_PREFIX = "devmemnic_"
# Console lines look like "[    1.234567]     ok 1 case_name" (printk time on).
STRIP = re.compile(r"^\[\s*\d+\.\d+\]\s?")
SUBTEST = re.compile(r"^\s*# Subtest: (\S+)$")
RESULT = re.compile(r"^(\s*)(ok|not ok) \d+ (\S+)(.*)$")


def main(path):
    results = {}  # (suite, case) -> list of (ok, detail)
    order = []
    suite_runs = {}  # suite -> [started, finished]
    current = None
    with open(path, errors="replace") as f:
        for raw in f:
            line = STRIP.sub("", raw.rstrip("\n"))
            m = SUBTEST.match(line)
            if m and m.group(1).startswith(SUITE_PREFIX):
                current = m.group(1)
                suite_runs.setdefault(current, [0, 0])[0] += 1
                continue
            m = RESULT.match(line)
            if not m or current is None:
                continue
            indent, status, name, rest = m.groups()
            if name == current and not indent.strip() and len(indent) < 4:
                suite_runs[current][1] += 1
                current = None
                continue
            key = (current, name)
            if key not in results:
                results[key] = []
                order.append(key)
            results[key].append((status == "ok", rest.strip()))
    failed = 0
    if not suite_runs:
        print("TEST kunit/any-suite FAIL: no devmemnic KUnit suite ran")
        return 1
    for suite, (started, finished) in suite_runs.items():
        if started != finished:
            print(f"TEST kunit/{suite} FAIL: {started - finished} of {started} runs did not finish")
            failed += 1
    for suite, case in order:
        runs = results[(suite, case)]
        bad = [d for ok, d in runs if not ok]
        if bad or "SKIP" in " ".join(d for _, d in runs):
            print(f"TEST kunit/{suite}/{case} FAIL: {len(bad)} of {len(runs)} runs failed {bad[:1]}")
            failed += 1
        else:
            print(f"TEST kunit/{suite}/{case} PASS ({len(runs)} runs)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
