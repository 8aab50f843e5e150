"""Live over datagrams (`live.fec=K`, shared/PROTOCOL.md "Live over datagrams"): chunk
fragments with XOR parity, the viewer's NACKs, and the server's word that a group is gone.

Pure encoding and decoding, no I/O, so the server, the tests and the shared vectors
(`shared/vectors/live-datagrams.json`, which the TypeScript player checks too) agree byte for
byte. `ChunkAssembly` is the viewer's side of the rule; the server only fragments and answers
NACKs, but keeping the rebuild here documents what the parity layout must allow.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

LIVE_FRAGMENT_MAX = 1024
LIVE_CHUNK_MAX = 16 * 1024 * 1024
# The parity count is one byte on the wire.
LIVE_PARITY_MAX = 0xFF
FLAG_RETRANSMISSION = 0x01

# type, rendition, group, capture µs, chunk index, chunks in group, first frame, frames,
# chunk length, fragment index, data fragments, parity fragments, flags
_HEADER = struct.Struct(">BHIQHHHHIHHBB")
LIVE_DATAGRAM_HEADER_BYTES = _HEADER.size  # 33
_FLAGS_OFFSET = LIVE_DATAGRAM_HEADER_BYTES - 1
# type, rendition, group, chunk index, data fragments; then the bitmap
_NACK = struct.Struct(">BHIHH")
LIVE_NACK_HEADER_BYTES = _NACK.size  # 11
# type, rendition, group
_GONE = struct.Struct(">BHI")
LIVE_GONE_BYTES = _GONE.size  # 7


class LiveDatagramType(enum.IntEnum):
    LIVE_DATA = 1
    LIVE_PARITY = 2
    LIVE_NACK = 3
    LIVE_GONE = 4


class LiveDatagramError(ValueError):
    """A datagram whose fields disagree; the receiver drops and counts it."""


@dataclass(frozen=True)
class FragmentLayout:
    """How a chunk of `length` bytes is cut: `n` data fragments of `size` bytes (the last
    shorter) and `m` parity fragments of `size` bytes."""

    length: int
    n: int
    size: int
    m: int

    def data_length(self, index: int) -> int:
        return min(self.size, self.length - index * self.size)


def data_fragment_count(length: int) -> int:
    return -(-length // LIVE_FRAGMENT_MAX)


def fragment_layout(length: int, k: int) -> FragmentLayout:
    if not 1 <= length <= LIVE_CHUNK_MAX:
        raise LiveDatagramError(f"chunk length {length} is outside 1..{LIVE_CHUNK_MAX}")
    if k < 0:
        raise LiveDatagramError(f"K = {k}: the parity ratio is 0 or more")
    n = data_fragment_count(length)
    # The wire has one byte for m: a huge chunk at a small K gets the most parity it can carry.
    m = min(-(-n // k), LIVE_PARITY_MAX) if k > 0 else 0
    return FragmentLayout(length, n, -(-length // n), m)


@dataclass(frozen=True)
class FragmentHeader:
    kind: LiveDatagramType  # LIVE_DATA or LIVE_PARITY
    rendition: int
    group: int
    capture_us: int
    chunk_index: int
    chunks_in_group: int
    first_frame: int
    frames: int
    chunk_length: int
    index: int  # i for LIVE_DATA, p for LIVE_PARITY
    data_fragments: int  # n
    parity_fragments: int  # m
    retransmission: bool = False

    @property
    def layout(self) -> FragmentLayout:
        n = self.data_fragments
        return FragmentLayout(self.chunk_length, n, -(-self.chunk_length // n),
                              self.parity_fragments)

    @property
    def chunk_key(self) -> tuple[int, int, int]:
        return (self.rendition, self.group, self.chunk_index)


def encode_fragment(header: FragmentHeader, payload: bytes) -> bytes:
    return _HEADER.pack(
        header.kind, header.rendition, header.group, header.capture_us, header.chunk_index,
        header.chunks_in_group, header.first_frame, header.frames, header.chunk_length,
        header.index, header.data_fragments, header.parity_fragments,
        FLAG_RETRANSMISSION if header.retransmission else 0,
    ) + payload


def _xor_into(target: bytearray, data: bytes) -> None:
    # int.from_bytes makes the XOR one C-level operation instead of a Python loop per byte.
    width = len(target)
    mixed = int.from_bytes(target, "big") ^ int.from_bytes(data.ljust(width, b"\0"), "big")
    target[:] = mixed.to_bytes(width, "big")


def parity_payloads(chunk: bytes, layout: FragmentLayout) -> list[bytes]:
    parity = [bytearray(layout.size) for _ in range(layout.m)]
    for i in range(layout.n if layout.m else 0):
        _xor_into(parity[i % layout.m], chunk[i * layout.size:(i + 1) * layout.size])
    return [bytes(p) for p in parity]


def fragment_chunk(*, rendition: int, group: int, capture_us: int, chunk_index: int,
                   chunks_in_group: int, first_frame: int, frames: int, chunk: bytes,
                   k: int) -> list[bytes]:
    """The chunk's datagram payloads in sending order: the `n` data fragments, then the `m`
    parity fragments."""
    layout = fragment_layout(len(chunk), k)

    def header(kind: LiveDatagramType, index: int) -> FragmentHeader:
        return FragmentHeader(kind, rendition, group, capture_us, chunk_index, chunks_in_group,
                              first_frame, frames, layout.length, index, layout.n, layout.m)

    data = [encode_fragment(header(LiveDatagramType.LIVE_DATA, i),
                            chunk[i * layout.size:(i + 1) * layout.size])
            for i in range(layout.n)]
    parity = [encode_fragment(header(LiveDatagramType.LIVE_PARITY, p), payload)
              for p, payload in enumerate(parity_payloads(chunk, layout))]
    return data + parity


def as_retransmission(datagram: bytes) -> bytes:
    """The same LIVE_DATA datagram with the retransmission flag set."""
    if len(datagram) < LIVE_DATAGRAM_HEADER_BYTES:
        raise LiveDatagramError(f"datagram of {len(datagram)} bytes has no fragment header")
    flags = datagram[_FLAGS_OFFSET] | FLAG_RETRANSMISSION
    return datagram[:_FLAGS_OFFSET] + bytes((flags,)) + datagram[LIVE_DATAGRAM_HEADER_BYTES:]


def fragment_group(datagram: bytes) -> int | None:
    """The group of a LIVE_DATA or LIVE_PARITY datagram, else None; the sender's quick test
    for taking a superseded group's datagrams back, so no other field is checked."""
    if (len(datagram) < LIVE_DATAGRAM_HEADER_BYTES
            or datagram[0] not in (LiveDatagramType.LIVE_DATA, LiveDatagramType.LIVE_PARITY)):
        return None
    return int.from_bytes(datagram[3:7], "big")


