"""The shared test vectors (`shared/vectors/protocol.json`): the web player checks the same file."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pccstream import protocol
from pccstream.protocol import Kind, ProtocolError, Request, Status
from tests.checkout import REPO_ROOT

VECTORS: dict[str, Any] = json.loads(
    (REPO_ROOT / "shared" / "vectors" / "protocol.json").read_text()
)


@pytest.mark.parametrize("vector", VECTORS["requests"], ids=lambda v: v["name"])
def test_request_vectors(vector: dict[str, Any]) -> None:
    decoded = vector["decoded"]
    request = Request(Kind[decoded["kind"]], decoded["rendition"], decoded["segment"])
    assert protocol.encode_request(request).hex() == vector["hex"]
    assert protocol.decode_request(bytes.fromhex(vector["hex"])) == request


@pytest.mark.parametrize("vector", VECTORS["invalid_requests"], ids=lambda v: v["name"])
def test_invalid_request_vectors(vector: dict[str, Any]) -> None:
    with pytest.raises(ProtocolError) as caught:
        protocol.decode_request(bytes.fromhex(vector["hex"]))
    assert caught.value.status == Status[vector["status"]] == vector["status_code"]
    assert str(caught.value)  # every refusal explains itself


@pytest.mark.parametrize("vector", VECTORS["responses"], ids=lambda v: v["name"])
def test_response_vectors(vector: dict[str, Any]) -> None:
    data = bytes.fromhex(vector["hex"])
    decoded = vector["decoded"]
    header = protocol.decode_response_header(data)
    assert header.status == Status[decoded["status"]] == decoded["status_code"]
    assert (header.kind, header.rendition, header.segment) == (
        decoded["kind"],
        decoded["rendition"],
        decoded["segment"],
    )
    assert header.body_length == decoded["body_length"]
    assert header.server_time_us == decoded["server_time_us"]
    body = data[protocol.RESPONSE_HEADER_BYTES :]
    assert body.hex() == decoded["body_hex"]
    request = Request(Kind(header.kind), header.rendition, header.segment) if header.kind else None
    assert protocol.encode_response(request, header.status, body, header.server_time_us) == data


@pytest.mark.parametrize("vector", VECTORS["telemetry_frames"], ids=lambda v: v["name"])
def test_telemetry_vectors(vector: dict[str, Any]) -> None:
    assert protocol.encode_telemetry_frame(vector["decoded"]).hex() == vector["hex"]
    buffer = bytearray(bytes.fromhex(vector["hex"]))
    assert protocol.decode_telemetry_frames(buffer) == [vector["decoded"]]
    assert buffer == b""


def test_telemetry_decoder_keeps_partial_frames() -> None:
    frames = b"".join(protocol.encode_telemetry_frame({"type": "sample", "i": i}) for i in range(3))
    buffer = bytearray()
    seen: list[dict[str, Any]] = []
    for offset in range(0, len(frames), 5):  # arrive in awkward 5-byte chunks
        buffer += frames[offset : offset + 5]
        seen += protocol.decode_telemetry_frames(buffer)
    assert [r["i"] for r in seen] == [0, 1, 2]


def test_oversized_telemetry_frame_is_refused() -> None:
    buffer = bytearray((protocol.MAX_TELEMETRY_FRAME + 1).to_bytes(4, "big"))
    with pytest.raises(ValueError, match="over"):
        protocol.decode_telemetry_frames(buffer)


@pytest.mark.parametrize("vector", VECTORS.get("live_groups", []), ids=lambda v: v["name"])
def test_live_group_vectors(vector: dict[str, Any]) -> None:
    decoded = vector["decoded"]
    header = protocol.LiveGroupHeader(decoded["rendition"], decoded["group"], decoded["capture_us"])
    chunks = [
        (c["first_frame"], c["frame_count"], bytes.fromhex(c["hex"])) for c in decoded["chunks"]
    ]
    encoded = protocol.encode_group_header(header) + b"".join(
        protocol.encode_chunk(first, count, data) for first, count, data in chunks
    )
    assert encoded.hex() == vector["hex"]
    data = bytes.fromhex(vector["hex"])
    assert data[0] == decoded["stream_type"] == protocol.UniStreamType.LIVE_GROUP
    assert data[1] == decoded["version"]
    assert protocol.decode_group_header(data) == header
    rest = bytearray(data[protocol.GROUP_HEADER_BYTES :])
    assert protocol.decode_chunks(rest) == chunks
    assert rest == b""


@pytest.mark.parametrize("vector", VECTORS.get("invalid_live_groups", []), ids=lambda v: v["name"])
def test_invalid_live_group_vectors(vector: dict[str, Any]) -> None:
    data = bytes.fromhex(vector["hex"])
    with pytest.raises(ValueError, match=vector["error"]):
        protocol.decode_group_header(data)
        protocol.decode_last_chunks(bytearray(data[protocol.GROUP_HEADER_BYTES :]))


def test_uni_stream_type_vectors() -> None:
    assert {t.name: int(t) for t in protocol.UniStreamType} == VECTORS["uni_stream_types"]


@pytest.mark.parametrize("vector", VECTORS["pushed_responses"], ids=lambda v: v["name"])
def test_pushed_response_vectors(vector: dict[str, Any]) -> None:
    data = bytes.fromhex(vector["hex"])
    decoded = vector["decoded"]
    assert data[0] == decoded["stream_type"] == protocol.UniStreamType.PUSHED_RESPONSE
    header = protocol.decode_response_header(data[1:])
    assert header.status == Status[decoded["status"]]
    assert header.kind == Kind[decoded["kind"]]
    assert (header.rendition, header.segment) == (decoded["rendition"], decoded["segment"])
    body = data[1 + protocol.RESPONSE_HEADER_BYTES :]
    assert body.hex() == decoded["body_hex"] and header.body_length == len(body)
