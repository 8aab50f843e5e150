"""UDP datagrams the kernel dropped because a socket's receive buffer was full (Linux /proc).

When a viewer times out, these say who stalled: a process that did not read its socket for
long enough has drops on its own sockets (`socket_drops`), while `rcvbuf_errors` counts every
such drop in the network namespace (other processes on the machine included).
"""

from __future__ import annotations

import os
from pathlib import Path

_PROC = Path("/proc")


def rcvbuf_errors() -> int:
    """The namespace's `Udp: RcvbufErrors` (IPv4 and IPv6 together); 0 where /proc lacks it."""
    total = 0
    for name, prefix in (("snmp", "Udp:"), ("snmp6", "Udp6RcvbufErrors")):
        try:
            lines = (_PROC / "net" / name).read_text().splitlines()
        except OSError:
            continue
        if name == "snmp":
            rows = [line.split() for line in lines if line.startswith(prefix)]
            if len(rows) == 2 and "RcvbufErrors" in rows[0]:
                total += int(rows[1][rows[0].index("RcvbufErrors")])
        else:
            total += sum(int(line.split()[1]) for line in lines if line.startswith(prefix))
    return total


def socket_drops(pid: int) -> int:
    """Datagrams dropped so far on the UDP sockets process `pid` has open (0 if it is gone)."""
    inodes = _socket_inodes(pid)
    total = 0
    for name in ("udp", "udp6"):
        try:
            lines = (_PROC / "net" / name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            # sl local rem st tx:rx tr:when retrnsmt uid timeout inode ref pointer drops
            if len(fields) >= 13 and fields[9] in inodes:
                total += int(fields[12])
    return total


def _socket_inodes(pid: int) -> set[str]:
    inodes: set[str] = set()
    fd_dir = _PROC / str(pid) / "fd"
    try:
        fds = os.listdir(fd_dir)
    except OSError:
        return inodes
    for fd in fds:
        try:
            target = os.readlink(fd_dir / fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return inodes
