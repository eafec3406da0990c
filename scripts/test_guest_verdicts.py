#!/usr/bin/env python3
"""Tests of scripts/guest_verdicts.py against the real manifest and tree.

Each case builds a console log of a guest boot, changes one thing (a test
that gave no verdict, a skip on a kernel that has the feature, ...) and
checks the guard's results. make check runs this (host/guest-verdicts).
"""
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import guest_verdicts as gv  # noqa: E402

MANIFEST = os.path.join(REPO, "tests/guest/tests.manifest")
ALL_72 = {"kunit", "kmemleak", "devmem-tx", "hds-thresh", "rx-buf-len", "zcrx", "lease",
          "napi-config"}
ALL_73 = ALL_72 | {"bind-rx-page-size", "zcrx-areas"}
KSFT_612 = {"kunit"}


class GuardTest(unittest.TestCase):
    def setUp(self):
        self.entries = gv.read_manifest(MANIFEST)
        self.tmp = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def names(self, boot):
        """A concrete verdict name for every manifest test of a boot."""
        out = []
        for e in self.entries:
            if boot in e.boots:
                out.append(e.name.replace("*", "case_a") if e.pattern else e.name)
        return out

    def run_guard(self, lines, boot="ksft", features=ALL_73, only=None):
        log = os.path.join(self.tmp, "console.log")
        with open(log, "w") as f:
            # As a console shows them: after a timestamp, among other output.
            f.write("[   12.345678] booting\n")
            for line in lines:
                f.write(f"[   13.000000] {line}\n")
        return list(gv.judge(self.entries, boot, set(features), gv.read_verdicts([log]), only))

    def verdict_of(self, results, name):
        got = [r for r in results if r[1] == name]
        self.assertEqual(len(got), 1, f"{name}: {got}")
        return got[0][0], got[0][2]

    def test_a_boot_of_two_manifest_boots_runs_both_lists(self):
        # make check's debug boot: "debug" and one half; the other half's
        # tests must not run there, and each half's are owed a verdict.
        for half, other in (("debug-a", "debug-b"), ("debug-b", "debug-a")):
            boot = f"debug,{half}"
            want = self.names("debug") + self.names(half)
            self.assertTrue(self.names(half), half)
            results = self.run_guard([f"TEST {n} PASS (1s)" for n in want], boot)
            self.assertEqual([r for r in results if r[0] != "PASS"], [], boot)
            self.assertEqual(len(results), len(want))
            missing = self.run_guard([f"TEST {n} PASS (1s)" for n in want[:-1]], boot)
            self.assertEqual(self.verdict_of(missing, want[-1])[0], "FAIL")
            stray = self.names(other)[0]
            results = self.run_guard([f"TEST {n} PASS (1s)" for n in want + [stray]], boot)
            verdict, detail = self.verdict_of(results, stray)
            self.assertEqual(verdict, "FAIL")
            self.assertIn("lists it for", detail)

    def test_every_test_passing_passes(self):
        for boot in ("debug", "ksft", "stress"):
            results = self.run_guard([f"TEST {n} PASS (1s)" for n in self.names(boot)], boot)
            self.assertEqual([r for r in results if r[0] != "PASS"], [], boot)
            self.assertEqual(len(results), len(self.names(boot)))

    def test_a_removed_test_fails(self):
        names = self.names("ksft")
        gone = "devmem-tx/ncdevmem-rs-to-devmem-rx"
        self.assertIn(gone, names)
        results = self.run_guard([f"TEST {n} PASS" for n in names if n != gone])
        verdict, why = self.verdict_of(results, gone)
        self.assertEqual(verdict, "FAIL")
        self.assertIn("no verdict", why)

    def test_a_lost_kunit_suite_fails(self):
        names = [n for n in self.names("debug") if not n.startswith("kunit/devmemnic_tx/")]
        results = self.run_guard([f"TEST {n} PASS" for n in names], "debug")
        verdict, _ = self.verdict_of(results, "kunit/devmemnic_tx/*")
        self.assertEqual(verdict, "FAIL")

    def test_a_script_that_exits_early_fails_every_test_after(self):
        names = [n for n in self.names("ksft") if not n.startswith("zcrx/")]
        results = self.run_guard([f"TEST {n} PASS" for n in names])
        failed = {r[1] for r in results if r[0] == "FAIL"}
        self.assertEqual(failed, {n for n in self.names("ksft") if n.startswith("zcrx/")})

    def test_skip_where_the_kernel_has_the_feature_fails(self):
        lines = [f"TEST {n} PASS" for n in self.names("ksft") if n != "zcrx/upstream-iou-zcrx"]
        lines.append("TEST zcrx/upstream-iou-zcrx SKIP: the kernel lacks zcrx")
        verdict, why = self.verdict_of(self.run_guard(lines), "zcrx/upstream-iou-zcrx")
        self.assertEqual(verdict, "FAIL")
        self.assertIn("the kernel has zcrx", why)

    def test_skip_where_the_kernel_lacks_the_feature_passes_as_skip(self):
        lines = []
        for e in self.entries:
            if "ksft" not in e.boots or e.pattern:
                continue
            ok = e.needs <= KSFT_612
            lines.append(f"TEST {e.name} {'PASS' if ok else 'SKIP: the kernel lacks it'}")
        results = self.run_guard(lines, features=KSFT_612)
        self.assertEqual([r for r in results if r[0] == "FAIL"], [])
        self.assertEqual(self.verdict_of(results, "devmem-tx/ncdevmem-rs-to-devmem-rx")[0], "SKIP")
        self.assertEqual(self.verdict_of(results, "nic/devices")[0], "PASS")

    def test_no_verdict_where_the_kernel_lacks_the_feature_is_a_skip(self):
        lines = [f"TEST {n} PASS" for n in self.names("debug") if not n.startswith("kunit/")]
        results = self.run_guard(lines, "debug", features=ALL_73 - {"kunit"})
        self.assertEqual(self.verdict_of(results, "kunit/devmemnic_tx/*")[0], "SKIP")

    def test_pass_where_the_kernel_lacks_the_feature_fails(self):
        results = self.run_guard([f"TEST {n} PASS" for n in self.names("ksft")],
                                 features=ALL_73 - {"lease"})
        verdict, why = self.verdict_of(results, "lease/ncdevmem-rs-rx-in-container")
        self.assertEqual(verdict, "FAIL")
        self.assertIn("a probe is wrong", why)

    def test_73_tests_skip_on_72_and_must_run_on_73(self):
        new = "devmem/ncdevmem-rs-16k-buffers"
        names = [n for n in self.names("ksft") if n != new]
        on_72 = self.run_guard([f"TEST {n} PASS" for n in names], features=ALL_72)
        self.assertEqual(self.verdict_of(on_72, new)[0], "SKIP")
        self.assertEqual(self.verdict_of(on_72, "zcrx/ncdevmem-rs-4-areas")[0], "FAIL")
        on_73 = self.run_guard([f"TEST {n} PASS" for n in names])
        verdict, why = self.verdict_of(on_73, new)
        self.assertEqual(verdict, "FAIL")
        self.assertIn("no verdict", why)

    def test_unlisted_duplicate_and_misplaced_verdicts_fail(self):
        names = self.names("ksft")
        lines = [f"TEST {n} PASS" for n in names]
        lines += ["TEST nic/devices PASS", "TEST nic/no-such-test PASS",
                  "TEST hardening/token-abuse PASS"]
        results = self.run_guard(lines)
        bad = {(r[1], r[2].split(" ")[0]) for r in results if r[0] == "FAIL"}
        self.assertEqual(bad, {("nic/devices", "verdict"), ("nic/no-such-test", "not"),
                               ("hardening/token-abuse", "ran")})

    def test_a_failure_stays_a_failure(self):
        lines = [f"TEST {n} PASS" for n in self.names("ksft") if n != "nic/channels"]
        lines.append("TEST nic/channels FAIL: exit 1 after 3s: queues 8 8")
        verdict, why = self.verdict_of(self.run_guard(lines), "nic/channels")
        self.assertEqual((verdict, why), ("FAIL", "exit 1 after 3s: queues 8 8"))

    def test_guest_only_narrows_what_is_expected(self):
        both = "debug,debug-a,debug-b"
        results = self.run_guard(["TEST devmem/token-exhaustion-recovers PASS"], both,
                                 only="devmem/token-exhaustion-re*")
        self.assertEqual(results, [("PASS", "devmem/token-exhaustion-recovers", "")])
        results = self.run_guard([], both, only="@(devmem/token-exhaustion-re*|nic/malformed-*)")
        self.assertEqual(sorted(r[1] for r in results if r[0] == "FAIL"),
                         ["devmem/token-exhaustion-recovers", "nic/malformed-frames-counted",
                          "nic/malformed-frames-counted-gro-hw"])

    def test_the_manifest_matches_the_tree(self):
        self.assertEqual(gv.check_manifest(REPO), [])

    def test_a_run_test_missing_from_the_manifest_is_found(self):
        copy = os.path.join(self.tmp, "repo")
        shutil.copytree(os.path.join(REPO, "tests"), os.path.join(copy, "tests"))
        shutil.copytree(os.path.join(REPO, "src"), os.path.join(copy, "src"))
        script = os.path.join(copy, "tests/guest/test-nic.sh")
        with open(script) as f:
            text = f.read()
        with open(script, "w") as f:
            f.write(text.replace("run_test nic/channels channels\n", "")
                    + "run_test nic/brand-new brand_new\n")
        self.assertEqual(gv.check_manifest(copy), [
            "nic/brand-new (test-nic.sh) is not in the manifest",
            "nic/channels is in the manifest but no script or suite has it"])


if __name__ == "__main__":
    unittest.main(verbosity=1)
