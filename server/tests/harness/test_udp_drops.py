"""Receive-buffer drops are counted on the socket that dropped them and in the namespace."""

from __future__ import annotations

import os
import socket
import sys

import pytest

from pccstream.harness.udp_drops import rcvbuf_errors, socket_drops


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux /proc")
def test_a_socket_nobody_reads_counts_its_drops() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as receiver, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sender:
        receiver.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        receiver.bind(("127.0.0.1", 0))
        drops_before, errors_before = socket_drops(os.getpid()), rcvbuf_errors()
        for _ in range(200):  # far more than a 4 kB buffer holds; nobody reads
            sender.sendto(b"x" * 1000, receiver.getsockname())
        dropped = socket_drops(os.getpid()) - drops_before
        assert dropped > 100
        assert rcvbuf_errors() - errors_before >= dropped


def test_a_process_that_is_gone_has_no_drops() -> None:
    assert socket_drops(2**22 + 12345) == 0
