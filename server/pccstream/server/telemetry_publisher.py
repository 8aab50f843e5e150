"""A session's telemetry stream: `hello`, `sample` at 10 Hz, `mi` per monitor interval, and
link records, as length-prefixed JSON frames (optionally deflated) on one unidirectional
stream (shared/PROTOCOL.md)."""

from __future__ import annotations

import asyncio
import logging
import math
import zlib
from collections.abc import Callable
from typing import Any, Protocol

from pccstream import protocol
from pccstream.server.live_subscription import UniStreamWriter

log = logging.getLogger("pccstream.session")

TELEMETRY_ENCODINGS = ("json", "deflate")


class TelemetryCounters(Protocol):
    telemetry_bytes: int
    telemetry_records: int
    telemetry_frame_bytes: int


class TelemetryPublisher:
    """Publishes records on the session's telemetry stream and samples `source` every
    `interval_s` (a controller bug there must not end the stream)."""

    def __init__(self, *, session_id: int, writer: UniStreamWriter, counters: TelemetryCounters,
                 source: Callable[[], dict[str, Any] | None], interval_s: float,
                 elapsed_ms: Callable[[], float], encoding: str = "json") -> None:
        self.session_id = session_id
        self.writer = writer
        self.counters = counters
        self.source = source
        self.interval_s = interval_s
        self.elapsed_ms = elapsed_ms
        self.encoding = encoding
        self._stream: int | None = None
        self._task: asyncio.Task[None] | None = None
        self._deflate: Any = None  # zlib compressobj for "deflate"
        self._deflate_pending = False
        self._closed = False

    def start(self, hello: dict[str, Any]) -> None:
        """Open the stream, send `hello` and start sampling."""
        self._stream = self.writer.open_uni_stream(self.session_id)
        stream_type = protocol.UniStreamType.TELEMETRY
        if self.encoding == "deflate":
            stream_type = protocol.UniStreamType.TELEMETRY_DEFLATE
            self._deflate = zlib.compressobj(6, zlib.DEFLATED, -15, 9)
        self.writer.send(self._stream, bytes([stream_type]), False)
        self.publish(hello)
        self.flush()
        self._task = asyncio.ensure_future(self._sample_loop())

    def close(self) -> None:
        self._closed = True
        if self._task is not None:
            self._task.cancel()

    def publish(self, record: dict[str, Any]) -> None:
        """Send one telemetry record."""
        if self._closed or self._stream is None:
            return
        try:
            frame = protocol.encode_telemetry_frame(compact_record(record))
        except ValueError:
            log.exception("telemetry record not encodable: %r", record.get("type"))
            return
        self.counters.telemetry_frame_bytes += len(frame)
        self.counters.telemetry_records += 1
        if self._deflate is not None:
            self._send(self._deflate.compress(frame))
            self._deflate_pending = True
        else:
            self._send(frame)

    def flush(self) -> None:
        """Deflate: make everything published so far decodable by the client (sync flush)."""
        if self._deflate is not None and self._deflate_pending and not self._closed:
            self._deflate_pending = False
            self._send(self._deflate.flush(zlib.Z_SYNC_FLUSH))

    def _send(self, data: bytes) -> None:
        if data and self._stream is not None:
            self.counters.telemetry_bytes += len(data)
            self.writer.send(self._stream, data, False)

    async def _sample_loop(self) -> None:
        while not self._closed:
            await asyncio.sleep(self.interval_s)
            try:
                sample = self.source()
            except Exception:  # a controller bug must not end the stream
                log.exception("telemetry sample failed")
                sample = None
            if sample is not None:
                self.publish({"type": "sample", "t_ms": self.elapsed_ms(), **sample})
            self.flush()
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
