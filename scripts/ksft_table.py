#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tabulates upstream selftests' KTAP output from a guest console log.

Reads the console of a `make selftests` guest (tests/selftests/guest.sh runs
each test file through upstream's run_kselftest.sh) and prints one row per
case: test file, case, PASS/SKIP/XFAIL/FAIL and, for a skip or failure, its
reason. A file gets a row of its own when it reported no case, or when it
failed with no failed case to show for it (a crash or timeout after its
cases). A module that did not unload after a file is a failure row too.
Processes a file left running (ended by the guest before the next file) are
listed after the table. Ends with the totals; exits 1 if any case failed or
a started file has no verdict (the guest died under it), else 0.

Usage: ksft_table.py CONSOLE_LOG [--json OUT]
"""
import json
import re
import sys

FILE_START = re.compile(r"^# selftests: (\S+): (\S+)$")
# A case inside a file: run_kselftest.sh prefixes the file's output with "# ".
CASE = re.compile(r"^# (ok|not ok) \d+ (\S+)(?:\s+#\s*(SKIP|XFAIL|TODO|XPASS)\b\s*(.*))?$")
FILE_END = re.compile(r"^(ok|not ok) \d+ selftests: (\S+): (\S+)(?:\s+#\s*(\S+)\s*(.*))?$")
COMMENT = re.compile(r"^# # (.*)$|^# (?!selftests:|ok |not ok |TAP |1\.\.|Totals:)(.*)$")
UNLOAD = re.compile(r"^DMN-SELFTEST-UNLOAD (\S+) (ok|FAIL)$")
SETUP = re.compile(r"^DMN-SELFTEST-SETUP (\S+) FAIL$")
LEFTOVER = re.compile(r"^DMN-SELFTEST-LEFTOVER (\S+) (.*)$")
# Files run again on another devmemnic personality: their tests are named
# "file@personality" from here on.
PERSONALITY = re.compile(r"^DMN-SELFTEST-PERSONALITY (\S+)$")
# What upstream's ksft.py puts before a traceback's lines: "Exception|" for a
# case's, "Defer Exception|" for a cleanup's.
TRACE_PREFIX = re.compile(r"^(?:Defer )?Exception\|")
# Console lines from the kernel ("[  12.345678] ...") are not the test's.
KMSG = re.compile(r"^\[\s*\d+\.\d+\]")


def verdict(ok, directive):
    if directive in ("SKIP", "XFAIL"):
        return directive
    return "PASS" if ok == "ok" else "FAIL"


def parse(lines):
    """Returns the rows and the processes files left running ("file: pid:comm ...")."""
    leftovers = []
    rows, current, cases, failed, last_comment, why = [], None, 0, 0, "", ""
    at = ""
    for raw in lines:
        line = raw.rstrip("\n")
        if KMSG.match(line):
            continue
        m = PERSONALITY.match(line)
        if m:
            at = "@" + m.group(1)
            continue
        m = FILE_START.match(line)
        if m:
            current, cases, failed, last_comment, why = f"{m.group(1)}/{m.group(2)}{at}", 0, 0, "", ""
            continue
        m = CASE.match(line)
        if m and current:
            ok, case, directive, reason = m.groups()
            case = case.split(".", 1)[1] if "." in case else case
            v = verdict(ok, directive)
            if v == "FAIL" and not reason:
                reason = last_comment
            rows.append({"test": current, "case": case, "result": v,
                         "reason": (reason or "").strip()})
            why = last_comment = ""
            cases += 1
            failed += v == "FAIL"
            continue
        m = FILE_END.match(line)
        if m:
            ok, coll, name, directive, reason = m.groups()
            test = f"{coll}/{name}{at}"
            # A file's own row: when it reported no case, or when it failed
            # (or timed out) with no failed case to show for it.
            if cases == 0 or (ok != "ok" and not failed):
                v = verdict(ok, directive)
                if directive == "TIMEOUT":
                    reason = f"timeout {reason}"
                if cases and v == "PASS":
                    v = "FAIL"
                rows.append({"test": test, "case": "(file)", "result": v,
                             "reason": (reason or last_comment).strip()})
            current = None
            continue
        m = UNLOAD.match(line)
        if m and m.group(2) == "FAIL":
            rows.append({"test": m.group(1).replace(":", "/") + at, "case": "(module unload)",
                         "result": "FAIL", "reason": "rmmod devmemnic failed after the test"})
            continue
        m = LEFTOVER.match(line)
        if m:
            leftovers.append(f"{m.group(1).replace(':', '/')}{at}: {m.group(2)}")
            continue
        m = SETUP.match(line)
        if m:
            rows.append({"test": m.group(1).replace(":", "/") + at, "case": "(setup)",
                         "result": "FAIL", "reason": "devmemnic pair setup failed"})
            continue
        m = COMMENT.match(line)
        if m and current:
            text = (m.group(1) or m.group(2) or "").strip()
            text = TRACE_PREFIX.sub("", text).strip()
            # The line that says why: an error output or exception, not a
            # traceback's frames, carets or blank lines.
            if text and not text.startswith(("File ", "^", "Traceback", "~")):
                if not why or "STDERR:" not in why or "STDERR:" in text:
                    why = text
            last_comment = why
    if current:
        rows.append({"test": current, "case": "(file)", "result": "FAIL",
                     "reason": "no verdict: the guest ended inside this test"})
    return rows, leftovers


def main():
    if len(sys.argv) not in (2, 4) or (len(sys.argv) == 4 and sys.argv[2] != "--json"):
        sys.exit(__doc__.split("\n\n")[-1])
    with open(sys.argv[1], errors="replace") as f:
        rows, leftovers = parse(f)
    if not rows:
        print("no selftest results in the console log")
        sys.exit(1)
    wt = max(len(r["test"]) for r in rows)
    wc = max(len(r["case"]) for r in rows)
    print(f"{'test':<{wt}}  {'case':<{wc}}  result  reason")
    for r in rows:
        print(f"{r['test']:<{wt}}  {r['case']:<{wc}}  {r['result']:<6}  {r['reason']}".rstrip())
    for left in leftovers:
        print(f"left running (ended before the next file) by {left}")
    totals = {k: sum(r["result"] == k for r in rows) for k in ("PASS", "SKIP", "XFAIL", "FAIL")}
    print(f"\n{len(rows)} cases: {totals['PASS']} passed, {totals['SKIP']} skipped, "
          f"{totals['XFAIL']} xfail, {totals['FAIL']} failed")
    if len(sys.argv) == 4:
        with open(sys.argv[3], "w") as f:
            json.dump({"rows": rows, "totals": totals}, f, indent=1)
    sys.exit(1 if totals["FAIL"] else 0)


if __name__ == "__main__":
    main()
