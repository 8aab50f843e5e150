"""An in-memory aioquic client/server pair on a virtual clock, with a one-way bottleneck.

Datagrams from server to client cross a FIFO bottleneck (rate, queue limit, seeded random
loss) and a propagation delay; the reverse path only has the delay. Time advances from
event to event (datagram arrivals and the connections' own timers), as in aioquic's tests.
"""

from __future__ import annotations

import datetime
import heapq
import itertools
import random
from collections.abc import Callable

from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection
from aioquic.quic.events import HandshakeCompleted, StreamDataReceived
from aioquic.quic.logger import QuicLogger
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

CLIENT_ADDR = ("1.2.3.4", 1234)
SERVER_ADDR = ("2.3.4.5", 4433)

_CERT_CACHE: list[tuple[x509.Certificate, ec.EllipticCurvePrivateKey]] = []


def _certificate() -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    if not _CERT_CACHE:
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
        now = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]),
                           critical=False)
            .sign(key, hashes.SHA256())
        )
        _CERT_CACHE.append((cert, key))
    return _CERT_CACHE[0]


class QuicPair:
    def __init__(self, *, rate_mbps: float = 10.0, rtt: float = 0.02, queue_bytes: int = 50_000,
                 loss: float = 0.0, seed: int = 0, qlog: bool = True) -> None:
        cert, key = _certificate()
        self.server_logger = QuicLogger() if qlog else None
        client_conf = QuicConfiguration(is_client=True, alpn_protocols=["test"],
                                        server_name="localhost", verify_mode=0)
        server_conf = QuicConfiguration(is_client=False, alpn_protocols=["test"],
                                        quic_logger=self.server_logger)
        server_conf.certificate = cert
        server_conf.private_key = key
        self.client = QuicConnection(configuration=client_conf)
        self.server = QuicConnection(
            configuration=server_conf,
            original_destination_connection_id=self.client.original_destination_connection_id)
        self.now = 1000.0  # an arbitrary clock origin, like asyncio's loop.time()
        self.rate = rate_mbps * 1e6 / 8
        self.delay = rtt / 2
        self.queue_bytes = queue_bytes
        self.loss = loss
        self.rng = random.Random(seed)
        self._link_free_at = 0.0
        self._events: list[tuple[float, int, str, bytes]] = []
        self._seq = itertools.count()
        self.received = 0
        self.handshake_done = False
        self._server_up = False
        self.client.connect(SERVER_ADDR, now=self.now)

    def _flush(self) -> None:
        for data, _ in self.client.datagrams_to_send(now=self.now):
            heapq.heappush(self._events, (self.now + self.delay, next(self._seq), "s", data))
        # The server has no network path before its first datagram arrives.
        server_out = self.server.datagrams_to_send(now=self.now) if self._server_up else []
        for data, _ in server_out:
            if self.loss and self.rng.random() < self.loss:
                continue
            backlog = max(0.0, self._link_free_at - self.now) * self.rate
            if backlog + len(data) > self.queue_bytes:
                continue  # tail drop
            self._link_free_at = max(self.now, self._link_free_at) + len(data) / self.rate
            heapq.heappush(self._events,
                           (self._link_free_at + self.delay, next(self._seq), "c", data))

    def _drain_client_events(self) -> None:
        while (event := self.client.next_event()) is not None:
            if isinstance(event, StreamDataReceived):
                self.received += len(event.data)
            elif isinstance(event, HandshakeCompleted):
                self.handshake_done = True

    def run(self, *, until: Callable[[], bool], max_time: float = 30.0,
            on_step: Callable[[QuicPair], None] | None = None) -> None:
        deadline = self.now + max_time
        self._flush()
        while not until():
            conns = (self.client, self.server) if self._server_up else (self.client,)
            candidates = [t for t in (c.get_timer() for c in conns) if t is not None]
            if self._events:
                candidates.append(self._events[0][0])
            if not candidates:
                break
            target = min(candidates)
            if target <= self.now:
                # A timer already due (an ACK held back by pacing, as when ack_at == now):
                # a real event loop's clock moves on between callbacks, so ours does too.
                target = self.now + 1e-6
            self.now = target
            if self.now > deadline:
                raise AssertionError("transfer did not finish in time")
            while self._events and self._events[0][0] <= self.now:
                _, _, to, data = heapq.heappop(self._events)
                if to == "s":
                    self.server.receive_datagram(data, CLIENT_ADDR, now=self.now)
                    self._server_up = True
                else:
                    self.client.receive_datagram(data, SERVER_ADDR, now=self.now)
            for conn in (self.client, self.server) if self._server_up else (self.client,):
                timer = conn.get_timer()
                if timer is not None and timer <= self.now:
                    conn.handle_timer(now=self.now)
            self._drain_client_events()
            while self.server.next_event() is not None:
                pass
            if on_step is not None:
                on_step(self)
            self._flush()

    def handshake(self) -> None:
        self.run(until=lambda: self.handshake_done)

    def send_from_server(self, size: int) -> int:
        stream_id = self.server.get_next_available_stream_id(is_unidirectional=True)
        self.server.send_stream_data(stream_id, b"\x00" * size, end_stream=True)
        return stream_id
