#!/usr/bin/env python3
"""Tests of scripts/wire_socket.py: two ends meet and carry datagrams both ways; a lone end gives up."""
import os
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
WIRE_SOCKET = os.path.join(HERE, "wire_socket.py")

# Run by each end in place of QEMU: sends its name on the inherited socket
# (send(), as QEMU's dgram netdev does on a descriptor), then prints what
# the other end sent and the socket's receive buffer.
END = """
import socket, sys
s = socket.socket(fileno=int(sys.argv[1]))
s.settimeout(20)
# (Until the other end is bound, the kernel answers with ICMP port
# unreachable, reported on this socket's next call.)
for _ in range(100):
    try:
        s.send(sys.argv[2].encode())
        got = s.recv(64)
        break
    except (ConnectionRefusedError, TimeoutError):
        pass
for _ in range(3):
    try:
        s.send(sys.argv[2].encode())
    except ConnectionRefusedError:
        pass
print(got.decode(), s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))
"""


def end(rendezvous: str, me: str, peer: str, wait: str = "30") -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, WIRE_SOCKET, rendezvous, me, peer, "--", sys.executable, "-c", END, "@WIRE_FD@", me],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "WIRE_PEER_WAIT": wait},
    )


class WireSocketTest(unittest.TestCase):
    def test_two_ends_meet_and_exchange_datagrams(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            a = end(d, "a", "b")
            time.sleep(0.5)  # B starts later, as a guest that builds its image longer does
            b = end(d, "b", "a")
            out_a, err_a = a.communicate(timeout=60)
            out_b, err_b = b.communicate(timeout=60)
            self.assertEqual(a.returncode, 0, err_a)
            self.assertEqual(b.returncode, 0, err_b)
            self.assertEqual(out_a.split()[0], "b")
            self.assertEqual(out_b.split()[0], "a")
            with open(os.path.join(d, "a.port"), encoding="ascii") as f:
                port_a = int(f.read())
            with open(os.path.join(d, "b.port"), encoding="ascii") as f:
                port_b = int(f.read())
            self.assertNotEqual(port_a, port_b)
            self.assertIn(f"a 127.0.0.1:{port_a} <-> b 127.0.0.1:{port_b}", err_a)
            if os.geteuid() == 0:
                # SO_RCVBUFFORCE's 32 MiB (the kernel reports twice what was set).
                self.assertGreaterEqual(int(out_a.split()[1]), 32 << 20)

    def test_lone_end_gives_up_without_running_the_command(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            a = end(d, "a", "b", wait="1")
            out, err = a.communicate(timeout=30)
            self.assertEqual(a.returncode, 1)
            self.assertEqual(out, "")
            self.assertIn("b's end of the wire never opened", err)

    def test_bad_arguments_are_refused(self) -> None:
        with tempfile.TemporaryDirectory() as d:
            for args in ([d, "a", "a", "--", "true", "@WIRE_FD@"], [d + "/absent", "a", "b", "--", "true", "@WIRE_FD@"], [d, "a", "b", "--", "true"]):
                r = subprocess.run([sys.executable, WIRE_SOCKET, *args], capture_output=True, text=True, timeout=30)
                self.assertEqual(r.returncode, 2, args)


if __name__ == "__main__":
    unittest.main()
