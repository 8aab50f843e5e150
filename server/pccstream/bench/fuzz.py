"""Property-based fuzzing of every decoder that takes outside input (#17).

Each target draws inputs (mutations of a valid input and arbitrary ones) and feeds them to one
decoder; the decoder must end in a correct answer (checked: it round-trips, or it is what the
input says) or in its clear error (the documented exception type with a one-line message).
Anything else (another exception, a wrong answer, a multi-line or empty message) fails.
Used by `tests/reliability/test_fuzz.py` (a few hundred cases) and `pccstream bench soak`.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from pccstream import protocol
from pccstream.emulator.scenario import load_scenario
from pccstream.emulator.trace import parse_trace
from pccstream.errors import UserError
from pccstream.media.manifest import load_manifest
from pccstream.protocol import Kind, ProtocolError, Request
from pccstream.server.link_status import LinkStatusProtocol
from pccstream.server.webtransport import EndpointSettings, parse_session_query
from pccstream.webrtc.signalling import Rooms


class WrongAnswer(AssertionError):
    """The decoder answered, and the answer is wrong."""


@dataclass
class Outcomes:
    ok: int = 0
    refused: int = 0
    failures: list[str] = field(default_factory=list)
    refusals: Counter[str] = field(default_factory=Counter)

    def to_json(self) -> dict[str, Any]:
        return {"cases": self.ok + self.refused + len(self.failures), "ok": self.ok,
                "refused": self.refused, "failures": self.failures[:10],
                "top_refusals": [m for m, _ in self.refusals.most_common(3)]}


@dataclass(frozen=True)
class Target:
    name: str
    inputs: st.SearchStrategy[Any]
    # Returns normally for a correct answer, raises `refusal` for a clear error.
    check: Callable[[Any], None]
    refusal: tuple[type[Exception], ...]


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers(-2**63, 2**64) | st.floats() | st.text(
        max_size=20)
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.text(max_size=12), inner, max_size=4), max_leaves=12)


def _deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def _mutated(valid: bytes) -> st.SearchStrategy[bytes]:
    """`valid` with a byte changed, bytes cut or bytes appended."""
    def flip(data: tuple[int, int]) -> bytes:
        at, value = data
        b = bytearray(valid)
        b[at % len(b)] = value
        return bytes(b)
    return st.one_of(
        st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)).map(flip),
        st.integers(0, len(valid)).map(lambda n: valid[:n]),
        st.binary(max_size=16).map(lambda tail: valid + tail),
    )


def _mutated_document(valid: dict[str, Any]) -> st.SearchStrategy[Any]:
    """`valid` with one field (at any depth) replaced by an arbitrary JSON value, or removed."""
    paths: list[tuple[Any, ...]] = []

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        paths.append(path)
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, (*path, k))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, (*path, i))
    walk(valid, ())

    def apply(choice: tuple[int, Any, bool]) -> Any:
        index, value, remove = choice
        doc = json.loads(json.dumps(valid))
        path = paths[index % len(paths)]
        if not path:
            return value
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if remove and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = value
        return doc
    return st.tuples(st.integers(0, 10_000), _json_values(), st.booleans()).map(apply)


# --- targets --------------------------------------------------------------------------------

def _check_request(data: bytes) -> None:
    request = protocol.decode_request(data)
    if protocol.encode_request(request) != data:
        raise WrongAnswer(f"{data.hex()} decoded to {request} which encodes differently")


def _check_telemetry(data: bytes) -> None:
    buffer = bytearray(data)
    before = len(buffer)
    records = protocol.decode_telemetry_frames(buffer)
    if not all(isinstance(r, dict) for r in records):
        raise WrongAnswer("a telemetry record that is not an object")
    consumed = data[: before - len(buffer)]
    again = b"".join(protocol.encode_telemetry_frame(r) for r in records)
    if json.loads(b"[" + b",".join(_frame_payloads(again)) + b"]") != json.loads(
            b"[" + b",".join(_frame_payloads(consumed)) + b"]"):
        raise WrongAnswer("telemetry records do not match their frames")


def _frame_payloads(data: bytes) -> list[bytes]:
    out = []
    while data:
        length = int.from_bytes(data[:4], "big")
        out.append(data[4:4 + length])
        data = data[4 + length:]
    return out


def _check_live_group(data: bytes) -> None:
    header = protocol.decode_group_header(data)
    reencoded = bytearray(protocol.encode_group_header(header))
    reencoded[2] = data[2]  # the reserved byte is ignored
    if reencoded != data[: protocol.GROUP_HEADER_BYTES]:
        raise WrongAnswer(f"group header {header} does not re-encode to its bytes")
    rest = bytearray(data[protocol.GROUP_HEADER_BYTES:])
    chunks = protocol.decode_last_chunks(rest)
    if b"".join(protocol.encode_chunk(*c) for c in chunks) != data[protocol.GROUP_HEADER_BYTES:]:
        raise WrongAnswer("chunks do not re-encode to the stream")


_QUERY_SETTINGS = EndpointSettings(media=None,  # type: ignore[arg-type]  # never read here
                                   default_cc="cubic", enable_test_hooks=True)


def _check_session_query(query: str) -> None:
    wanted = parse_session_query(query, _QUERY_SETTINGS)
    if wanted.live_keep_s is not None and not 0 <= wanted.live_keep_s <= 60:
        raise WrongAnswer(f"live.keep_ms accepted as {wanted.live_keep_s} s")
    if wanted.vod_first is not None:
        rendition, segment = wanted.vod_first
        if not (0 <= rendition <= 0xFFFF and segment >= 0):
            raise WrongAnswer(f"vod.first accepted as {wanted.vod_first}")


class _LinkStatusProbe:
    def __init__(self) -> None:
        self.receiver = LinkStatusProtocol(lambda: [])

    def __call__(self, data: bytes) -> None:
        received = self.receiver.received
        self.receiver.datagram_received(data, ("127.0.0.1", 9))
        if self.receiver.received != received + 1:
            raise WrongAnswer("a datagram was not counted")


_ROOMS = Rooms()


def _check_signalling(case: tuple[str, str, bytes]) -> None:
    method, path, body = case
    reply = _ROOMS.route(method, path, {"wait": "0"}, body)
    if reply.status >= HTTPStatus.INTERNAL_SERVER_ERROR:
        raise WrongAnswer(f"{method} {path}: {reply.status}")
    if reply.body:
        document = json.loads(reply.body)
        if reply.status >= 400 and not str(document.get("error", "")).strip():
            raise WrongAnswer(f"{method} {path}: {reply.status} without a reason")
    if len(_ROOMS) > 50:
        _ROOMS.close()


def _check_trace(text: str) -> None:
    trace = parse_trace(text, "fuzz.trace")
    stamps = [int(line) for line in text.splitlines()]
    if sum(trace.counts) != len(stamps) or trace.times[-1] != stamps[-1]:
        raise WrongAnswer("trace does not hold the lines given")


class _FileDecoder:
    """Writes each case as a file in a scratch directory and loads it."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="pccstream-fuzz-"))


