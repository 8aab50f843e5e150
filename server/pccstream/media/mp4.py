"""Just enough ISO-BMFF parsing to describe what the encoder actually produced.

Reading the boxes (rather than trusting the encoder options or ffmpeg's MPD) gives the
exact codec configuration for the RFC 6381 string and the exact duration of each segment.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from pccstream.errors import UserError

_SAMPLE_IS_NON_SYNC = 0x0001_0000


@dataclass(frozen=True)
class InitInfo:
    timescale: int
    codec: str  # RFC 6381, e.g. avc1.64001f
    width: int
    height: int
    default_sample_duration: int
    default_sample_flags: int


@dataclass(frozen=True)
class SegmentInfo:
    base_decode_time: int  # in the track timescale
    duration: int  # sum of sample durations, in the track timescale
    sample_count: int
    starts_with_sync_sample: bool


def _boxes(data: bytes, start: int = 0, end: int | None = None) -> Iterator[tuple[str, int, int]]:
    """Yield (type, payload_start, box_end) for each box in data[start:end]."""
    end = len(data) if end is None else end
    pos = start
    while pos + 8 <= end:
        size, kind = struct.unpack_from(">I4s", data, pos)
        header = 8
        if size == 1:
            if pos + 16 > end:
                raise ValueError("truncated 64-bit box header")
            (size,) = struct.unpack_from(">Q", data, pos + 8)
            header = 16
        elif size == 0:
            size = end - pos
        if size < header or pos + size > end:
            raise ValueError(f"box {kind!r} at offset {pos} overruns its parent")
        yield kind.decode("latin-1"), pos + header, pos + size
        pos += size


def _child(data: bytes, path: list[str], start: int = 0, end: int | None = None) -> tuple[int, int]:
    for kind in path:
        for child, payload, box_end in _boxes(data, start, end):
            if child == kind:
                start, end = payload, box_end
                break
        else:
            raise ValueError(f"no {kind!r} box")
    assert end is not None
    return start, end


def codec_string(entry: str, config: bytes) -> str:
    """RFC 6381 codec string from a sample entry type and its configuration box payload."""
    if entry in ("avc1", "avc3"):
        # avcC: version, AVCProfileIndication, profile_compatibility, AVCLevelIndication.
        return f"{entry}.{config[1]:02x}{config[2]:02x}{config[3]:02x}"
    if entry == "vp09":
        # vpcC is a FullBox: 4 bytes version/flags, profile, level, bitDepth(4)|...
        profile, level, bits = config[4], config[5], config[6] >> 4
        return f"vp09.{profile:02d}.{level:02d}.{bits:02d}"
    if entry == "av01":
        # av1C: marker|version, seq_profile(3)|seq_level_idx_0(5), tier|high_bd|twelve_bit|...
        profile, level = config[1] >> 5, config[1] & 0x1F
        tier = "H" if config[2] & 0x80 else "M"
        depth = 12 if config[2] & 0x20 else (10 if config[2] & 0x40 else 8)
        return f"av01.{profile}.{level:02d}{tier}.{depth:02d}"
    raise ValueError(f"unsupported sample entry {entry!r}")


_CONFIG_BOX = {"avc1": "avcC", "avc3": "avcC", "vp09": "vpcC", "av01": "av1C"}


def parse_init(data: bytes, where: str) -> InitInfo:
    """Describe a CMAF init segment (ftyp + moov with one video track)."""
    try:
        moov = _child(data, ["moov"])
        mdhd = _child(data, ["trak", "mdia", "mdhd"], *moov)
        version = data[mdhd[0]]
        offset = mdhd[0] + (20 if version == 1 else 12)
        (timescale,) = struct.unpack_from(">I", data, offset)
        stsd = _child(data, ["trak", "mdia", "minf", "stbl", "stsd"], *moov)
        entry, payload, entry_end = next(_boxes(data, stsd[0] + 8, stsd[1]))
        width, height = struct.unpack_from(">HH", data, payload + 24)
        config_kind = _CONFIG_BOX.get(entry)
        if config_kind is None:
            raise ValueError(f"unsupported sample entry {entry!r}")
        cfg = _child(data, [config_kind], payload + 78, entry_end)
        codec = codec_string(entry, data[cfg[0] : cfg[1]])
        trex = _child(data, ["mvex", "trex"], *moov)
        default_duration, _size, default_flags = struct.unpack_from(">III", data, trex[0] + 12)
    except (ValueError, IndexError, struct.error, StopIteration) as exc:
        raise UserError(f"{where}: not a usable CMAF init segment ({exc})") from None
    if timescale <= 0:
        raise UserError(f"{where}: track timescale is 0")
    return InitInfo(
        timescale=timescale,
        codec=codec,
        width=width,
        height=height,
        default_sample_duration=default_duration,
        default_sample_flags=default_flags,
    )


def parse_segment(data: bytes, init: InitInfo, where: str) -> SegmentInfo:
    """Describe a CMAF media segment: start, duration and whether it opens with a keyframe."""
    base: int | None = None
    duration = 0
    count = 0
    first_flags: int | None = None
    try:
        for kind, moof_start, moof_end in _boxes(data):
            if kind != "moof":
                continue
            for traf_kind, traf_start, traf_end in _boxes(data, moof_start, moof_end):
                if traf_kind != "traf":
                    continue
                default_duration = init.default_sample_duration
                default_flags = init.default_sample_flags
                for box, start, _end in _boxes(data, traf_start, traf_end):
                    if box == "tfhd":
                        (tf_flags,) = struct.unpack_from(">I", data, start)
                        pos = start + 8  # version/flags + track_ID
                        if tf_flags & 0x01:
                            pos += 8
                        if tf_flags & 0x02:
                            pos += 4
                        if tf_flags & 0x08:
                            (default_duration,) = struct.unpack_from(">I", data, pos)
                            pos += 4
                        if tf_flags & 0x10:
                            pos += 4
                        if tf_flags & 0x20:
                            (default_flags,) = struct.unpack_from(">I", data, pos)
                    elif box == "tfdt" and base is None:
                        if data[start] == 1:
                            (base,) = struct.unpack_from(">Q", data, start + 4)
                        else:
                            (base,) = struct.unpack_from(">I", data, start + 4)
                    elif box == "trun":
                        (tr_flags, samples) = struct.unpack_from(">II", data, start)
                        pos = start + 8
                        if tr_flags & 0x01:
                            pos += 4
                        first_sample_flags: int | None = None
                        if tr_flags & 0x04:
                            (first_sample_flags,) = struct.unpack_from(">I", data, pos)
                            pos += 4
                        for i in range(samples):
                            sample_duration = default_duration
                            sample_flags = default_flags
                            if tr_flags & 0x100:
                                (sample_duration,) = struct.unpack_from(">I", data, pos)
                                pos += 4
                            if tr_flags & 0x200:
                                pos += 4
                            if tr_flags & 0x400:
                                (sample_flags,) = struct.unpack_from(">I", data, pos)
                                pos += 4
                            if tr_flags & 0x800:
                                pos += 4
                            if i == 0 and first_sample_flags is not None:
                                sample_flags = first_sample_flags
                            if first_flags is None:
                                first_flags = sample_flags
                            duration += sample_duration
                        count += samples
    except (ValueError, IndexError, struct.error) as exc:
        raise UserError(f"{where}: not a usable CMAF media segment ({exc})") from None
    if base is None or count == 0 or first_flags is None:
        raise UserError(f"{where}: not a usable CMAF media segment (no samples)")
    return SegmentInfo(
        base_decode_time=base,
        duration=duration,
        sample_count=count,
        starts_with_sync_sample=not first_flags & _SAMPLE_IS_NON_SYNC,
    )


def fragments(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of each `moof` + `mdat` pair (a CMAF chunk) in a media segment; other
    top-level boxes (styp, sidx) are skipped. Raises ValueError for a moof without its mdat."""
    boxes = list(_boxes(data))
    out: list[tuple[int, int]] = []
    for i, (kind, _payload, end) in enumerate(boxes):
        if kind != "moof":
            continue
        if i + 1 >= len(boxes) or boxes[i + 1][0] != "mdat":
            raise ValueError(f"the moof ending at offset {end} is not followed by its mdat")
        start = boxes[i - 1][2] if i else 0  # top-level boxes are contiguous
        out.append((start, boxes[i + 1][2]))
    return out


