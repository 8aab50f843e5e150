"""Reading a media segment one CMAF chunk at a time (`read_chunks`), and the codec string of an
init segment, on the vectors the web player also checks (shared/vectors/cmaf-chunks.json)."""

from __future__ import annotations

import io
import json

import pytest

from pccstream.media.mp4 import RAW_PIECE_BYTES, parse_init, read_chunks
from tests.checkout import REPO_ROOT

VECTORS = json.loads((REPO_ROOT / "shared" / "vectors" / "cmaf-chunks.json").read_text())


@pytest.mark.parametrize("case", VECTORS["chunks"], ids=lambda c: c["name"])
def test_pieces_end_at_each_mdat(case: dict[str, object]) -> None:
    stream = bytes.fromhex(str(case["stream"]))
    pieces = list(read_chunks(io.BytesIO(stream), len(stream)))
    assert [p.hex() for p in pieces] == case["chunks"]


def test_only_what_is_yielded_has_been_read() -> None:
    case = VECTORS["chunks"][0]
    stream = bytes.fromhex(case["stream"])
    file = io.BytesIO(stream)
    pieces = read_chunks(file, len(stream))
    first = next(pieces)
    assert file.tell() == len(first)  # the second chunk is still on disk


def test_bytes_that_are_not_boxes_go_out_in_fixed_pieces() -> None:
    data = b"\xff" * 200_000  # a "box" of 4 GiB overruns
    pieces = list(read_chunks(io.BytesIO(data), len(data)))
    assert b"".join(pieces) == data
    assert all(len(p) <= RAW_PIECE_BYTES for p in pieces)
    assert len(pieces) == -(-len(data) // RAW_PIECE_BYTES)


def test_a_file_shorter_than_announced_is_an_error() -> None:
    stream = bytes.fromhex(VECTORS["chunks"][2]["stream"])
    with pytest.raises(ValueError, match="early"):
        list(read_chunks(io.BytesIO(stream[:-5]), len(stream)))


@pytest.mark.parametrize("case", VECTORS["init_codecs"], ids=lambda c: c["name"])
def test_init_codec_vectors(case: dict[str, str]) -> None:
    assert parse_init(bytes.fromhex(case["init"]), case["name"]).codec == case["codec"]
