"""Link status publisher: the emulator's true capacity and queue, for dashboards.

`pccstream emulate --status-to HOST:PORT` sends one JSON datagram every 100 ms to a server's
`--link-status-port` (see `shared/PROTOCOL.md`, "Link status datagrams"):

    {"v": 1, "seq": N, "direction": "down", "capacity_bps": 12000000 | null,
     "queue_bytes": B, "queue_packets": P, "base_rtt_ms": 30.0, "loss": 0.0,
     "upstream": [["127.0.0.1", 40123], ...]}

`upstream` lists the local addresses of the emulator's sockets towards the server: the server
sees each as a viewer's QUIC peer address, which is how it finds the sessions behind this
emulator. Capacity and queue are the downlink's (server -> client, the media direction);
`base_rtt_ms` is the sum of both directions' propagation delays.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from typing import Any, Protocol

from pccstream.emulator.link import LinkStatus

STATUS_INTERVAL_S = 0.1


class StatusSource(Protocol):
    def status(self) -> dict[str, LinkStatus]: ...

    def upstream_addresses(self) -> list[tuple[str, int]]: ...


def status_datagram(source: StatusSource, seq: int) -> dict[str, Any] | None:
    """The datagram's content, or None before the emulator has started."""
    links = source.status()
    down = links.get("down")
    if down is None:
        return None
    up = links.get("up")
    capacity = None if down.capacity_mbps is None else round(down.capacity_mbps * 1e6)
    return {
        "v": 1,
        "seq": seq,
        "direction": "down",
        "capacity_bps": capacity,
        "queue_bytes": down.queue_bytes,
        "queue_packets": down.queue_packets,
        "base_rtt_ms": down.delay_ms + (up.delay_ms if up is not None else 0.0),
        "loss": down.loss,
        "upstream": [[host, port] for host, port in source.upstream_addresses()],
    }


class StatusPublisher:
    """Sends `status_datagram` every `interval_s` to `target` on the running loop."""

    def __init__(
        self, source: StatusSource, target: tuple[str, int], interval_s: float = STATUS_INTERVAL_S
    ) -> None:
        self.source = source
        self.target = target
        self.interval_s = interval_s
        self.sent = 0
        self._seq = 0
        self._sock: socket.socket | None = None
        self._handle: asyncio.TimerHandle | None = None

    def start(self) -> None:
        family = socket.AF_INET6 if ":" in self.target[0] else socket.AF_INET
        self._sock = socket.socket(family, socket.SOCK_DGRAM)
        self._sock.setblocking(False)
        self._handle = asyncio.get_running_loop().call_later(self.interval_s, self._tick)

    def _tick(self) -> None:
        if self._sock is None:
            return
        try:
            record = status_datagram(self.source, self._seq)
        except Exception:  # a dashboard feed must never stop the relay
            record = None
        if record is not None:
            self._seq += 1
            with contextlib.suppress(OSError):  # nobody listening: fine, try again later
                self._sock.sendto(json.dumps(record).encode(), self.target)
                self.sent += 1
        self._handle = asyncio.get_running_loop().call_later(self.interval_s, self._tick)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