class _ScenarioCheck(_FileDecoder):
    VALID: dict[str, Any] = {
        "name": "fuzz", "description": "d", "seed": 1,
        "params": {"rate_mbps": 12, "at": 3},
        "link": {"rate_mbps": "rate_mbps", "delay_ms": 15, "queue": "45kB", "loss": 0.01},
        "timeline": [{"at_s": "at", "direction": "both", "loss": 1.0},
                     {"every_s": 5, "rtt_ms": [10, 100], "rate_mbps": [2, 20]}],
    }

    def __call__(self, document: Any) -> None:
        path = self.dir / "scenario.json"
        path.write_text(json.dumps(document))
        load_scenario(str(path))


class _ManifestCheck(_FileDecoder):
    def __init__(self) -> None:
        super().__init__()
        (self.dir / "r").mkdir()
        (self.dir / "r" / "init.mp4").write_bytes(b"i" * 10)
        (self.dir / "r" / "seg-00000.m4s").write_bytes(b"s" * 100)
        self.valid: dict[str, Any] = {
            "version": 1, "duration_s": 2.0, "segment_seconds": 2.0,
            "renditions": [{
                "id": "r", "bitrate_bps": 300000, "width": 320, "height": 240,
                "codec": "avc1.64001f", "mime": 'video/mp4; codecs="avc1.64001f"',
                "init": {"file": "r/init.mp4", "bytes": 10},
                "segments": [{"file": "r/seg-00000.m4s", "start_s": 0.0, "duration_s": 2.0,
                              "bytes": 100}]}]}

    def __call__(self, document: Any) -> None:
        (self.dir / "manifest.json").write_text(json.dumps(document))
        load_manifest(self.dir)