def decode_fragment(data: bytes) -> tuple[FragmentHeader, bytes]:
    """The header and payload of a LIVE_DATA or LIVE_PARITY datagram; `LiveDatagramError`
    naming the first field that disagrees."""
    if len(data) < LIVE_DATAGRAM_HEADER_BYTES:
        raise LiveDatagramError(
            f"live datagram is {len(data)} bytes, shorter than its "
            f"{LIVE_DATAGRAM_HEADER_BYTES}-byte header")
    (kind, rendition, group, capture_us, chunk_index, chunks_in_group, first_frame, frames,
     length, index, n, m, flags) = _HEADER.unpack_from(data)
    if kind not in (LiveDatagramType.LIVE_DATA, LiveDatagramType.LIVE_PARITY):
        raise LiveDatagramError(
            f"live datagram type {kind} is not LIVE_DATA (1) or LIVE_PARITY (2)")
    if flags & ~FLAG_RETRANSMISSION:
        raise LiveDatagramError(f"live datagram flags {flags:#04x} set reserved bits")
    if chunk_index >= chunks_in_group:
        raise LiveDatagramError(
            f"chunk index {chunk_index} is not below the group's {chunks_in_group} chunks")
    if not 1 <= length <= LIVE_CHUNK_MAX:
        raise LiveDatagramError(f"chunk length {length} is outside 1..{LIVE_CHUNK_MAX}")
    if n != data_fragment_count(length):
        raise LiveDatagramError(
            f"n = {n} data fragments, but a chunk of {length} bytes has "
            f"{data_fragment_count(length)}")
    if m > n:
        raise LiveDatagramError(f"m = {m} parity fragments is more than n = {n}")
    header = FragmentHeader(LiveDatagramType(kind), rendition, group, capture_us, chunk_index,
                            chunks_in_group, first_frame, frames, length, index, n, m,
                            bool(flags & FLAG_RETRANSMISSION))
    layout = header.layout
    if kind == LiveDatagramType.LIVE_DATA:
        if index >= n:
            raise LiveDatagramError(f"data fragment index {index} is not below n = {n}")
        expected = layout.data_length(index)
    else:
        if index >= m:
            raise LiveDatagramError(f"parity fragment index {index} is not below m = {m}")
        expected = layout.size
    payload = data[LIVE_DATAGRAM_HEADER_BYTES:]
    if len(payload) != expected:
        raise LiveDatagramError(
            f"{header.kind.name} fragment {index} has a payload of {len(payload)} bytes, "
            f"expected {expected}")
    return header, bytes(payload)


@dataclass(frozen=True)
class LiveNack:
    """The viewer's request for data fragments again; `data_fragments` 0 (with no `missing`)
    asks for every data fragment of the chunk."""

    rendition: int
    group: int
    chunk_index: int
    data_fragments: int
    missing: tuple[int, ...] = ()


