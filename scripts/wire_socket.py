#!/usr/bin/env python3
# wire_socket.py DIR ME PEER -- COMMAND...: runs COMMAND (a QEMU) with one end
# of a guest wire as an inherited descriptor, its number in place of
# "@WIRE_FD@" in COMMAND's arguments (QEMU's "-netdev
# dgram,local.type=fd,local.str=@WIRE_FD@"). The end is a UDP socket bound
# to a port of 127.0.0.1 the kernel picks; its number goes to DIR/ME.port,
# and the socket is connected to the port in DIR/PEER.port once the other
# end (another wire_socket.py, with ME and PEER swapped) has written it.
#
# Why the socket is bound here and held until QEMU ends: ports picked ahead
# and bound later (as scripts/vm-pair did up to its 313th commit) could be
# taken by any other program in between, and the guest whose QEMU then
# failed to start left its peer waiting for a wire that never came.
#
# Why not let QEMU open it: a socket's receive buffer defaults to
# net.core.rmem_default (208 KiB), and while a guest under TCG is slow to
# refill its NIC's receive ring QEMU stops reading the socket, so a burst
# from the other guest (upstream's xdp.py sends 1,000 datagrams at once)
# overflowed it and the host dropped frames (the host's Udp RcvbufErrors).
# A 32 MiB buffer, set with SO_RCVBUFFORCE (root) above rmem_max, holds
# over a thousand 9 KiB frames, as a hardware link's buffers would.
#
# WIRE_PEER_WAIT (seconds, default 600): how long to wait for the peer's
# port; past it, this exits 1 saying so, and COMMAND does not run.
import os
import re
import socket
import sys
import time

SO_RCVBUFFORCE = 33
SO_SNDBUFFORCE = 32
BUFFER = 32 << 20
NAME = re.compile(r"^[a-z][a-z0-9_-]*$")


def publish_port(path: str, port: int) -> None:
    """Writes PORT to PATH whole (a reader never sees a partial file)."""
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="ascii") as f:
        f.write(f"{port}\n")
    os.replace(tmp, path)


def await_port(path: str, wait: float) -> int | None:
    """The port in PATH once it exists, or None after WAIT seconds."""
    deadline = time.monotonic() + wait
    while True:
        try:
            with open(path, encoding="ascii") as f:
                return int(f.read())
        except FileNotFoundError:
            pass
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.2)


def main() -> int:
    args = sys.argv[1:]
    if len(args) < 5 or args[3] != "--" or not os.path.isdir(args[0]) or not NAME.match(args[1]) or not NAME.match(args[2]) or args[1] == args[2]:
        print("usage: wire_socket.py DIR ME PEER -- COMMAND...  (DIR a directory; ME and PEER two names)", file=sys.stderr)
        return 2
    rendezvous, me, peer, command = args[0], args[1], args[2], args[4:]
    if not any("@WIRE_FD@" in a for a in command):
        print("wire_socket.py: no @WIRE_FD@ in the command", file=sys.stderr)
        return 2
    wait = float(os.environ.get("WIRE_PEER_WAIT", "600"))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, BUFFER)
        sock.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, BUFFER)
    except PermissionError:
        # Not root: the largest rmem_max allows (a smaller buffer, not an error).
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, BUFFER)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, BUFFER)
    sock.bind(("127.0.0.1", 0))
    local = sock.getsockname()[1]
    publish_port(os.path.join(rendezvous, f"{me}.port"), local)
    remote = await_port(os.path.join(rendezvous, f"{peer}.port"), wait)
    if remote is None:
        print(f"wire_socket.py: {peer}'s end of the wire never opened ({os.path.join(rendezvous, peer + '.port')} absent after {wait:.0f} s)", file=sys.stderr)
        return 1
    sock.connect(("127.0.0.1", remote))
    print(f"wire_socket.py: {me} 127.0.0.1:{local} <-> {peer} 127.0.0.1:{remote}", file=sys.stderr)
    fd = sock.detach()
    os.set_inheritable(fd, True)
    command = [a.replace("@WIRE_FD@", str(fd)) for a in command]
    os.execvp(command[0], command)
    return 127


if __name__ == "__main__":
    sys.exit(main())
