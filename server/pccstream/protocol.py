"""The pccstream wire protocol, version 1 (specified in `shared/PROTOCOL.md`).

Pure encoding and decoding, no I/O: the server and the tests use it, and the TypeScript
player implements the same spec; `shared/vectors/protocol.json` keeps both byte-exact.
"""

from __future__ import annotations

import enum
import json
import struct
from dataclasses import dataclass
from typing import Any

VERSION = 1
REQUEST_BYTES = 8
RESPONSE_HEADER_BYTES = 24
MAX_TELEMETRY_FRAME = 65536

_REQUEST = struct.Struct(">BBHI")
_RESPONSE_HEADER = struct.Struct(">BBBBHHIIQ")
_FRAME_LENGTH = struct.Struct(">I")
_GROUP_HEADER = struct.Struct(">BBBHIQ")  # stream type, version, reserved, rendition, group, µs
_CHUNK_HEADER = struct.Struct(">IHH")
GROUP_HEADER_BYTES = _GROUP_HEADER.size  # 17, the stream-type byte included


class Kind(enum.IntEnum):
    MANIFEST = 1
    INIT = 2
    SEGMENT = 3
    # The live channel (shared/PROTOCOL.md, "Live").
    LIVE_INFO = 4
    LIVE_INIT = 5
    SUBSCRIBE = 6


# SUBSCRIBE's segment field asking for the group being produced now.
LIVE_EDGE = 0xFFFF_FFFF
# WebTransport application error code of a group stream reset because it was superseded.
LIVE_SUPERSEDED = 1
# ... of a VOD response stream reset because the body failed after its header was sent.
VOD_BODY_FAILED = 2


class Status(enum.IntEnum):
    OK = 0
    UNKNOWN_RENDITION = 1
    UNKNOWN_SEGMENT = 2
    MALFORMED_REQUEST = 3
    REQUEST_TOO_LARGE = 4
    UNSUPPORTED_VERSION = 5
    INTERNAL_ERROR = 6
    UNAVAILABLE = 7


class UniStreamType(enum.IntEnum):
    TELEMETRY = 1
    # The same frames through one raw-deflate stream (RFC 1951), sync-flushed at least every
    # 100 ms; asked for with the session parameter `telemetry=deflate`.
    TELEMETRY_DEFLATE = 2
    # One live group: LiveGroupHeader, then chunks (LiveChunkHeader + CMAF chunk) until FIN.
    LIVE_GROUP = 3
    # A response the session's CONNECT asked for (`vod.first`): the same header and body as on
    # a request stream, sent without waiting for the request's round trip.
    PUSHED_RESPONSE = 4


