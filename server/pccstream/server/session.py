"""One viewer's WebTransport session: request streams in, responses and telemetry out.

A session never raises into the QUIC loop: a bad request is answered with an error status
on its own stream, an unexpected failure with INTERNAL_ERROR, and other sessions carry on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from pccstream import __version__, protocol
from pccstream.protocol import Kind, ProtocolError, Request, Status
from pccstream.server.live import LiveChannel
from pccstream.server.live_subscription import GroupWriter, LiveSubscription

log = logging.getLogger("pccstream.session")


class MediaLookup(Protocol):
    """What a session needs from the media directory."""

    def read(self, request: Request) -> bytes:
        """The body for a request, or raise `ProtocolError`."""
        ...


class StreamWriter(GroupWriter, Protocol):
    """The slice of the QUIC/H3 connection a session writes through (live groups need
    resets, priorities and the unsent test as well)."""


@dataclass(frozen=True)
class WithholdHook:
    """Test-only: hold back responses for segment >= `at_segment` for `seconds`, once."""

    at_segment: int
    seconds: float


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

    def __post_init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._t0 = self._loop.time()
        self._request_buffers: dict[int, bytearray] = {}
        self._refused_streams: set[int] = set()
        self._withhold_until: float | None = None
        self._withhold_done = False
        self._telemetry_stream: int | None = None
        self._telemetry_task: asyncio.Task[None] | None = None
        self._deflate: Any = None  # zlib compressobj for "deflate"
        self._deflate_pending = False
        self._closed = False
        self.opened_at = time.time()
        self.subscription: LiveSubscription | None = None

    @property
    def t0(self) -> float:
        """The session's time origin on the event loop's clock (`t_ms` = 0)."""
        return self._t0

    @property
    def closed(self) -> bool:
        return self._closed

    # --- lifecycle -------------------------------------------------------------------

    def start(self) -> None:
        self._telemetry_stream = self.writer.open_uni_stream(self.session_id)
        stream_type = protocol.UniStreamType.TELEMETRY
        if self.telemetry_encoding == "deflate":
            stream_type = protocol.UniStreamType.TELEMETRY_DEFLATE
            self._deflate = zlib.compressobj(6, zlib.DEFLATED, -15, 9)
        self.writer.send(self._telemetry_stream, bytes([stream_type]), False)
        self.publish(
            {
                "type": "hello",
                "session_id": str(self.session_id),
                "cc": self.cc_name,
                "cc_params": self.cc_params,
                "server_version": __version__,
                "t0_us": time.time_ns() // 1000,
                **self.hello_extra,
            }
        )
        self.flush_telemetry()
        self._telemetry_task = asyncio.ensure_future(self._sample_loop())

    def close(self) -> None:
        self._closed = True
        if self._telemetry_task is not None:
            self._telemetry_task.cancel()
        if self.subscription is not None:
            self.subscription.close()

    def live_info(self) -> dict[str, Any]:
        """Live counters for /api/sessions (empty without a subscription)."""
        sub = self.subscription
        if sub is None:
            return {}
        c = sub.counters
        return {
            "live_rendition": sub.rendition,
            "live_groups_opened": c.groups_opened,
            "live_groups_completed": c.groups_completed,
            "live_groups_dropped": c.groups_dropped,
            "live_chunks": c.chunks,
            "live_bytes": c.bytes,
        }

    def elapsed_ms(self) -> float:
        return (self._loop.time() - self._t0) * 1000.0

    # --- telemetry -------------------------------------------------------------------

    def publish(self, record: dict[str, Any]) -> None:
        """Send one telemetry record on the session's telemetry stream."""
        if self._closed or self._telemetry_stream is None:
            return
        try:
            frame = protocol.encode_telemetry_frame(compact_record(record))
        except ValueError:
            log.exception("telemetry record not encodable: %r", record.get("type"))
            return
        self.counters.telemetry_frame_bytes += len(frame)
        self.counters.telemetry_records += 1
        if self._deflate is not None:
            self._send_telemetry(self._deflate.compress(frame))
            self._deflate_pending = True
        else:
            self._send_telemetry(frame)

    def flush_telemetry(self) -> None:
        """Deflate: make everything published so far decodable by the client (sync flush)."""
        if self._deflate is not None and self._deflate_pending and not self._closed:
            self._deflate_pending = False
            self._send_telemetry(self._deflate.flush(zlib.Z_SYNC_FLUSH))

    def _send_telemetry(self, data: bytes) -> None:
        if data and self._telemetry_stream is not None:
            self.counters.telemetry_bytes += len(data)
            self.writer.send(self._telemetry_stream, data, False)

    async def _sample_loop(self) -> None:
        while not self._closed:
            await asyncio.sleep(self.telemetry_interval_s)
            try:
                sample = self.telemetry_source()
            except Exception:  # a controller bug must not end the stream
                log.exception("telemetry sample failed")
                sample = None
            if sample is not None:
                self.publish({"type": "sample", "t_ms": self.elapsed_ms(), **sample})
            self.flush_telemetry()
            self.writer.flush()

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
        self._serve(stream_id, request)

    def _serve(self, stream_id: int, request: Request) -> None:
        delay = self._withhold_delay(request)
        if delay > 0:
            self._loop.call_later(delay, self._serve_now, stream_id, request)
        else:
            self._serve_now(stream_id, request)

    def _withhold_delay(self, request: Request) -> float:
        now = self._loop.time()
        if (
            self.withhold is not None
            and not self._withhold_done
            and request.kind == protocol.Kind.SEGMENT
            and request.segment >= self.withhold.at_segment
        ):
            self._withhold_done = True
            self._withhold_until = now + self.withhold.seconds
            log.info(
                "session %d: withholding data for %.1f s (test hook)",
                self.session_id,
                self.withhold.seconds,
            )
        if self._withhold_until is not None and now < self._withhold_until:
            return self._withhold_until - now
        return 0.0

    def _serve_now(self, stream_id: int, request: Request) -> None:
        if self._closed:
            return
        try:
            if request.kind in (Kind.LIVE_INFO, Kind.LIVE_INIT, Kind.SUBSCRIBE):
                body = self._serve_live(request)
            else:
                body = self.media.read(request)
        except ProtocolError as exc:
            self._answer_error(stream_id, request, exc)
            return
        except Exception as exc:  # e.g. a file vanished: tell this viewer, keep serving
            log.exception("session %d: failed to serve %r", self.session_id, request)
            self._answer_error(
                stream_id, request, ProtocolError(Status.INTERNAL_ERROR, f"server error: {exc}")
            )
            return
        if request.kind != Kind.SUBSCRIBE:
            self.counters.media_bytes += len(body)
        if request.kind == Kind.SEGMENT:
            # A player that requests the next segment while the current one downloads
            # (prefetch) needs the current one first: older segments are sent first.
            self.writer.set_stream_priority(stream_id, -request.segment)
        self.writer.send(
            stream_id, protocol.encode_response(request, Status.OK, body, _now_us()), True
        )
        self.writer.flush()
        if request.kind == Kind.SUBSCRIBE:
            # After the answer, so the viewer knows the start group before group streams come.
            self._start_subscription()

    def _serve_live(self, request: Request) -> bytes:
        live = self.live
        if live is None:
            raise ProtocolError(
                Status.UNAVAILABLE, "this server has no live channel (start it with --live-media)"
            )
        if request.kind == Kind.LIVE_INFO:
            return live.info_json()
        if request.rendition >= len(live.renditions):
            raise ProtocolError(
                Status.UNKNOWN_RENDITION,
                f"live rendition {request.rendition} does not exist; the channel has "
                f"{len(live.renditions)} (0-{len(live.renditions) - 1})",
            )
        if request.kind == Kind.LIVE_INIT:
            return live.renditions[request.rendition].init
        return self._subscribe(live, request)

    def _subscribe(self, live: LiveChannel, request: Request) -> bytes:
        edge = live.live_edge_group()
        wanted = edge if request.segment == protocol.LIVE_EDGE else request.segment
        if wanted < edge - 1:
            raise ProtocolError(
                Status.UNAVAILABLE,
                f"group {wanted} is gone: the live edge is group {edge} (ask for {edge - 1} or "
                f"later, or {protocol.LIVE_EDGE:#x} for the live edge)",
            )
        if self.subscription is not None:
            start = self.subscription.switch(request.rendition)
        else:
            keep = self.live_keep_s if self.live_keep_s is not None else live.group_duration_s
            self.subscription = LiveSubscription(
                channel=live,
                session_id=self.session_id,
                writer=self.writer,
                rendition=request.rendition,
                start_group=wanted,
                keep_s=keep,
                on_media_bytes=self._count_media_bytes,
            )
            start = wanted
        body = json.dumps({"start_group": start, "rendition": request.rendition}).encode()
        return body

    def _count_media_bytes(self, size: int) -> None:
        self.counters.media_bytes += size

    def _start_subscription(self) -> None:
        if self.subscription is not None and not self._closed:
            self.subscription.start()

    def _answer_error(self, stream_id: int, request: Request | None, error: ProtocolError) -> None:
        self.counters.errors += 1
        log.info(
            "session %d stream %d: %s: %s", self.session_id, stream_id, error.status.name, error
        )
        body = str(error).encode()
        self.writer.send(
            stream_id, protocol.encode_response(request, error.status, body, _now_us()), True
        )
        self.writer.flush()


def compact_number(value: float, digits: int = 5) -> float | int | None:
    """`digits` significant digits, as an int when whole: telemetry needs no more, and every
    byte counts against the overhead budget (≤ 2 % of the media bytes). JSON has no NaN or
    infinity: a non-finite value becomes null."""
    if not math.isfinite(value):
        return None
    rounded = float(f"{value:.{digits}g}")
    return int(rounded) if rounded.is_integer() and abs(rounded) < 2**53 else rounded


def _digits(key: str) -> int:
    if key.endswith("_bps"):
        return 4  # a rate to 0.05 %
    if key == "utility":
        return 7  # probe pairs differ in the low digits
    return 5


def compact_record(record: dict[str, Any]) -> dict[str, Any]:
    """A copy with floats shortened (documented in shared/PROTOCOL.md): rates to 4
    significant digits, utility to 7, others to 5; `t_ms` to 0.1 ms. Integers are kept."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, float):
            if key == "t_ms" and math.isfinite(value):
                value = round(value, 1)
                out[key] = int(value) if value.is_integer() else value
            else:
                out[key] = compact_number(value, _digits(key))
        else:
            out[key] = value
    return out


def _now_us() -> int:
    return time.time_ns() // 1000
