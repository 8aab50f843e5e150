"""Shared bottleneck: all clients of one emulator go through the same queue."""

from __future__ import annotations

import asyncio
import random
import socket

from pccstream.emulator.link import Link
from pccstream.emulator.packet import Packet
from pccstream.emulator.queues import DropTailQueue
from pccstream.emulator.relay import Emulator
from pccstream.emulator.scenario import Scenario
from pccstream.emulator.trace import constant_rate_trace


def _compete(rates_pps: dict[str, float], seconds: float = 20.0) -> dict[str, int]:
    """Flows with seeded Poisson arrivals into one 12 Mbit/s link with a 20-packet drop-tail
    queue; returns packets delivered per flow. (Strictly periodic flows would show drop-tail's
    phase effects instead, which is real behaviour but not what this test is about.)"""
    link = Link("down", constant_rate_trace(12e6), DropTailQueue(max_packets=20))
    rng = random.Random(5)
    events: list[tuple[float, str]] = []
    for name, pps in sorted(rates_pps.items()):
        t = rng.expovariate(pps / 1000.0)
        while t < seconds * 1000:
            events.append((t, name))
            t += rng.expovariate(pps / 1000.0)
    events.sort()
    got = dict.fromkeys(rates_pps, 0)
    for t, name in events:
        link.enqueue(Packet(t, 1500, dest=name), t)
        for p in link.pop_ready(t):
            got[str(p.dest)] += 1
    for p in link.pop_ready(1e12):
        got[str(p.dest)] += 1
    return got


def test_equal_flows_share_equally() -> None:
    got = _compete({"a": 700, "b": 700, "c": 700})  # 3 x 8.4 Mbit/s into 12 Mbit/s
    total = sum(got.values())
    assert abs(total - 12e6 / 12000 * 20) / total < 0.01  # link fully used
    for n in got.values():
        assert abs(n / total - 1 / 3) < 0.02


def test_fifo_shares_follow_offered_load() -> None:
    # Drop-tail FIFO is not fair queueing: each flow gets its share of arrivals.
    got = _compete({"big": 1400, "small": 700})
    share = got["big"] / (got["big"] + got["small"])
    assert abs(share - 2 / 3) < 0.03


class _Echo(asyncio.DatagramProtocol):
    def __init__(self) -> None:
        self.sources: set[tuple[str, int]] = set()
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        self.sources.add(addr)
        assert self.transport is not None
        self.transport.sendto(data, addr)


async def _relay_roundtrip() -> None:
    loop = asyncio.get_running_loop()
    echo = _Echo()
    transport, _ = await loop.create_datagram_endpoint(lambda: echo, local_addr=("127.0.0.1", 0))
    server_port = transport.get_extra_info("sockname")[1]
    sc = Scenario.from_settings(down="50mbit", up="50mbit", delay_ms=2, queue="100pkts")
    emu = Emulator(sc, ("127.0.0.1", 0), ("127.0.0.1", server_port), seed=1)
    port = await emu.start()
    assert port != 0
    clients = []
    try:
        for _ in range(2):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            s.setblocking(False)
            clients.append(s)
        for i, s in enumerate(clients):
            for j in range(5):
                s.sendto(f"client{i}-{j}".encode(), ("127.0.0.1", port))
        received: list[list[bytes]] = [[], []]
        for _ in range(200):  # poll up to ~2 s; no timing assertion
            await asyncio.sleep(0.01)
            for i, s in enumerate(clients):
                while True:
                    try:
                        received[i].append(s.recv(2048))
                    except BlockingIOError:
                        break
            if all(len(r) == 5 for r in received):
                break
        assert received[0] == [f"client0-{j}".encode() for j in range(5)]
        assert received[1] == [f"client1-{j}".encode() for j in range(5)]
        # distinct 5-tuples towards the server, one shared link per direction
        assert len(echo.sources) == 2
        assert emu.up is not None and emu.down is not None
        assert emu.up.arrived == 10 and emu.down.arrived == 10
        st = emu.status()
        assert st["down"].capacity_mbps is not None
        assert abs(st["down"].capacity_mbps - 50) < 0.5
    finally:
        for s in clients:
            s.close()
        await emu.close()
        transport.close()


def test_relay_clients_share_links_and_get_own_upstream_sockets() -> None:
    asyncio.run(_relay_roundtrip())
