"""A headless WebTransport client on aioquic: the browser's role, without a browser.

Used by the server's integration tests and by `pccstream bench transfer`. It speaks the same
protocol as the web player (`shared/PROTOCOL.md`).
"""

from __future__ import annotations

import asyncio
import ssl
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import (
    DatagramReceived,
    DataReceived,
    H3Event,
    HeadersReceived,
    WebTransportStreamDataReceived,
)
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.connection import QuicConnection
from aioquic.quic.events import ConnectionTerminated, QuicEvent, StreamReset

from pccstream import aioquic_internals, protocol
from pccstream.protocol import Kind, Request, ResponseHeader


class SessionRefused(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(f"session refused with HTTP {status}: {reason}")
        self.status = status
        self.reason = reason


@dataclass
class Response:
    header: ResponseHeader
    body: bytes
    started: float
    first_byte: float
    finished: float

    @property
    def download_s(self) -> float:
        return self.finished - self.started


@dataclass
class ReceivedGroup:
    """One LIVE_GROUP stream as received: header, chunks with arrival times, how it ended."""

    header: protocol.LiveGroupHeader
    # (first frame in group, frame count, chunk bytes, arrival time.monotonic())
    chunks: list[tuple[int, int, bytes, float]] = field(default_factory=list)
    ended: bool = False  # FIN received
    reset: bool = False  # the server reset the stream (superseded)
    reset_code: int | None = None

    @property
    def frames(self) -> int:
        return sum(c[1] for c in self.chunks)


@dataclass
class _Pending:
    future: asyncio.Future[Response]
    started: float
    buffer: bytearray = field(default_factory=bytearray)
    first_byte: float | None = None


class _ClientProtocol(QuicConnectionProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.http = H3Connection(self._quic, enable_webtransport=True)
        self.session_id: int | None = None
        self.session_ready: asyncio.Future[None] = self._loop.create_future()
        self.telemetry: list[dict[str, Any]] = []
        self.response_bytes_received = 0  # every byte of every response, as it arrives
        self.largest_datagram_received = 0  # UDP payload bytes, to see the server's size
        self.datagram_bytes_received = 0  # UDP payload bytes of every datagram, headers and all
        self._refusal: tuple[int, bytearray] | None = None
        self._pending: dict[int, _Pending] = {}
        self._uni_buffers: dict[int, bytearray] = {}
        self._inflaters: dict[int, Any] = {}  # zlib decompressobj per TELEMETRY_DEFLATE stream
        self.groups: dict[int, ReceivedGroup] = {}  # by stream id
        self._group_buffers: dict[int, bytearray] = {}
        # WebTransport datagrams of the session (payloads, in arrival order).
        self.datagrams: asyncio.Queue[bytes] = asyncio.Queue()

    @property
    def connection(self) -> QuicConnection:
        return self._quic

    def datagram_received(self, data: bytes | str, addr: Any) -> None:
        self.largest_datagram_received = max(self.largest_datagram_received, len(data))
        self.datagram_bytes_received += len(data)
        super().datagram_received(data, addr)

    def open_session(self, authority: str, path: str) -> None:
        self.session_id = self._quic.get_next_available_stream_id()
        self.http.send_headers(
            self.session_id,
            [
                (b":method", b"CONNECT"),
                (b":scheme", b"https"),
                (b":authority", authority.encode()),
                (b":path", path.encode()),
                (b":protocol", b"webtransport"),
                (b"sec-webtransport-http3-draft02", b"1"),
            ],
        )
        self.transmit()

    def request(self, payload: bytes) -> asyncio.Future[Response]:
        assert self.session_id is not None
        stream_id = self.http.create_webtransport_stream(self.session_id)
        aioquic_internals.register_webtransport_stream(self.http, stream_id, self.session_id)
        future: asyncio.Future[Response] = self._loop.create_future()
        self._pending[stream_id] = _Pending(future, time.monotonic())
        self._quic.send_stream_data(stream_id, payload, end_stream=True)
        self.transmit()
        return future

    def send_datagram(self, payload: bytes) -> None:
        assert self.session_id is not None
        self.http.send_datagram(self.session_id, payload)
        self.transmit()

    def quic_event_received(self, event: QuicEvent) -> None:
        if isinstance(event, ConnectionTerminated):
            error = ConnectionError(f"connection closed: {event.reason_phrase or event.error_code}")
            for pending in self._pending.values():
                if not pending.future.done():
                    pending.future.set_exception(error)
            if not self.session_ready.done():
                self.session_ready.set_exception(error)
        elif isinstance(event, StreamReset):
            group = self.groups.get(event.stream_id)
            if group is not None:
                group.reset = True
                group.reset_code = event.error_code
        for http_event in self.http.handle_event(event):
            self._on_http_event(http_event)

    def _on_http_event(self, event: H3Event) -> None:
        if isinstance(event, HeadersReceived) and event.stream_id == self.session_id:
            status = int(dict(event.headers).get(b":status", b"0"))
            if status == 200:
                self.session_ready.set_result(None)
            else:
                self._refusal = (status, bytearray())
                if event.stream_ended:
                    self._refuse()
        elif isinstance(event, DataReceived) and event.stream_id == self.session_id:
            if self._refusal is not None:
                self._refusal[1].extend(event.data)
                if event.stream_ended:
                    self._refuse()
        elif isinstance(event, DatagramReceived) and event.stream_id == self.session_id:
            self.datagrams.put_nowait(event.data)
        elif isinstance(event, WebTransportStreamDataReceived):
            if event.stream_id in self._pending:
                self._on_response_data(event)
            elif event.stream_id % 4 == 3:  # server-initiated unidirectional
                self._on_uni_data(event.stream_id, event.data, event.stream_ended)

    def _refuse(self) -> None:
        assert self._refusal is not None
        status, body = self._refusal
        if not self.session_ready.done():
            self.session_ready.set_exception(SessionRefused(status, body.decode(errors="replace")))

    def _on_response_data(self, event: WebTransportStreamDataReceived) -> None:
        pending = self._pending[event.stream_id]
        self.response_bytes_received += len(event.data)
        if pending.first_byte is None and event.data:
            pending.first_byte = time.monotonic()
        pending.buffer += event.data
        if not event.stream_ended:
            return
        del self._pending[event.stream_id]
        data = bytes(pending.buffer)
        try:
            header = protocol.decode_response_header(data)
        except ValueError as exc:
            pending.future.set_exception(exc)
            return
        body = data[protocol.RESPONSE_HEADER_BYTES :]
        finished = time.monotonic()
        pending.future.set_result(
            Response(header, body, pending.started, pending.first_byte or finished, finished)
        )

    def _on_uni_data(self, stream_id: int, data: bytes, ended: bool = False) -> None:
        group_buffer = self._group_buffers.get(stream_id)
        if group_buffer is not None or (
            stream_id not in self._uni_buffers
            and data[:1] == bytes([protocol.UniStreamType.LIVE_GROUP])
        ):
            self._on_group_data(stream_id, data, ended)
            return
        buffer = self._uni_buffers.get(stream_id)
        if buffer is None:
            kinds = (protocol.UniStreamType.TELEMETRY, protocol.UniStreamType.TELEMETRY_DEFLATE)
            if not data or data[0] not in kinds:
                return
            if data[0] == protocol.UniStreamType.TELEMETRY_DEFLATE:
                self._inflaters[stream_id] = zlib.decompressobj(-15)
            buffer = self._uni_buffers[stream_id] = bytearray()
            data = data[1:]
        inflater = self._inflaters.get(stream_id)
        buffer += inflater.decompress(data) if inflater is not None else data
        self.telemetry.extend(protocol.decode_telemetry_frames(buffer))

    def _on_group_data(self, stream_id: int, data: bytes, ended: bool) -> None:
        buffer = self._group_buffers.setdefault(stream_id, bytearray())
        buffer += data
        group = self.groups.get(stream_id)
        if group is None:
            if len(buffer) < protocol.GROUP_HEADER_BYTES:
                return
            header = protocol.decode_group_header(bytes(buffer))
            del buffer[: protocol.GROUP_HEADER_BYTES]
            group = self.groups[stream_id] = ReceivedGroup(header)
        now = time.monotonic()
        for first, frames, chunk in protocol.decode_chunks(buffer):
            group.chunks.append((first, frames, chunk, now))
        if ended:
            group.ended = True


class WebTransportClient:
    """`async with WebTransportClient.open(host, port, cc=...) as client: await client.get(...)`."""

    def __init__(self, connection: Any, proto: _ClientProtocol) -> None:
        self._connection = connection
        self._protocol = proto

    @property
    def telemetry(self) -> list[dict[str, Any]]:
        return self._protocol.telemetry

    @property
    def live_groups(self) -> list[ReceivedGroup]:
        """LIVE_GROUP streams received so far, by group sequence."""
        return sorted(self._protocol.groups.values(), key=lambda g: g.header.group)

    @property
    def datagrams(self) -> asyncio.Queue[bytes]:
        """The session's WebTransport datagrams as they arrive (live.fec fragments)."""
        return self._protocol.datagrams

    def send_datagram(self, payload: bytes) -> None:
        """Send one WebTransport datagram on the session (e.g. a LIVE_NACK)."""
        self._protocol.send_datagram(payload)

    @property
    def response_bytes_received(self) -> int:
        return self._protocol.response_bytes_received

    @property
    def largest_datagram_received(self) -> int:
        return self._protocol.largest_datagram_received

    @property
    def datagram_bytes_received(self) -> int:
        return self._protocol.datagram_bytes_received

    @property
    def quic(self) -> Any:
        return self._protocol.connection

    @classmethod
    def open(
        cls,
        host: str,
        port: int,
        *,
        cc: str | None = None,
        params: Mapping[str, str] | None = None,
        path: str = "/stream",
        timeout: float = 10.0,
    ) -> _OpenSession:
        query: dict[str, str] = dict(params or {})
        if cc is not None:
            query["cc"] = cc
        full_path = path + ("?" + urlencode(query) if query else "")
        return _OpenSession(host, port, full_path, timeout)

    async def get(self, request: Request) -> Response:
        return await self._protocol.request(protocol.encode_request(request))

    async def get_raw(self, payload: bytes) -> Response:
        """Send arbitrary request bytes (for testing the server's error handling)."""
        return await self._protocol.request(payload)

    async def manifest(self) -> Response:
        return await self.get(Request(Kind.MANIFEST))


class _OpenSession:
    def __init__(self, host: str, port: int, path: str, timeout: float) -> None:
        self._host, self._port, self._path, self._timeout = host, port, path, timeout
        self._context: Any = None

    async def __aenter__(self) -> WebTransportClient:
        configuration = QuicConfiguration(
            is_client=True, alpn_protocols=H3_ALPN, max_datagram_frame_size=65536
        )
        # The server's certificate is self-signed and pinned by hash in the browser; this
        # client runs only against loopback test servers, so it skips verification.
        configuration.verify_mode = ssl.CERT_NONE
        configuration.max_stream_data = 16 * 1024 * 1024
        configuration.max_data = 64 * 1024 * 1024
        self._context = connect(
            self._host, self._port, configuration=configuration, create_protocol=_ClientProtocol
        )
        proto: _ClientProtocol = await asyncio.wait_for(self._context.__aenter__(), self._timeout)
        authority = (
            f"[{self._host}]:{self._port}" if ":" in self._host else f"{self._host}:{self._port}"
        )
        proto.open_session(authority, self._path)
        try:
            await asyncio.wait_for(proto.session_ready, self._timeout)
        except BaseException:
            await self._context.__aexit__(None, None, None)
            raise
        return WebTransportClient(self._context, proto)

    async def __aexit__(self, *exc: object) -> None:
        await self._context.__aexit__(*exc)