def encode_nack(nack: LiveNack) -> bytes:
    n = nack.data_fragments
    bitmap = bytearray(-(-n // 8))
    for i in nack.missing:
        if not 0 <= i < n:
            raise LiveDatagramError(f"missing fragment {i} is not below n = {n}")
        bitmap[i // 8] |= 1 << (i % 8)
    return _NACK.pack(LiveDatagramType.LIVE_NACK, nack.rendition, nack.group,
                      nack.chunk_index, n) + bytes(bitmap)


def decode_nack(data: bytes) -> LiveNack:
    if len(data) < LIVE_NACK_HEADER_BYTES:
        raise LiveDatagramError(
            f"LIVE_NACK is {len(data)} bytes, shorter than its {LIVE_NACK_HEADER_BYTES}-byte "
            f"header")
    kind, rendition, group, chunk_index, n = _NACK.unpack_from(data)
    if kind != LiveDatagramType.LIVE_NACK:
        raise LiveDatagramError(f"datagram type {kind} is not LIVE_NACK (3)")
    bitmap = data[LIVE_NACK_HEADER_BYTES:]
    if len(bitmap) != -(-n // 8):
        raise LiveDatagramError(
            f"LIVE_NACK for n = {n} needs a {-(-n // 8)}-byte bitmap, got {len(bitmap)}")
    missing = tuple(i for i in range(n) if bitmap[i // 8] >> (i % 8) & 1)
    if n % 8 and bitmap[-1] >> (n % 8):
        raise LiveDatagramError(f"LIVE_NACK bitmap names fragments at or beyond n = {n}")
    return LiveNack(rendition, group, chunk_index, n, missing)


@dataclass(frozen=True)
class LiveGone:
    """The server superseded `group`: it sends nothing more of it and answers no NACK for it."""

    rendition: int
    group: int


def encode_gone(gone: LiveGone) -> bytes:
    return _GONE.pack(LiveDatagramType.LIVE_GONE, gone.rendition, gone.group)


def decode_gone(data: bytes) -> LiveGone:
    if len(data) != LIVE_GONE_BYTES:
        raise LiveDatagramError(f"LIVE_GONE is {len(data)} bytes, not {LIVE_GONE_BYTES}")
    kind, rendition, group = _GONE.unpack(data)
    if kind != LiveDatagramType.LIVE_GONE:
        raise LiveDatagramError(f"datagram type {kind} is not LIVE_GONE (4)")
    return LiveGone(rendition, group)


class ChunkAssembly:
    """One chunk being received: fragments in, parity rebuilds, the chunk out when whole."""

    def __init__(self, first: FragmentHeader) -> None:
        self.header = first
        self.layout = first.layout
        self._data: list[bytes | None] = [None] * self.layout.n
        self._parity: list[bytes | None] = [None] * self.layout.m
        self.recovered = 0  # data fragments rebuilt from parity

    def add(self, header: FragmentHeader, payload: bytes) -> bool:
        """Keep a fragment (True if it was new); a fragment describing another chunk than the
        first one did raises `LiveDatagramError`."""
        first = self.header
        if (header.chunk_key, header.capture_us, header.chunks_in_group, header.first_frame,
                header.frames, header.chunk_length, header.parity_fragments) != (
                first.chunk_key, first.capture_us, first.chunks_in_group, first.first_frame,
                first.frames, first.chunk_length, first.parity_fragments):
            raise LiveDatagramError(
                f"fragment of chunk {header.chunk_key} disagrees with the chunk's first "
                f"fragment (length {header.chunk_length} vs {first.chunk_length}, m "
                f"{header.parity_fragments} vs {first.parity_fragments})")
        store = self._data if header.kind == LiveDatagramType.LIVE_DATA else self._parity
        if store[header.index] is not None:
            return False
        store[header.index] = payload
        self.recover()
        return True

    def recover(self) -> int:
        """Rebuild every data fragment that is alone missing in its parity class with the
        class's parity present; returns how many were rebuilt."""
        rebuilt = 0
        layout = self.layout
        for p, parity in enumerate(self._parity):
            if parity is None:
                continue
            members = range(p, layout.n, layout.m)
            missing = [i for i in members if self._data[i] is None]
            if len(missing) != 1:
                continue
            value = bytearray(parity)
            for i in members:
                fragment = self._data[i]
                if fragment is not None:
                    _xor_into(value, fragment)
            lost = missing[0]
            self._data[lost] = bytes(value[:layout.data_length(lost)])
            rebuilt += 1
        self.recovered += rebuilt
        return rebuilt

    def missing(self) -> list[int]:
        return [i for i, fragment in enumerate(self._data) if fragment is None]

    def chunk(self) -> bytes | None:
        """The chunk's bytes once every data fragment is here or rebuilt."""
        if any(fragment is None for fragment in self._data):
            return None
        return b"".join(fragment for fragment in self._data if fragment is not None)

