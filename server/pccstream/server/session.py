"""One viewer's WebTransport session: request streams in, responses and telemetry out.

The session frames requests and answers them; what it answers with comes from its VOD
handler (`vod.py`) or live handler (`live_handler.py`), and its telemetry goes out through
its `TelemetryPublisher`. A session never raises into the QUIC loop: a bad request is answered
with an error status on its own stream, an unexpected failure with INTERNAL_ERROR, and other
sessions carry on.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from pccstream import __version__, protocol
from pccstream.protocol import Kind, ProtocolError, Request, Status
from pccstream.server.live import LiveChannel
from pccstream.server.live_handler import LIVE_KINDS, LiveHandler
from pccstream.server.live_parity import LiveFec, LossCounts
from pccstream.server.live_subscription import (
    GroupWriter,
    LiveSubscription,
    webtransport_error_code,
)
from pccstream.server.telemetry_publisher import TelemetryPublisher
from pccstream.server.vod import (
    MediaLookup,
    VodHandler,
    WithholdHook,
    WithholdingLookup,
    off_the_loop,
    read_pieces,
)

log = logging.getLogger("pccstream.session")

# Every session's CONNECT is stream 0 of its own QUIC connection, so `session_id` (the
# WebTransport session id, which streams are opened on) repeats across viewers; this counter
# names each session of the server process uniquely.
_unique_ids = itertools.count(1)


def _next_unique_id() -> str:
    return str(next(_unique_ids))


class StreamWriter(GroupWriter, Protocol):
    """The slice of the QUIC/H3 connection a session writes through (live groups need
    resets, priorities and the unsent test as well)."""

    def boost_written(self, stream_id: int, priority: int) -> None: ...


@dataclass
class SessionCounters:
    requests: int = 0
    errors: int = 0
    media_bytes: int = 0
    telemetry_bytes: int = 0
    telemetry_records: int = 0
    # Telemetry frame bytes before compression (equal to telemetry_bytes without deflate).
    telemetry_frame_bytes: int = 0

    @property
    def telemetry_overhead(self) -> float:
        """Telemetry bytes as a fraction of media bytes (0 before any media)."""
        return self.telemetry_bytes / self.media_bytes if self.media_bytes else 0.0


@dataclass
class ViewerSession:
    # The WebTransport session id: the CONNECT stream's id, 0 on every connection.
    session_id: int
    media: MediaLookup
    writer: StreamWriter
    cc_name: str
    cc_params: dict[str, str]
    telemetry_source: Callable[[], dict[str, Any] | None]
    telemetry_interval_s: float = 0.1
    withhold: WithholdHook | None = None
    counters: SessionCounters = field(default_factory=SessionCounters)
    # The QUIC peer's (host, port): link records from an emulator are routed by it.
    peer: tuple[str, int] | None = None
    # Extra fields for the `hello` record (e.g. where the session's qlog will be).
    hello_extra: dict[str, Any] = field(default_factory=dict)
    # "json": TELEMETRY stream (frames as they are); "deflate": TELEMETRY_DEFLATE.
    telemetry_encoding: str = "json"
    live: LiveChannel | None = None
    live_keep_s: float | None = None
    # live.fec=K or "auto": live groups as datagrams with XOR parity (None: on streams).
    live_fec: LiveFec | None = None
    # The connection's (bytes sent, bytes lost) so far: live.fec=auto follows it.
    loss_counts: LossCounts | None = None
    # (rendition, segment) whose init and segment responses start with the session (vod.first).
    vod_first: tuple[int, int] | None = None
    # vod.manifest=1: the manifest is pushed at session start (startRendition=abr needs it first).
    vod_manifest: bool = False
    # What `hello` and /api/sessions call `session_id`, and what link records are keyed by.
    unique_id: str = field(default_factory=_next_unique_id)

    def __post_init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._t0 = self._loop.time()
        self._request_buffers: dict[int, bytearray] = {}
        self._refused_streams: set[int] = set()
        self._closed = False
        self._live_info_at_close: dict[str, Any] = {}
        self._serving: set[asyncio.Task[None]] = set()
        self.opened_at = time.time()
        self.telemetry = TelemetryPublisher(
            session_id=self.session_id, writer=self.writer, counters=self.counters,
            source=self.telemetry_source, interval_s=self.telemetry_interval_s,
            elapsed_ms=self.elapsed_ms, encoding=self.telemetry_encoding)
        lookup = off_the_loop(self.media)
        if self.withhold is not None:
            lookup = WithholdingLookup(lookup, self.withhold, session_id=self.session_id)
        self.vod = VodHandler(lookup, self.writer)
        self.live_handler = LiveHandler(
            live=self.live, session_id=self.session_id, writer=self.writer,
            keep_s=self.live_keep_s, on_media_bytes=self._count_media_bytes,
            fec=self.live_fec, loss_counts=self.loss_counts)

    @property
    def t0(self) -> float:
        """The session's time origin on the event loop's clock (`t_ms` = 0)."""
        return self._t0

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def subscription(self) -> LiveSubscription | None:
        return self.live_handler.subscription

    # --- lifecycle -------------------------------------------------------------------

    def start(self) -> None:
        self.telemetry.start({
            "type": "hello",
            "session_id": self.unique_id,
            "cc": self.cc_name,
            "cc_params": self.cc_params,
            "server_version": __version__,
            "t0_us": time.time_ns() // 1000,
            **self.hello_extra,
        })
        if self.vod_first is not None:
            rendition, segment = self.vod_first
            # The init segment first: its stream is opened (and so prioritized) first.
            self.push(Request(Kind.INIT, rendition, 0))
            self.push(Request(Kind.SEGMENT, rendition, segment))
        if self.vod_manifest:
            self.push(Request(Kind.MANIFEST))

    def push(self, request: Request) -> None:
        """Answer `request` on a PUSHED_RESPONSE stream, as if it had arrived on its own."""
        stream_id = self.writer.open_uni_stream(self.session_id)
        self.writer.send(stream_id, bytes([protocol.UniStreamType.PUSHED_RESPONSE]), False)
        self.counters.requests += 1
        task = asyncio.ensure_future(self._serve_vod(stream_id, request))
        self._serving.add(task)
        task.add_done_callback(self._serving.discard)

    def close(self) -> None:
        """Stop sending, and let go of the connection: the server keeps recently closed
        sessions for /api/sessions, and each reference to the connection would keep its
        whole QUIC state (buffers, streams, keys) alive with it."""
        if self._closed:
            return
        self._closed = True
        self.telemetry.close()
        self.live_handler.close()
        self._live_info_at_close = self.live_handler.info()
        detached = _DetachedWriter()
        self.writer = detached
        self.telemetry.writer = detached
        self.vod.writer = detached
        self.live_handler.writer = detached
        self.live_handler.subscription = None
        # It reads the controller, which reaches the connection (its event sink).
        self.loss_counts = None
        self.live_handler.loss_counts = None
        self.telemetry_source = _no_sample
        self.telemetry.source = _no_sample
        self._request_buffers.clear()
        self._refused_streams.clear()

    def live_info(self) -> dict[str, Any]:
        """Live counters for /api/sessions (empty without a subscription)."""
        if self._closed:
            return self._live_info_at_close
        return self.live_handler.info()

    def elapsed_ms(self) -> float:
        return (self._loop.time() - self._t0) * 1000.0

    def publish(self, record: dict[str, Any]) -> None:
        """Send one telemetry record on the session's telemetry stream."""
        self.telemetry.publish(record)

    def on_datagram(self, payload: bytes) -> None:
        """A WebTransport datagram of this session (the viewer's NACKs)."""
        if not self._closed:
            self.live_handler.on_datagram(payload)

    # --- requests --------------------------------------------------------------------

    def on_stream_data(self, stream_id: int, data: bytes, ended: bool) -> None:
        if stream_id in self._refused_streams:
            return
        buffer = self._request_buffers.setdefault(stream_id, bytearray())
        buffer += data
        if len(buffer) > protocol.REQUEST_BYTES:
            # Answer at once: waiting for FIN would let a client make us buffer forever.
            self._request_buffers.pop(stream_id)
            self._refused_streams.add(stream_id)
            self._answer_error(
                stream_id,
                None,
                ProtocolError(
                    Status.REQUEST_TOO_LARGE,
                    f"request is over {protocol.REQUEST_BYTES} bytes; "
                    f"a request is exactly {protocol.REQUEST_BYTES} bytes",
                ),
            )
            return
        if not ended:
            return
        raw = bytes(self._request_buffers.pop(stream_id))
        self.counters.requests += 1
        try:
            request = protocol.decode_request(raw)
        except ProtocolError as exc:
            self._answer_error(stream_id, None, exc)
            return
        if request.kind in LIVE_KINDS:
            self._serve_live(stream_id, request)
        else:
            task = asyncio.ensure_future(self._serve_vod(stream_id, request))
            self._serving.add(task)
            task.add_done_callback(self._serving.discard)

    def _serve_live(self, stream_id: int, request: Request) -> None:
        try:
            body = self.live_handler.body(request)
        except Exception as exc:
            self._answer_failure(stream_id, request, exc)
            return
        if request.kind != Kind.SUBSCRIBE:
            self.counters.media_bytes += len(body)
        self._answer(stream_id, request, body)
        self.live_handler.answered(request)

    async def _serve_vod(self, stream_id: int, request: Request) -> None:
        try:
            body = await self.vod.body(request)
        except Exception as exc:
            if not self._closed:
                self._answer_failure(stream_id, request, exc)
            return
        if self._closed:
            return
        self.vod.prioritize(stream_id, request)
        header = protocol.ResponseHeader(
            Status.OK, int(request.kind), request.rendition, request.segment, body.length,
            _now_us())
        self.writer.send(stream_id, protocol.encode_response_header(header), False)
        # Each piece (a CMAF chunk of a segment) goes out as soon as it is read.
        sent = 0
        try:
            async for piece in read_pieces(body):
                if self._closed:
                    return
                if sent + len(piece) > body.length:
                    raise ValueError(f"more than the {body.length} bytes announced")
                self.writer.send(stream_id, piece, False)
                if sent == 0:
                    self.vod.first_piece_written(stream_id, request)
                self.writer.flush()
                sent += len(piece)
                self.counters.media_bytes += len(piece)
            if sent != body.length:
                raise ValueError(f"{sent} of the {body.length} bytes announced")
            self.writer.send(stream_id, b"", True)
            self.writer.flush()
        except Exception as exc:
            if self._closed:
                return
            # The header is out, so no error status can follow: end the stream abruptly.
            log.error("session %s: %r failed after %d bytes: %s", self.unique_id, request,
                      sent, exc)
            self.counters.errors += 1
            try:
                self.writer.reset_stream(
                    stream_id, webtransport_error_code(protocol.VOD_BODY_FAILED))
                self.writer.flush()
            except Exception:  # the stream is already gone (e.g. the viewer stopped it)
                log.debug("session %s: could not reset stream %d", self.unique_id, stream_id)

    def _answer(self, stream_id: int, request: Request, body: bytes) -> None:
        self.writer.send(
            stream_id, protocol.encode_response(request, Status.OK, body, _now_us()), True
        )
        self.writer.flush()

    def _answer_failure(self, stream_id: int, request: Request, exc: Exception) -> None:
        if isinstance(exc, ProtocolError):
            self._answer_error(stream_id, request, exc)
            return
        # e.g. a file vanished: tell this viewer, keep serving
        log.error("session %s: failed to serve %r", self.unique_id, request, exc_info=exc)
        self._answer_error(
            stream_id, request, ProtocolError(Status.INTERNAL_ERROR, f"server error: {exc}")
        )

    def _count_media_bytes(self, size: int) -> None:
        self.counters.media_bytes += size

    def _answer_error(self, stream_id: int, request: Request | None, error: ProtocolError) -> None:
        self.counters.errors += 1
        log.info(
            "session %s stream %d: %s: %s", self.unique_id, stream_id, error.status.name, error
        )
        body = str(error).encode()
        self.writer.send(
            stream_id, protocol.encode_response(request, error.status, body, _now_us()), True
        )
        self.writer.flush()


class _DetachedWriter:
    """What a closed session writes through: nothing reaches the wire."""

    def open_uni_stream(self, session_id: int) -> int:
        raise RuntimeError("the session is closed")

    def send(self, stream_id: int, data: bytes, end_stream: bool) -> None:
        pass

    def flush(self) -> None:
        pass

    def reset_stream(self, stream_id: int, error_code: int) -> None:
        pass

    def has_unsent(self, stream_id: int) -> bool:
        return False

    def set_stream_priority(self, stream_id: int, priority: int | None) -> None:
        pass

    def boost_written(self, stream_id: int, priority: int) -> None:
        pass

    def send_datagram(self, session_id: int, payload: bytes) -> None:
        pass

    def send_datagrams_first(self, session_id: int, payloads: Sequence[bytes]) -> None:
        pass

    def drop_queued_datagrams(self, session_id: int, doomed: Callable[[bytes], bool]) -> int:
        return 0


def _no_sample() -> dict[str, Any] | None:
    return None


def _now_us() -> int:
    return time.time_ns() // 1000
