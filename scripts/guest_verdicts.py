#!/usr/bin/env python3
"""Holds a guest boot's test verdicts against tests/guest/tests.manifest.

A guest test prints one line "TEST <name> PASS|FAIL|SKIP..." on the console
(tests/guest/lib.sh; scripts/ktap.py turns KUnit's output into the same).
A guest that dies, a script that exits early or a probe that stops matching
leaves tests without a line; counting only the lines that came would pass
such a run. This reads the boot's lines with the manifest, the boot's name
and the features of the kernel it ran (scripts/kernel-features), and prints
one result a line, tab-separated, for scripts/check and scripts/stress:

    PASS|SKIP|FAIL <tab> name <tab> detail

- a test of this boot (and of GUEST_ONLY, when given) without a verdict
  fails, unless the kernel lacks a feature it needs: then it is a SKIP;
- a test with two verdicts, or a verdict of a test the manifest does not
  list, or lists for other boots, fails;
- a SKIP passes only where the kernel lacks a feature the test needs, and a
  PASS of a test whose feature the kernel lacks fails (a probe is wrong).

`check-manifest REPO` checks the manifest itself against the tree: its
syntax, and that it lists every run_test of tests/guest/test-*.sh and every
KUnit suite of src/, and nothing else.
"""
import argparse
import fnmatch
import glob
import os
import re
import sys

# A boot runs the tests of one or more of these (scripts/check's debug boot:
# "debug" and one of the halves "debug-a" and "debug-b").
BOOTS = {"debug", "debug-a", "debug-b", "ksft", "stress"}
# scripts/kernel-features' names.
FEATURES = {"kunit", "kmemleak", "devmem-tx", "hds-thresh", "rx-buf-len", "zcrx", "lease",
            "napi-config", "bind-rx-page-size", "zcrx-areas"}
VERDICT = re.compile(r"TEST (\S+) (PASS|FAIL|SKIP)(.*)$")


class Entry:
    def __init__(self, name, boots, needs, line):
        self.name, self.boots, self.needs, self.line = name, boots, needs, line
        self.pattern = "*" in name

    def matches(self, test):
        if not self.pattern:
            return test == self.name
        # "kunit/devmemnic_tx/*" also stands for the suite's own line.
        return fnmatch.fnmatchcase(test, self.name) or (
            self.name.endswith("/*") and test == self.name[:-2])


def read_manifest(path):
    """The manifest's entries; raises ValueError on a malformed line."""
    entries = []
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            fields = line.split()
            if len(fields) != 3:
                raise ValueError(f"{path}:{n}: want NAME BOOTS NEEDS, got {line!r}")
            name, boots, needs = fields
            boots = set(boots.split(","))
            needs = set() if needs == "-" else set(needs.split(","))
            if not boots <= BOOTS:
                raise ValueError(f"{path}:{n}: unknown boot {sorted(boots - BOOTS)}")
            if not needs <= FEATURES:
                raise ValueError(f"{path}:{n}: unknown feature {sorted(needs - FEATURES)}")
            if any(e.name == name for e in entries):
                raise ValueError(f"{path}:{n}: {name} listed twice")
            entries.append(Entry(name, boots, needs, n))
    return entries