class ProtocolError(Exception):
    """A request that cannot be served; `status` is the code to answer with."""

    def __init__(self, status: Status, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Request:
    kind: Kind
    rendition: int = 0
    segment: int = 0


@dataclass(frozen=True)
class ResponseHeader:
    status: Status
    kind: int
    rendition: int
    segment: int
    body_length: int
    server_time_us: int


def encode_request(request: Request) -> bytes:
    return _REQUEST.pack(VERSION, request.kind, request.rendition, request.segment)


def decode_request(data: bytes) -> Request:
    """Parse one complete request; raise `ProtocolError` naming what is wrong."""
    if len(data) > REQUEST_BYTES:
        raise ProtocolError(
            Status.REQUEST_TOO_LARGE,
            f"request is {len(data)} bytes; a request is exactly {REQUEST_BYTES} bytes",
        )
    if len(data) >= 1 and data[0] != VERSION:
        raise ProtocolError(
            Status.UNSUPPORTED_VERSION,
            f"protocol version {data[0]} is not supported; this server speaks {VERSION}",
        )
    if len(data) < REQUEST_BYTES:
        raise ProtocolError(
            Status.MALFORMED_REQUEST,
            f"request is {len(data)} bytes; a request is exactly {REQUEST_BYTES} bytes",
        )
    _, kind, rendition, segment = _REQUEST.unpack(data)
    try:
        parsed_kind = Kind(kind)
    except ValueError:
        raise ProtocolError(Status.MALFORMED_REQUEST, f"unknown request kind {kind}") from None
    return Request(parsed_kind, rendition, segment)


def encode_response_header(header: ResponseHeader) -> bytes:
    return _RESPONSE_HEADER.pack(
        VERSION,
        header.status,
        header.kind,
        0,
        header.rendition,
        0,
        header.segment,
        header.body_length,
        header.server_time_us,
    )


def decode_response_header(data: bytes) -> ResponseHeader:
    if len(data) < RESPONSE_HEADER_BYTES:
        raise ValueError(f"response header needs {RESPONSE_HEADER_BYTES} bytes, got {len(data)}")
    version, status, kind, _, rendition, _, segment, length, server_time_us = (
        _RESPONSE_HEADER.unpack_from(data)
    )
    if version != VERSION:
        raise ValueError(f"response has protocol version {version}, expected {VERSION}")
    return ResponseHeader(Status(status), kind, rendition, segment, length, server_time_us)


def encode_response(
    request: Request | None, status: Status, body: bytes, server_time_us: int
) -> bytes:
    """Header plus body; `request` is None when the request could not be parsed."""
    header = ResponseHeader(
        status=status,
        kind=int(request.kind) if request else 0,
        rendition=request.rendition if request else 0,
        segment=request.segment if request else 0,
        body_length=len(body),
        server_time_us=server_time_us,
    )
    return encode_response_header(header) + body


def encode_telemetry_frame(record: dict[str, Any]) -> bytes:
    payload = json.dumps(record, separators=(",", ":"), allow_nan=False).encode()
    if len(payload) > MAX_TELEMETRY_FRAME:
        raise ValueError(f"telemetry record is {len(payload)} bytes, over {MAX_TELEMETRY_FRAME}")
    return _FRAME_LENGTH.pack(len(payload)) + payload


def decode_telemetry_frames(buffer: bytearray) -> list[dict[str, Any]]:
    """Remove and return every complete frame at the start of `buffer`."""
    records: list[dict[str, Any]] = []
    while len(buffer) >= _FRAME_LENGTH.size:
        (length,) = _FRAME_LENGTH.unpack_from(buffer)
        if length > MAX_TELEMETRY_FRAME:
            raise ValueError(f"telemetry frame of {length} bytes is over {MAX_TELEMETRY_FRAME}")
        end = _FRAME_LENGTH.size + length
        if len(buffer) < end:
            break
        try:
            record = json.loads(bytes(buffer[_FRAME_LENGTH.size : end]))
        except RecursionError:  # nested deeper than json's stack: a ValueError like the rest
            raise ValueError("telemetry frame is nested too deeply") from None
        if not isinstance(record, dict):
            raise ValueError(f"telemetry frame holds a JSON {type(record).__name__}, not an object")
        records.append(record)
        del buffer[:end]
    return records


@dataclass(frozen=True)
class LiveGroupHeader:
    rendition: int
    group: int
    capture_us: int  # capture time of the group's first frame, µs since the Unix epoch


def encode_group_header(header: LiveGroupHeader) -> bytes:
    """The start of a LIVE_GROUP stream, stream-type byte included."""
    return _GROUP_HEADER.pack(
        UniStreamType.LIVE_GROUP, VERSION, 0, header.rendition, header.group, header.capture_us
    )


def decode_group_header(data: bytes) -> LiveGroupHeader:
    if len(data) < GROUP_HEADER_BYTES:
        raise ValueError(f"group header needs {GROUP_HEADER_BYTES} bytes, got {len(data)}")
    kind, version, _, rendition, group, capture_us = _GROUP_HEADER.unpack_from(data)
    if kind != UniStreamType.LIVE_GROUP:
        raise ValueError(f"stream type {kind} is not LIVE_GROUP ({UniStreamType.LIVE_GROUP})")
    if version != VERSION:
        raise ValueError(f"group header has protocol version {version}, expected {VERSION}")
    return LiveGroupHeader(rendition, group, capture_us)


def encode_chunk(first_frame: int, frames: int, chunk: bytes) -> bytes:
    """One chunk on a LIVE_GROUP stream: length, first frame in the group, frame count, bytes."""
    return _CHUNK_HEADER.pack(len(chunk), first_frame, frames) + chunk


def decode_chunks(buffer: bytearray) -> list[tuple[int, int, bytes]]:
    """Remove and return every complete (first_frame, frames, chunk) at the start of `buffer`."""
    out: list[tuple[int, int, bytes]] = []
    while len(buffer) >= _CHUNK_HEADER.size:
        length, first, frames = _CHUNK_HEADER.unpack_from(buffer)
        end = _CHUNK_HEADER.size + length
        if len(buffer) < end:
            break
        out.append((first, frames, bytes(buffer[_CHUNK_HEADER.size : end])))
        del buffer[:end]
    return out


def decode_last_chunks(buffer: bytearray) -> list[tuple[int, int, bytes]]:
    """`decode_chunks` for a stream that has ended: leftover bytes mean a truncated chunk."""
    chunks = decode_chunks(buffer)
    if buffer:
        raise ValueError(f"group stream ended inside a chunk ({len(buffer)} bytes left over)")
    return chunks