# Pieces of a segment that is not a sequence of MP4 boxes (read_chunks).
RAW_PIECE_BYTES = 64 * 1024


def read_chunks(file: BinaryIO, length: int) -> Iterator[bytes]:
    """The first `length` bytes of a media segment file, one CMAF chunk at a time: each piece
    ends with an `mdat` (boxes before a `moof`, such as styp, sidx, prft, travel with it), and
    whatever follows the last mdat is one last piece. Reads only what it yields, so a server
    sends the first chunk without reading the rest. From a box header that does not fit in
    `length` on, the bytes are not boxes and go out in RAW_PIECE_BYTES pieces. Raises
    ValueError if the file is shorter than `length`."""
    pending: list[bytes] = []
    pos = 0
    while pos < length:
        head = _read_exactly(file, min(8, length - pos))
        size, kind = struct.unpack(">I4s", head) if len(head) == 8 else (0, b"")
        if size == 1 and pos + 16 <= length:
            head += _read_exactly(file, 8)
            (size,) = struct.unpack(">Q", head[8:])
        elif size == 0 and kind:
            size = length - pos
        if len(head) < 8 or size < len(head) or pos + size > length:
            yield from _raw_pieces(file, b"".join(pending) + head, length - pos - len(head))
            return
        pending += [head, _read_exactly(file, size - len(head))]
        pos += size
        if kind == b"mdat":
            yield b"".join(pending)
            pending = []
    if pending:
        yield b"".join(pending)


def _raw_pieces(file: BinaryIO, first: bytes, remaining: int) -> Iterator[bytes]:
    piece = first
    while remaining > 0 or piece:
        take = min(remaining, max(0, RAW_PIECE_BYTES - len(piece)))
        piece += _read_exactly(file, take)
        remaining -= take
        yield piece
        piece = b""


def _read_exactly(file: BinaryIO, n: int) -> bytes:
    data = file.read(n)
    if len(data) != n:
        raise ValueError(f"file ended {n - len(data)} bytes early")
    return data


def tfdt_value_offset(fragment: bytes) -> int:
    """Offset of the first traf's tfdt baseMediaDecodeTime in a moof + mdat pair; only the
    64-bit (version 1) form, so a value can be rewritten in place."""
    moof = _child(fragment, ["moof"])
    tfdt = _child(fragment, ["traf", "tfdt"], *moof)
    if fragment[tfdt[0]] != 1:
        raise ValueError("tfdt is version 0 (32-bit); live needs version 1")
    return tfdt[0] + 4
