"""The shared live-datagram vectors (`shared/vectors/live-datagrams.json`): the web player's
reassembler checks the same file. Rebuild it after a deliberate change with
`.venv/bin/python server/tests/test_live_datagram_vectors.py`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from pccstream import live_datagrams as ld
from pccstream.live_datagrams import ChunkAssembly, LiveDatagramError, LiveGone, LiveNack
from pccstream.paths import checkout_root

_root = checkout_root()
assert _root is not None, "the tests run from a pccstream checkout (editable install)"
VECTOR_FILE: Path = _root / "shared" / "vectors" / "live-datagrams.json"

# (name, rendition, group, capture_us, chunk_index, chunks_in_group, first_frame, frames,
#  length, k)
_CHUNKS: list[tuple[str, int, int, int, int, int, int, int, int, int]] = [
    ("tiny chunk, one fragment, K=8", 0, 7, 1_700_000_000_000_000, 0, 15, 0, 1, 100, 8),
    ("exactly 1024 bytes, K=4", 1, 42, 1_700_000_000_500_000, 3, 15, 3, 1, 1024, 4),
    ("1025 bytes, n=2 of 513 and 512, K=4", 2, 43, 1_700_000_001_000_000, 14, 15, 14, 1,
     1025, 4),
    ("5000 bytes, K=2, interleaved parity classes", 0, 0xFFFF_FFF0, 1_700_000_001_500_000, 1,
     3, 5, 5, 5000, 2),
    ("3000 bytes, K=0, no parity", 3, 100, 1_700_000_002_000_000, 0, 1, 0, 15, 3000, 0),
    ("2050 bytes, K=1, parity copies with padding", 1, 9, 1_700_000_002_500_000, 2, 4, 8, 4,
     2050, 1),
]

# (name, chunk name, datagram indices dropped)
_RECOVERIES: list[tuple[str, str, list[int]]] = [
    ("one data fragment lost, rebuilt from parity", _CHUNKS[3][0], [3]),
    ("two data fragments of one parity class lost", _CHUNKS[3][0], [0, 3]),
    ("only parity lost", _CHUNKS[3][0], [5, 6, 7]),
    ("a data fragment and its class's parity lost", _CHUNKS[3][0], [2, 7]),
    ("short last fragment rebuilt and cut to length", _CHUNKS[2][0], [1]),
    ("every data fragment lost, K=1", _CHUNKS[5][0], [0, 1, 2]),
    ("no parity, one data fragment lost", _CHUNKS[4][0], [1]),
    ("the only fragment lost, its parity arrives", _CHUNKS[0][0], [0]),
]

_NACKS: list[tuple[str, LiveNack]] = [
    ("two of five missing", LiveNack(0, 0xFFFF_FFF0, 1, 5, (0, 3))),
    ("nothing received: every fragment", LiveNack(3, 100, 0, 0, ())),
    ("ninth fragment of nine, two bitmap bytes", LiveNack(1, 42, 3, 9, (8,))),
    ("sixteen fragments, byte edges", LiveNack(2, 43, 14, 16, (0, 7, 8, 15))),
]


def chunk_content(length: int, salt: int) -> bytes:
    return bytes((i * 7 + salt) % 256 for i in range(length))


def _chunk_vector(spec: tuple[str, int, int, int, int, int, int, int, int, int]
                  ) -> dict[str, Any]:
    name, rendition, group, capture_us, chunk_index, chunks_in_group, first, frames, length, k = (
        spec)
    chunk = chunk_content(length, salt=chunk_index + rendition)
    datagrams = ld.fragment_chunk(
        rendition=rendition, group=group, capture_us=capture_us, chunk_index=chunk_index,
        chunks_in_group=chunks_in_group, first_frame=first, frames=frames, chunk=chunk, k=k)
    return {"name": name, "rendition": rendition, "group": group, "capture_us": capture_us,
            "chunk_index": chunk_index, "chunks_in_group": chunks_in_group,
            "first_frame": first, "frames": frames, "k": k, "chunk_hex": chunk.hex(),
            "datagrams_hex": [d.hex() for d in datagrams]}


def _reassemble(datagrams: list[bytes]) -> ChunkAssembly:
    assembly: ChunkAssembly | None = None
    for datagram in datagrams:
        header, payload = ld.decode_fragment(datagram)
        if assembly is None:
            assembly = ChunkAssembly(header)
        assembly.add(header, payload)
    assert assembly is not None
    return assembly


def _recovery_vector(name: str, chunk: dict[str, Any], drop: list[int]) -> dict[str, Any]:
    kept = [bytes.fromhex(d) for i, d in enumerate(chunk["datagrams_hex"]) if i not in drop]
    assembly = _reassemble(kept)
    return {"name": name, "chunk": chunk["name"], "drop": drop,
            "recoverable": assembly.chunk() is not None, "missing_data": assembly.missing()}


def _invalid_datagrams(chunks: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    two = bytes.fromhex(chunks[_CHUNKS[2][0]]["datagrams_hex"][0])  # 1025 bytes: n=2, m=1
    tiny = bytes.fromhex(chunks[_CHUNKS[0][0]]["datagrams_hex"][0])  # 100 bytes: n=1, m=1

    def patched(datagram: bytes, offset: int, value: bytes) -> bytes:
        return datagram[:offset] + value + datagram[offset + len(value):]

    cases = [
        ("shorter than the header", tiny[:20], "shorter"),
        ("unknown type 5", patched(tiny, 0, b"\x05"), "type"),
        ("a LIVE_GONE type is no fragment", patched(tiny, 0, b"\x04"), "type"),
        ("a LIVE_NACK type on the server's direction", patched(tiny, 0, b"\x03"), "type"),
        ("data fragment index i >= n", patched(two, 27, b"\x00\x02"), "index"),
        ("parity fragment index p >= m", patched(patched(tiny, 0, b"\x02"), 27, b"\x00\x01"),
         "index"),
        ("n inconsistent with the chunk length", patched(two, 29, b"\x00\x03"),
         "data fragments"),
        ("m more than n", patched(tiny, 31, b"\x02"), "parity fragments"),
        ("chunk length 0", patched(tiny, 23, b"\x00\x00\x00\x00"), "chunk length"),
        ("chunk index not below chunks in group", patched(tiny, 15, b"\x00\x0f"),
         "chunk index"),
        ("payload one byte short", tiny[:-1], "payload"),
        ("payload one byte long", tiny + b"\x00", "payload"),
        ("parity payload not S bytes", patched(two, 0, b"\x02")[:-1], "payload"),
        ("reserved flag bit set", patched(tiny, 32, b"\x02"), "reserved"),
    ]
    return [{"name": name, "hex": data.hex(), "error_contains": text}
            for name, data, text in cases]


def _invalid_nacks() -> list[dict[str, Any]]:
    good = ld.encode_nack(_NACKS[2][1])  # n = 9: two bitmap bytes
    cases = [
        ("shorter than the header", good[:10], "shorter"),
        ("not type 3", b"\x01" + good[1:], "type"),
        ("bitmap one byte short", good[:-1], "bitmap"),
        ("bitmap one byte long", good + b"\x00", "bitmap"),
        ("bit beyond n set", good[:-1] + b"\x03", "beyond"),
    ]
    return [{"name": name, "hex": data.hex(), "error_contains": text}
            for name, data, text in cases]


_GONES = [
    ("group 7 of rendition 0", LiveGone(0, 7)),
    ("largest rendition and group", LiveGone(0xFFFF, 0xFFFFFFFF)),
]


def _invalid_gones() -> list[dict[str, Any]]:
    good = ld.encode_gone(_GONES[0][1])
    cases = [
        ("one byte short", good[:-1], "bytes"),
        ("one byte long", good + b"\x00", "bytes"),
        ("not type 4", b"\x03" + good[1:], "type"),
    ]
    return [{"name": name, "hex": data.hex(), "error_contains": text}
            for name, data, text in cases]


def build_vectors() -> dict[str, Any]:
    chunks = [_chunk_vector(spec) for spec in _CHUNKS]
    by_name = {c["name"]: c for c in chunks}
    retransmitted = by_name[_CHUNKS[3][0]]
    return {
        "description": "Live over datagrams (shared/PROTOCOL.md, 'Live over datagrams'): each "
                       "chunk's datagram payloads in sending order (data fragments, then "
                       "parity), recoveries after dropping datagrams (indices into "
                       "datagrams_hex), LIVE_NACK and LIVE_GONE encodings, and datagrams a "
                       "receiver must refuse. Checked by "
                       "server/tests/test_live_datagram_vectors.py (which also rebuilds this "
                       "file) and by the web player's tests.",
        "fragment_max": ld.LIVE_FRAGMENT_MAX,
        "header_bytes": ld.LIVE_DATAGRAM_HEADER_BYTES,
        "types": {t.name: int(t) for t in ld.LiveDatagramType},
        "chunks": chunks,
        "retransmissions": [
            {"name": "data fragment 3 sent again for a NACK", "chunk": retransmitted["name"],
             "index": 3,
             "hex": ld.as_retransmission(bytes.fromhex(retransmitted["datagrams_hex"][3])).hex()},
        ],
        "recoveries": [_recovery_vector(name, by_name[chunk], drop)
                       for name, chunk, drop in _RECOVERIES],
        "nacks": [{"name": name, "rendition": nack.rendition, "group": nack.group,
                   "chunk_index": nack.chunk_index, "n": nack.data_fragments,
                   "missing": list(nack.missing), "hex": ld.encode_nack(nack).hex()}
                  for name, nack in _NACKS],
        "invalid_datagrams": _invalid_datagrams(by_name),
        "invalid_nacks": _invalid_nacks(),
        "gones": [{"name": name, "rendition": gone.rendition, "group": gone.group,
                   "hex": ld.encode_gone(gone).hex()} for name, gone in _GONES],
        "invalid_gones": _invalid_gones(),
    }


def _dump(vectors: dict[str, Any]) -> str:
    return json.dumps(vectors, indent=2) + "\n"


VECTORS: dict[str, Any] = json.loads(VECTOR_FILE.read_text()) if VECTOR_FILE.exists() else {}


def test_the_file_is_what_the_codec_produces() -> None:
    assert build_vectors() == VECTORS, f"rebuild with: python {Path(__file__).name}"
    assert VECTOR_FILE.read_text() == _dump(VECTORS)


@pytest.mark.parametrize("vector", VECTORS.get("chunks", []), ids=lambda v: v["name"])
def test_chunk_vectors_decode_and_reassemble(vector: dict[str, Any]) -> None:
    chunk = bytes.fromhex(vector["chunk_hex"])
    datagrams = [bytes.fromhex(d) for d in vector["datagrams_hex"]]
    layout = ld.fragment_layout(len(chunk), vector["k"])
    assert len(datagrams) == layout.n + layout.m
    for position, datagram in enumerate(datagrams):
        header, payload = ld.decode_fragment(datagram)
        parity = position >= layout.n
        assert header.kind == (ld.LiveDatagramType.LIVE_PARITY if parity
                               else ld.LiveDatagramType.LIVE_DATA)
        assert header.index == (position - layout.n if parity else position)
        assert (header.rendition, header.group, header.capture_us, header.chunk_index,
                header.chunks_in_group, header.first_frame, header.frames) == (
            vector["rendition"], vector["group"], vector["capture_us"], vector["chunk_index"],
            vector["chunks_in_group"], vector["first_frame"], vector["frames"])
        assert (header.chunk_length, header.data_fragments, header.parity_fragments) == (
            len(chunk), layout.n, layout.m)
        assert not header.retransmission
        assert ld.encode_fragment(header, payload) == datagram
        assert len(datagram) <= ld.LIVE_DATAGRAM_HEADER_BYTES + ld.LIVE_FRAGMENT_MAX
    assert _reassemble(datagrams).chunk() == chunk


def test_the_layouts_the_protocol_names() -> None:
    by_name = {v["name"]: v for v in VECTORS["chunks"]}
    five = bytes.fromhex(by_name[_CHUNKS[3][0]]["chunk_hex"])
    assert ld.fragment_layout(len(five), 2) == ld.FragmentLayout(5000, 5, 1000, 3)
    assert ld.fragment_layout(1025, 4) == ld.FragmentLayout(1025, 2, 513, 1)
    assert ld.fragment_layout(1025, 4).data_length(1) == 512
    assert ld.fragment_layout(3000, 0).m == 0


@pytest.mark.parametrize("vector", VECTORS.get("recoveries", []), ids=lambda v: v["name"])
def test_recovery_vectors(vector: dict[str, Any]) -> None:
    chunk = next(c for c in VECTORS["chunks"] if c["name"] == vector["chunk"])
    kept = [bytes.fromhex(d) for i, d in enumerate(chunk["datagrams_hex"])
            if i not in vector["drop"]]
    assembly = _reassemble(kept)
    assert assembly.missing() == vector["missing_data"]
    assert (assembly.chunk() is not None) == vector["recoverable"]
    if vector["recoverable"]:
        assert assembly.chunk() == bytes.fromhex(chunk["chunk_hex"])


def test_retransmission_vector() -> None:
    (vector,) = VECTORS["retransmissions"]
    chunk = next(c for c in VECTORS["chunks"] if c["name"] == vector["chunk"])
    original_header, original_payload = ld.decode_fragment(
        bytes.fromhex(chunk["datagrams_hex"][vector["index"]]))
    header, payload = ld.decode_fragment(bytes.fromhex(vector["hex"]))
    assert header.retransmission and payload == original_payload
    assert header == ld.FragmentHeader(**{**original_header.__dict__, "retransmission": True})


@pytest.mark.parametrize("vector", VECTORS.get("nacks", []), ids=lambda v: v["name"])
def test_nack_vectors(vector: dict[str, Any]) -> None:
    nack = LiveNack(vector["rendition"], vector["group"], vector["chunk_index"], vector["n"],
                    tuple(vector["missing"]))
    assert ld.encode_nack(nack).hex() == vector["hex"]
    assert ld.decode_nack(bytes.fromhex(vector["hex"])) == nack


@pytest.mark.parametrize("vector", VECTORS.get("invalid_datagrams", []),
                         ids=lambda v: v["name"])
def test_invalid_datagram_vectors(vector: dict[str, Any]) -> None:
    with pytest.raises(LiveDatagramError, match=vector["error_contains"]):
        ld.decode_fragment(bytes.fromhex(vector["hex"]))


@pytest.mark.parametrize("vector", VECTORS.get("gones", []), ids=lambda v: v["name"])
def test_gone_vectors(vector: dict[str, Any]) -> None:
    gone = LiveGone(vector["rendition"], vector["group"])
    assert ld.encode_gone(gone).hex() == vector["hex"]
    assert ld.decode_gone(bytes.fromhex(vector["hex"])) == gone


@pytest.mark.parametrize("vector", VECTORS.get("invalid_gones", []), ids=lambda v: v["name"])
def test_invalid_gone_vectors(vector: dict[str, Any]) -> None:
    with pytest.raises(LiveDatagramError, match=vector["error_contains"]):
        ld.decode_gone(bytes.fromhex(vector["hex"]))


@pytest.mark.parametrize("vector", VECTORS.get("invalid_nacks", []), ids=lambda v: v["name"])
def test_invalid_nack_vectors(vector: dict[str, Any]) -> None:
    with pytest.raises(LiveDatagramError, match=vector["error_contains"]):
        ld.decode_nack(bytes.fromhex(vector["hex"]))


def test_a_fragment_of_another_chunk_is_refused_by_the_assembly() -> None:
    chunks = {v["name"]: v for v in VECTORS["chunks"]}
    first, _ = ld.decode_fragment(bytes.fromhex(chunks[_CHUNKS[3][0]]["datagrams_hex"][0]))
    other, payload = ld.decode_fragment(bytes.fromhex(chunks[_CHUNKS[3][0]]["datagrams_hex"][1]))
    assembly = ChunkAssembly(first)
    with pytest.raises(LiveDatagramError, match="disagrees"):
        assembly.add(ld.FragmentHeader(**{**other.__dict__, "parity_fragments": 2}), payload)


def test_parity_count_stops_at_what_one_byte_carries() -> None:
    layout = ld.fragment_layout(300 * ld.LIVE_FRAGMENT_MAX, 1)
    assert (layout.n, layout.m) == (300, 255)


if __name__ == "__main__":
    VECTOR_FILE.write_text(_dump(build_vectors()))
    print(f"wrote {VECTOR_FILE}", file=sys.stderr)
