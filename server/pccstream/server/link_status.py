"""The link side channel: emulators tell the server the true capacity and queue of their path.

An emulator started with `--status-to HOST:PORT` sends one small JSON datagram every 100 ms
(`pccstream.emulator.status`). This receiver turns each into a `link` telemetry record on
every open session whose QUIC peer address is one of the emulator's upstream socket
addresses: the server sees the emulator's upstream socket as the viewer, so that address is
exactly what identifies "the sessions behind this emulator". Loopback only; no state beyond
the sessions themselves. Format: `shared/PROTOCOL.md` (Link status datagrams).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Callable, Iterable
from typing import Any

from pccstream.server.session import ViewerSession

log = logging.getLogger("pccstream.link_status")

MAX_DATAGRAM = 8192
# A link record repeating the previous one is sent at most this often (saves telemetry bytes;
# the dashboard draws link series as steps, so nothing is lost).
REPEAT_INTERVAL_MS = 1000.0
# Any local process can send to the port: bad datagrams are counted, and logged in one line at
# most this often, so a flood cannot flood the log.
DROP_LOG_INTERVAL_S = 60.0
_LINK_FIELDS = ("capacity_bps", "queue_bytes", "queue_packets", "base_rtt_ms", "loss")


def _address_key(host: str, port: int) -> tuple[str, int]:
    host = host.lower()
    if host.startswith("::ffff:"):
        host = host[7:]
    return (host, port)


def link_record(status: dict[str, Any], t_ms: float) -> dict[str, Any]:
    """The `link` telemetry record for one status datagram, on a session's clock."""
    record: dict[str, Any] = {"type": "link", "t_ms": t_ms}
    for name in _LINK_FIELDS:
        value = status.get(name)
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        record[name] = value if numeric else None  # every field present; null if unknown
    return record


def route(
    status: dict[str, Any],
    sessions: Iterable[ViewerSession],
    last: dict[str, tuple[float, tuple[Any, ...]]] | None = None,
) -> int:
    """Publish `status` to the sessions behind its emulator; returns how many got it.

    With `last` (session unique id -> (t_ms, values) of the last record sent), a record equal to
    the previous one is skipped unless REPEAT_INTERVAL_MS have passed."""
    upstream = status.get("upstream")
    if not isinstance(upstream, list):
        return 0
    wanted: set[tuple[str, int]] = set()
    for item in upstream:
        if isinstance(item, list | tuple) and len(item) >= 2:
            host, port = item[0], item[1]
            if isinstance(host, str) and isinstance(port, int):
                wanted.add(_address_key(host, port))
    count = 0
    for session in sessions:
        if session.closed or session.peer is None:
            continue
        if _address_key(*session.peer) not in wanted:
            continue
        record = link_record(status, session.elapsed_ms())
        if last is not None:
            values = tuple(record.get(name) for name in _LINK_FIELDS)
            previous = last.get(session.unique_id)
            if (
                previous is not None
                and previous[1] == values
                and record["t_ms"] - previous[0] < REPEAT_INTERVAL_MS
            ):
                continue
            last[session.unique_id] = (record["t_ms"], values)
        session.publish(record)
        count += 1
    return count


class LinkStatusProtocol(asyncio.DatagramProtocol):
    """Routes each status datagram to its sessions; bad ones are dropped and counted."""

    def __init__(self, sessions: Callable[[], Iterable[ViewerSession]]) -> None:
        self.sessions = sessions
        self.received = 0
        self.bad = 0
        self.last: dict[str, tuple[float, tuple[Any, ...]]] = {}
        self._drop_logged_at = -math.inf

    def datagram_received(self, data: bytes, addr: tuple[Any, ...]) -> None:
        self.received += 1
        try:
            status = json.loads(data[:MAX_DATAGRAM])
        except (ValueError, RecursionError):  # RecursionError: nested deeper than json's stack
            self._drop(addr, "not JSON")
            return
        if not isinstance(status, dict):
            self._drop(addr, "not a JSON object")
            return
        if len(self.last) > 1024:  # sessions come and go: forget old ones now and then
            self.last.clear()
        try:
            route(status, self.sessions(), self.last)
        except Exception:  # a bad datagram must never reach the server loop
            self._drop(addr, "could not be routed", traceback=True)

    def _drop(self, addr: tuple[Any, ...], reason: str, *, traceback: bool = False) -> None:
        self.bad += 1
        now = time.monotonic()
        if now - self._drop_logged_at >= DROP_LOG_INTERVAL_S:
            self._drop_logged_at = now
            log.warning("link status: %d bad datagram(s) dropped so far; the latest, from %s, %s",
                        self.bad, addr, reason, exc_info=traceback)


class LinkStatusReceiver:
    """A UDP socket on 127.0.0.1 receiving emulator status datagrams."""

    def __init__(self, sessions: Callable[[], Iterable[ViewerSession]]) -> None:
        self._sessions = sessions
        self._transport: asyncio.DatagramTransport | None = None
        self._protocol: LinkStatusProtocol | None = None
        self.port = 0

    async def start(self, port: int, host: str = "127.0.0.1") -> int:
        loop = asyncio.get_running_loop()
        transport, protocol = await loop.create_datagram_endpoint(
            lambda: LinkStatusProtocol(self._sessions), local_addr=(host, port)
        )
        self._transport = transport
        self._protocol = protocol
        self.port = int(transport.get_extra_info("sockname")[1])
        return self.port

    @property
    def received(self) -> int:
        return self._protocol.received if self._protocol is not None else 0

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None
