#!/usr/bin/env python3
# wire_socket.py LOCAL REMOTE -- COMMAND...: runs COMMAND (a QEMU) with the UDP
# socket of a guest wire made here (bound to 127.0.0.1:LOCAL, connected to
# 127.0.0.1:REMOTE) as an inherited descriptor, its number in place of
# "@WIRE_FD@" in COMMAND's arguments (QEMU's "-netdev
# dgram,local.type=fd,local.str=@WIRE_FD@").
#
# Why not let QEMU open it: a socket's receive buffer defaults to
# net.core.rmem_default (208 KiB), and while a guest under TCG is slow to
# refill its NIC's receive ring QEMU stops reading the socket, so a burst
# from the other guest (upstream's xdp.py sends 1,000 datagrams at once)
# overflowed it and the host dropped frames (the host's Udp RcvbufErrors).
# A 32 MiB buffer, set with SO_RCVBUFFORCE (root) above rmem_max, holds
# over a thousand 9 KiB frames, as a hardware link's buffers would.
import os
import socket
import sys

SO_RCVBUFFORCE = 33
SO_SNDBUFFORCE = 32
BUFFER = 32 << 20


def main() -> int:
    args = sys.argv[1:]
    if len(args) < 4 or args[2] != "--" or not args[0].isdigit() or not args[1].isdigit():
        print("usage: wire_socket.py LOCAL-PORT REMOTE-PORT -- COMMAND...", file=sys.stderr)
        return 2
    local, remote, command = int(args[0]), int(args[1]), args[3:]
    if not any("@WIRE_FD@" in a for a in command):
        print("wire_socket.py: no @WIRE_FD@ in the command", file=sys.stderr)
        return 2
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, BUFFER)
        sock.setsockopt(socket.SOL_SOCKET, SO_SNDBUFFORCE, BUFFER)
    except PermissionError:
        # Not root: the largest rmem_max allows (a smaller buffer, not an error).
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, BUFFER)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, BUFFER)
    sock.bind(("127.0.0.1", local))
    sock.connect(("127.0.0.1", remote))
    fd = sock.detach()
    os.set_inheritable(fd, True)
    command = [a.replace("@WIRE_FD@", str(fd)) for a in command]
    os.execvp(command[0], command)
    return 127


if __name__ == "__main__":
    sys.exit(main())