def targets() -> list[Target]:
    valid_request = protocol.encode_request(Request(Kind.SEGMENT, 2, 7))
    valid_subscribe = protocol.encode_request(Request(Kind.SUBSCRIBE, 0, protocol.LIVE_EDGE))
    frame = protocol.encode_telemetry_frame({"type": "sample", "t_ms": 1.5, "cwnd": 12000})
    group = protocol.encode_group_header(protocol.LiveGroupHeader(1, 42, 1_700_000_000_000_000))
    group += protocol.encode_chunk(0, 1, b"moof...mdat") + protocol.encode_chunk(1, 2, b"xy")
    status = json.dumps({"upstream": [["127.0.0.1", 5000]], "capacity_bps": 12e6,
                         "queue_bytes": 100, "queue_packets": 1, "base_rtt_ms": 30,
                         "loss": 0.0}).encode()
    scenario = _ScenarioCheck()
    manifest = _ManifestCheck()
    trace_lines = st.lists(st.integers(0, 5000), min_size=1, max_size=30).map(
        lambda xs: "\n".join(str(x) for x in sorted(xs)))
    return [
        Target("requests", st.binary(max_size=12) | _mutated(valid_request),
               _check_request, (ProtocolError,)),
        Target("live_subscriptions", _mutated(valid_subscribe) | st.builds(
            lambda r, s: protocol.encode_request(Request(Kind.SUBSCRIBE, r, s)),
            st.integers(0, 0xFFFF), st.integers(0, 0xFFFF_FFFF)),
            _check_request, (ProtocolError,)),
        Target("telemetry_frames", st.binary(max_size=64) | _mutated(frame) | st.integers(
            1, 5000).map(lambda d: len(_deep(d)).to_bytes(4, "big") + _deep(d)),
            _check_telemetry, (ValueError,)),
        Target("live_group_streams", st.binary(max_size=48) | _mutated(group),
               _check_live_group, (ValueError,)),
        Target("session_queries", st.text(max_size=60) | st.sampled_from([
            "cc=vivace&cc.t=abc", "live.keep_ms=soon", "live.keep_ms=nan", "test.withhold_at=x",
            "telemetry=gzip", "cc=nosuch", "live.nope=1", "test.withhold_s=1e9",
            "vod.first=0:0", "vod.first=65536:0", "vod.first=-1:2", "vod.first=0:99999999999",
            "vod.first=1:", "vod.manifest=2", "vod.manifest=1&vod.first=3:4", "vod.nope=1"]),
            _check_session_query, (UserError,)),
        Target("link_status_records", st.binary(max_size=64) | _mutated(status) | st.integers(
            1, 100_000).map(_deep) | _mutated_document(json.loads(status)).map(
            lambda d: json.dumps(d).encode()), _LinkStatusProbe(), ()),
        Target("signalling_bodies", st.tuples(
            st.sampled_from(["GET", "POST", "DELETE", "PUT"]),
            st.sampled_from(["room/offer", "room/answer", "room", "../x/offer", "r" * 70,
                             "room/nope"]) | st.text(max_size=20),
            st.none() | st.binary(max_size=64) | _mutated_document(
                {"type": "offer", "sdp": "v=0\r\n"}).map(lambda d: json.dumps(d).encode())
            | st.integers(1, 100_000).map(_deep)),
            _check_signalling, ()),
        Target("manifests", _mutated_document(manifest.valid), manifest, (UserError,)),
        Target("scenario_files", _mutated_document(_ScenarioCheck.VALID), scenario,
               (UserError,)),
        Target("traces", st.text(alphabet="0123456789 \n-x", max_size=60) | trace_lines,
               _check_trace, (UserError,)),
    ]


# A fuzz run is not a test of the strategies: slow or large inputs are the point.
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much,
          HealthCheck.large_base_example]


def run_target(target: Target, max_examples: int, seed: int = 0) -> Outcomes:
    """Feed `max_examples` inputs to one target; returns how each ended."""
    outcomes = Outcomes()

    @settings(max_examples=max_examples, derandomize=True, database=None, deadline=None,
              suppress_health_check=_QUIET, phases=(Phase.generate,))
    @given(target.inputs)
    def case(value: Any) -> None:
        try:
            target.check(value)
        except target.refusal as exc:
            message = str(exc)
            if not message.strip() or "\n" in message:
                outcomes.failures.append(f"{target.name}: unclear error {message!r}")
            else:
                outcomes.refused += 1
                outcomes.refusals[message[:80]] += 1
            return
        except Exception as exc:  # the failure being hunted: record it, keep going
            outcomes.failures.append(f"{target.name}: {type(exc).__name__}: {exc}"[:300]
                                     + f" on {value!r}"[:200])
            return
        outcomes.ok += 1

    del seed  # derandomize: hypothesis seeds from the test itself, so runs repeat
    case()
    return outcomes


def run_all(cases_per_target: int) -> dict[str, Any]:
    results: dict[str, dict[str, Any]] = {}
    for target in targets():
        started = time.monotonic()
        results[target.name] = run_target(target, cases_per_target).to_json()
        results[target.name]["seconds"] = round(time.monotonic() - started, 1)
    return {
        "cases": sum(r["cases"] for r in results.values()),
        "failures": sum(len(r["failures"]) for r in results.values()),
        "targets": results,
    }
