#!/usr/bin/env python3
"""Tests of scripts/ksft_table.py's parser on guest console excerpts.

make check runs this (host/ksft-table).
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ksft_table  # noqa: E402

STRICT_THEN_BNXT = """\
# selftests: drivers/net/hw: devmem.py
# ok 1 devmem.check_rx
# ok 2 devmem.check_tx # SKIP no tx
ok 1 selftests: drivers/net/hw: devmem.py
DMN-SELFTEST-UNLOAD drivers/net/hw:devmem.py ok
DMN-SELFTEST-PERSONALITY bnxt
# selftests: drivers/net/hw: devmem.py
[   12.000000] a kernel line
# ok 1 devmem.check_rx
# # STDERR: it broke
# not ok 2 devmem.check_tx
not ok 1 selftests: drivers/net/hw: devmem.py # exit=1
DMN-SELFTEST-UNLOAD drivers/net/hw:devmem.py FAIL
DMN-SELFTEST-SETUP drivers/net/hw:iou-zcrx.py FAIL
"""


class ParseTest(unittest.TestCase):
    def test_personality_runs_are_named_apart(self):
        rows, left = ksft_table.parse(STRICT_THEN_BNXT.splitlines(True))
        got = [(r["test"], r["case"], r["result"]) for r in rows]
        self.assertEqual(got, [
            ("drivers/net/hw/devmem.py", "check_rx", "PASS"),
            ("drivers/net/hw/devmem.py", "check_tx", "SKIP"),
            ("drivers/net/hw/devmem.py@bnxt", "check_rx", "PASS"),
            ("drivers/net/hw/devmem.py@bnxt", "check_tx", "FAIL"),
            ("drivers/net/hw/devmem.py@bnxt", "(module unload)", "FAIL"),
            ("drivers/net/hw/iou-zcrx.py@bnxt", "(setup)", "FAIL"),
        ])
        self.assertEqual(rows[3]["reason"], "STDERR: it broke")
        self.assertEqual(left, [])

    def test_a_file_cut_short_is_a_failure(self):
        rows, _ = ksft_table.parse(["DMN-SELFTEST-PERSONALITY gve\n",
                                    "# selftests: drivers/net/hw: devmem.py\n"])
        self.assertEqual([(r["test"], r["result"]) for r in rows],
                         [("drivers/net/hw/devmem.py@gve", "FAIL")])


if __name__ == "__main__":
    unittest.main()