def shell_glob(pattern):
    """A regex for a bash pattern: *, ?, [...] and extglob's @(a|b)."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("@(", i):
            out.append("(?:")
            i += 2
            continue
        if c in "!+?*" and pattern.startswith("(", i + 1):
            raise ValueError(f"GUEST_ONLY: of extglob only @(...) is understood: {pattern}")
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                out.append(pattern[i:j + 1])
                i = j
        elif c == "|" or c == ")":
            out.append(c)
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


def read_verdicts(logs):
    verdicts = []  # (name, verdict, detail)
    for path in logs:
        with open(path, errors="replace") as f:
            for raw in f:
                m = VERDICT.search(raw.rstrip("\n"))
                if m:
                    name, verdict, rest = m.groups()
                    rest = rest.strip()
                    if rest.startswith(":"):
                        rest = rest[1:].strip()
                    elif rest.startswith("(") and rest.endswith(")"):
                        rest = rest[1:-1]
                    verdicts.append((name, verdict, rest))
    return verdicts


def judge(entries, boot, features, verdicts, only=None):
    """Yields (PASS|SKIP|FAIL, name, detail) for one boot.

    `boot` names the manifest boots it ran, comma-separated ("debug,debug-a").
    """
    boots = set(boot.split(","))
    only_re = shell_glob(only) if only else None
    seen = {e.name: 0 for e in entries}
    for name, verdict, detail in verdicts:
        entry = next((e for e in entries if not e.pattern and e.matches(name)), None) or \
            next((e for e in entries if e.pattern and e.matches(name)), None)
        if entry is None:
            yield "FAIL", name, f"not in tests/guest/tests.manifest ({verdict} {detail})".rstrip()
            continue
        seen[entry.name] += 1
        if not boots & entry.boots:
            yield "FAIL", name, (f"ran in the {boot} boot; the manifest lists it for "
                                 f"{','.join(sorted(entry.boots))} ({verdict} {detail})")
            continue
        if not entry.pattern and seen[entry.name] > 1:
            yield "FAIL", name, f"verdict number {seen[entry.name]} of one test ({verdict} {detail})"
            continue
        lacking = sorted(entry.needs - features)
        if verdict == "FAIL":
            yield "FAIL", name, detail
        elif verdict == "SKIP" and not lacking:
            yield "FAIL", name, (f"skipped ({detail}), but the kernel has "
                                 f"{' '.join(sorted(entry.needs))} (scripts/kernel-features)")
        elif verdict == "SKIP":
            yield "SKIP", name, detail
        elif lacking:
            yield "FAIL", name, (f"passed, but the kernel lacks {' '.join(lacking)} by "
                                 "scripts/kernel-features: a probe is wrong")
        else:
            yield "PASS", name, detail
    for e in entries:
        if not boots & e.boots or seen[e.name]:
            continue
        if only_re and not only_re.match(e.name):
            continue
        lacking = sorted(e.needs - features)
        if lacking:
            yield "SKIP", e.name, f"the kernel lacks {' '.join(lacking)} (no verdict needed)"
        else:
            yield "FAIL", e.name, (f"no verdict: the {boot} boot must run it "
                                   "(tests/guest/tests.manifest)")


def check_manifest(repo):
    """Problems with the manifest, as strings (none: it is right)."""
    path = os.path.join(repo, "tests/guest/tests.manifest")
    try:
        entries = read_manifest(path)
    except ValueError as err:
        return [str(err)]
    problems = []
    scripts = {}
    for script in sorted(glob.glob(os.path.join(repo, "tests/guest/test-*.sh"))):
        with open(script) as f:
            for line in f:
                m = re.match(r"\s*run_test\s+(\S+)", line)
                if m:
                    scripts[m.group(1)] = os.path.basename(script)
    suites = set()
    for src in glob.glob(os.path.join(repo, "src/**/*.rs"), recursive=True):
        with open(src) as f:
            text = f.read()
        suites.update(re.findall(r'(?:kunit|logic)_suite!\(\s*\w+,\s*"(devmemnic_\w+)"', text))
    listed = {e.name for e in entries}
    want = set(scripts) | {f"kunit/{s}/*" for s in suites}
    for name in sorted(want - listed):
        where = scripts.get(name, "a KUnit suite in src/")
        problems.append(f"{name} ({where}) is not in the manifest")
    for name in sorted(listed - want):
        if not name.startswith("guest/"):
            problems.append(f"{name} is in the manifest but no script or suite has it")
    return problems


def boot_list(text):
    """--boot's value, checked: manifest boots, comma-separated."""
    unknown = set(text.split(",")) - BOOTS
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown boot {', '.join(sorted(unknown))}")
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("verdicts")
    v.add_argument("--manifest", required=True)
    v.add_argument("--boot", required=True, type=boot_list,
                   help=f"the boots it ran, comma-separated, of {', '.join(sorted(BOOTS))}")
    v.add_argument("--features", required=True, help="scripts/kernel-features' output")
    v.add_argument("--only", default="", help="GUEST_ONLY, a bash pattern")
    v.add_argument("logs", nargs="+")
    c = sub.add_parser("check-manifest")
    c.add_argument("repo")
    args = ap.parse_args()
    if args.cmd == "check-manifest":
        problems = check_manifest(args.repo)
        for p in problems:
            print(p)
        return 1 if problems else 0
    entries = read_manifest(args.manifest)
    features = set(args.features.split())
    for result, name, detail in judge(entries, args.boot, features,
                                      read_verdicts(args.logs), args.only or None):
        print(result, name, detail.replace("\t", " "), sep="\t")
    return 0


if __name__ == "__main__":
    sys.exit(main())
